package main

import (
	"database/sql"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/store/storetest"
)

// The backup and restore commands of docs/deploy.md, run as written: a
// dump of a marketplace with traffic, restored into an empty database,
// verifies with the keys of --data; with another authority key it does
// not.
func TestRestoreVerifies(t *testing.T) {
	db := storetest.SchemaDSN(t)
	data := trafficIn(t, db)
	u, err := url.Parse(db)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	base := storetest.PostgresDSN(t)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	restored := "crtx_restore_" + strings.ToLower(crtx.RandomBase62(10))
	if _, err := admin.Exec("CREATE DATABASE " + restored); err != nil {
		t.Fatal(err)
	}
	defer admin.Exec("DROP DATABASE " + restored + " WITH (FORCE)")
	target := *u
	target.Path, target.RawQuery = "/"+restored, ""
	q := u.Query()
	q.Del("search_path")
	pg := *u
	pg.RawQuery = q.Encode()

	doc, err := os.ReadFile("../../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	_, backups, _ := strings.Cut(string(doc), "## Backups")
	_, block, ok := strings.Cut(backups, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	if !ok || !strings.Contains(block, "pg_restore") {
		t.Fatal("docs/deploy.md's Backups has no commands")
	}
	bin := filepath.Dir(crtxdBinary(t))
	dir := t.TempDir()
	sh := func(line, keys string) (string, error) {
		cmd := exec.Command("sh", "-c", strings.ReplaceAll(line, "/etc/crtx", keys))
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "PG="+pg.String(), "SCHEMA="+schema, "PG_RESTORED="+target.String())
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	lines := strings.Split(strings.TrimSpace(block), "\n")
	var out string
	for _, line := range lines {
		if out, err = sh(line, data); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
	}
	if !strings.Contains(out, "mainnet: ok") || !strings.Contains(out, "devnet: ok") {
		t.Fatalf("the restored ledger:\n%s", out)
	}
	// The restored ledger verifies with its own authority key only.
	other := t.TempDir()
	if out, err := exec.Command(crtxdBinary(t), "init", "--data", other).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := sh(lines[len(lines)-1], other); err == nil || !strings.Contains(out, "signature does not verify against the ledger authority key") {
		t.Errorf("the restore verified with another authority key:\n%s", out)
	}
}
