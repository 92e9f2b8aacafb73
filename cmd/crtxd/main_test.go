package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/keyfile"
	"github.com/crtx-market/crtx/store/postgres"
	"github.com/crtx-market/crtx/store/storetest"
	_ "modernc.org/sqlite"
)

var ctx = context.Background()

func crtxd(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code := run(ctx, args, &out, &out)
	return code, out.String()
}

// withTraffic returns a data folder whose ledgers hold deposits, airdrops
// and a withdrawal, all sealed.
func withTraffic(t *testing.T) string { return trafficIn(t, "") }

// trafficIn is withTraffic on the store db names (SQLite in the folder
// when empty).
func trafficIn(t *testing.T, db string) string {
	data := t.TempDir()
	cfg := daemon.Defaults()
	cfg.RateLimitIP = 0 // tests sign in often from one address
	cfg.Addr, cfg.Data, cfg.DB, cfg.BlockInterval = "127.0.0.1:0", data, db, 10*time.Millisecond
	store := []string{"--data", data}
	if db != "" {
		store = append(store, "--db", db)
	}
	cfg.LogOutput = &bytes.Buffer{}
	d, err := daemon.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(d.URL, "")
	for i := range 5 {
		_, pub, _ := ed25519.GenerateKey(nil)
		if _, err := c.Airdrop(ctx, crtx.Address(pub.Public().(ed25519.PublicKey)), crtx.USDC(i+1)*250_000); err != nil {
			t.Fatal(err)
		}
	}
	w := crtx.Address(must(ed25519.GenerateKey(nil)))
	if code, out := crtxd(t, append([]string{"ledger", "deposit", "--environment", "mainnet", "--wallet", w, "--amount", "10.5"}, store...)...); code != 0 {
		t.Fatalf("deposit: %d %s", code, out)
	}
	if code, out := crtxd(t, append([]string{"ledger", "withdraw", "--environment", "mainnet", "--wallet", w, "--amount", "0.5"}, store...)...); code != 0 || !strings.Contains(out, "available 10 USDC") {
		t.Fatalf("withdraw: %d %s", code, out)
	}
	code, out := crtxd(t, append([]string{"ledger", "withdraw", "--environment", "mainnet", "--wallet", w, "--amount", "10.000001"}, store...)...)
	if code == 0 || !strings.Contains(out, "insufficient_balance") {
		t.Fatalf("overdraft: %d %s", code, out)
	}
	// Wait for the sealer to pick up the CLI's transactions, then stop.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var unsealed int
		d.Store.View(ctx, func(tx crtx.Tx) error {
			for _, env := range crtx.Environments {
				u, _ := tx.Ledger.UnsealedTransactions(ctx, env, 10)
				unsealed += len(u)
			}
			return nil
		})
		if unsealed == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("transactions stay unsealed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return data
}

func must(pub ed25519.PublicKey, _ ed25519.PrivateKey, err error) ed25519.PublicKey {
	if err != nil {
		panic(err)
	}
	return pub
}

func TestLedgerVerifyPasses(t *testing.T) {
	data := withTraffic(t)
	code, out := crtxd(t, "ledger", "verify", "--data", data)
	if code != 0 || !strings.Contains(out, "mainnet: ok") || !strings.Contains(out, "devnet: ok") {
		t.Fatalf("verify: %d\n%s", code, out)
	}
	if !strings.Contains(out, "summing to 0") {
		t.Errorf("verify does not report the zero sum:\n%s", out)
	}
}

// tamper runs SQL on the store by hand, as someone with the database file
// could, first dropping the triggers that keep the ledger append-only.
func tamper(t *testing.T, data string, stmts ...string) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "crtx.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, trg := range []string{"account_txs_append_only_update", "blocks_append_only_update", "ledger_txs_seal_once"} {
		stmts = append([]string{"DROP TRIGGER " + trg}, stmts...)
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func TestLedgerVerifyFindsTampering(t *testing.T) {
	cases := []struct {
		name  string
		stmts []string
		want  []string
	}{
		{"posting amount", []string{
			`UPDATE ledger_txs SET postings = json_replace(postings, '$[0].amount', json_extract(postings, '$[0].amount') + 1)
				WHERE seq = (SELECT min(seq) FROM ledger_txs WHERE environment = 'devnet' AND postings != '[]')`},
			[]string{"devnet: FAILED", "Merkle root", "balance"}},
		{"posting and balance together", []string{
			`UPDATE ledger_txs SET postings = json_replace(postings, '$[0].amount', json_extract(postings, '$[0].amount') + 1)
				WHERE seq = (SELECT min(seq) FROM ledger_txs WHERE environment = 'mainnet' AND postings != '[]')`,
			`UPDATE accounts SET balance = balance + 1 WHERE environment = 'mainnet' AND kind = 'wallet'`,
			`UPDATE accounts SET balance = balance - 1 WHERE environment = 'mainnet' AND kind = 'issuance'`},
			[]string{"mainnet: FAILED", "block 1: transactions give Merkle root"}},
		{"balance alone", []string{`UPDATE accounts SET balance = balance + 5 WHERE environment = 'devnet' AND kind = 'wallet' AND rowid = (SELECT min(rowid) FROM accounts WHERE environment = 'devnet' AND kind = 'wallet')`},
			[]string{"devnet: FAILED", "but its postings give", "not zero"}},
		{"transaction data", []string{`UPDATE ledger_txs SET data = '{"wallet":"someone else"}' WHERE seq = (SELECT min(seq) FROM ledger_txs)`},
			[]string{"FAILED", "Merkle root"}},
		{"transaction hash version", []string{`UPDATE ledger_txs SET version = 1 WHERE seq = (SELECT min(seq) FROM ledger_txs)`},
			[]string{"FAILED", "Merkle root"}},
		{"block merkle root", []string{`UPDATE blocks SET merkle_root = '00' || substr(merkle_root, 3) WHERE environment = 'devnet' AND height = 1`},
			[]string{"devnet: FAILED", "block 1: header hashes to"}},
		{"block signature", []string{`UPDATE blocks SET signature = (SELECT signature FROM blocks WHERE environment = 'mainnet' AND height = 1) WHERE environment = 'devnet' AND height = 1`},
			[]string{"devnet: FAILED", "block 1: signature does not verify"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := withTraffic(t)
			tamper(t, data, tc.stmts...)
			code, out := crtxd(t, "ledger", "verify", "--data", data)
			if code == 0 {
				t.Fatalf("verify passed a tampered ledger:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("verify output lacks %q:\n%s", w, out)
				}
			}
		})
	}
	t.Run("another authority key", func(t *testing.T) {
		data := withTraffic(t)
		os.Remove(filepath.Join(data, "authority.json"))
		if _, err := keyfile.LoadOrCreate(filepath.Join(data, "authority.json")); err != nil {
			t.Fatal(err)
		}
		code, out := crtxd(t, "ledger", "verify", "--data", data, "--environment", "devnet")
		if code == 0 || !strings.Contains(out, "signature does not verify") {
			t.Fatalf("verify with another key: %d\n%s", code, out)
		}
	})
}

// The ledger is append-only in the database itself.
func TestLedgerRowsAreAppendOnly(t *testing.T) {
	data := withTraffic(t)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "crtx.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range []string{
		`UPDATE ledger_txs SET postings = '[]'`, `UPDATE ledger_txs SET refs = '[]'`, `UPDATE account_txs SET tx_seq = 1`,
		`DELETE FROM account_txs`, `UPDATE blocks SET signature = 'x'`,
		`DELETE FROM blocks`, `DELETE FROM ledger_txs`, `UPDATE ledger_txs SET data = '{}'`,
		`UPDATE ledger_txs SET block_height = NULL`, `UPDATE ledger_txs SET version = 1`,
	} {
		if _, err := db.Exec(s); err == nil {
			t.Errorf("%s was allowed", s)
		}
	}
}

// Every flag not on the command line comes from CRTX_<FLAG>; the command
// line wins, and a variable that does not parse stops crtxd naming it.
func TestConfigFromEnvironment(t *testing.T) {
	serve, _, err := newCrtxd().Find([]string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("CRTX_ADDR", "127.0.0.1:9999")
	t.Setenv("CRTX_PLATFORM_FEE_BPS", "250")
	t.Setenv("CRTX_ALLOW_PRIVATE_ENDPOINTS", "true")
	t.Setenv("CRTX_DB_CONNS", "3")
	t.Setenv("CRTX_DATA", "/from/env")
	fs := serve.Flags()
	if err := fs.Parse([]string{"--data", "/from/flag"}); err != nil {
		t.Fatal(err)
	}
	if err := fromEnvironment(fs); err != nil {
		t.Fatal(err)
	}
	for flag, want := range map[string]string{"addr": "127.0.0.1:9999", "platform-fee-bps": "250",
		"allow-private-endpoints": "true", "db-conns": "3", "data": "/from/flag", "log-level": "info"} {
		if got := fs.Lookup(flag).Value.String(); got != want {
			t.Errorf("--%s = %q, want %q", flag, got, want)
		}
	}

	// Through the whole command: migrate applies to the folder of CRTX_DATA.
	data := t.TempDir()
	t.Setenv("CRTX_DATA", data)
	if code, out := crtxd(t, "migrate"); code != 0 || !strings.Contains(out, "migrations applied") {
		t.Fatalf("migrate: %d %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(data, "crtx.db")); err != nil {
		t.Errorf("migrate did not use CRTX_DATA: %v", err)
	}
	// A required flag may come from the environment too.
	t.Setenv("CRTX_DATA", withTraffic(t))
	t.Setenv("CRTX_ENVIRONMENT", "mainnet")
	t.Setenv("CRTX_AMOUNT", "2")
	w := crtx.Address(must(ed25519.GenerateKey(nil)))
	if code, out := crtxd(t, "ledger", "deposit", "--wallet", w); code != 0 || !strings.Contains(out, "available 2 USDC") {
		t.Errorf("deposit from the environment: %d %s", code, out)
	}
	t.Setenv("CRTX_DB_CONNS", "lots")
	if code, out := crtxd(t, "migrate"); code != 2 || !strings.Contains(out, "CRTX_DB_CONNS") {
		t.Errorf("a bad variable: %d %s", code, out)
	}
}

func TestCommands(t *testing.T) {
	if code, _ := crtxd(t); code != 2 {
		t.Errorf("no command: exit %d", code)
	}
	if code, _ := crtxd(t, "frobnicate"); code != 2 {
		t.Errorf("unknown command: exit %d", code)
	}
	data := t.TempDir()
	if code, out := crtxd(t, "migrate", "--data", data); code != 0 || !strings.Contains(out, "migrations applied") {
		t.Errorf("migrate: %d %s", code, out)
	}
	// A database that is not there stops crtxd at start, saying why.
	if code, out := crtxd(t, "serve", "--db", "postgres://127.0.0.1:1/none", "--data", data, "--addr", "127.0.0.1:0"); code == 0 || !strings.Contains(out, "postgres") {
		t.Errorf("serve on an unreachable PostgreSQL: %d %s", code, out)
	}
	if code, out := crtxd(t, "serve", "--db", "mysql://x", "--data", data, "--addr", "127.0.0.1:0"); code == 0 || !strings.Contains(out, "--db") {
		t.Errorf("serve on an unknown engine: %d %s", code, out)
	}
	for _, args := range [][]string{
		{"ledger", "deposit", "--data", data, "--environment", "mainnet", "--wallet", "x", "--amount", "1"},
		{"ledger", "deposit", "--data", data, "--environment", "moon", "--wallet", "x", "--amount", "1"},
		{"ledger", "deposit", "--data", data, "--environment", "mainnet", "--wallet", "x", "--amount", "-1"},
	} {
		if code, _ := crtxd(t, args...); code == 0 {
			t.Errorf("%v succeeded", args)
		}
	}
	// An offline command on a folder that holds no marketplace (a
	// forgotten --data) refuses, and creates nothing there.
	nowhere := filepath.Join(t.TempDir(), "forgot")
	for _, args := range [][]string{{"ledger", "verify"}, {"ledger", "deposit", "--environment", "mainnet", "--wallet", "x", "--amount", "1"},
		{"admin", "disputes", "list"}} {
		if code, out := crtxd(t, append(args, "--data", nowhere)...); code == 0 || !strings.Contains(out, "holds no marketplace") {
			t.Errorf("%v on an empty folder: exit %d, %s", args, code, out)
		}
	}
	if _, err := os.Stat(nowhere); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an offline command created %s: %v", nowhere, err)
	}
	// Key files are private.
	if code, out := crtxd(t, "init", "--data", data); code != 0 {
		t.Fatalf("init: %d %s", code, out)
	}
	for _, f := range []string{"authority.json", "marketplace.json"} {
		st, err := os.Stat(filepath.Join(data, f))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", f, st.Mode(), err)
		}
	}
}

// SIGTERM (here: the context ending) stops crtxd cleanly, whether it came
// while crtxd was starting or once it was serving.
func TestServeStopsOnSignalWhileStarting(t *testing.T) {
	c, cancel := context.WithCancel(ctx)
	cancel()
	var out bytes.Buffer
	if code := run(c, []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, &out, &out); code != 0 {
		t.Fatalf("exit %d: %s", code, out.String())
	}
}

func TestServeStopsOnSignal(t *testing.T) {
	c, cancel := context.WithCancel(ctx)
	done := make(chan int)
	var out bytes.Buffer
	go func() { done <- run(c, []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, &out, &out) }()
	time.Sleep(200 * time.Millisecond)
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
}

// One crtxd serves a SQLite folder: a second refuses to start, saying
// which process holds it, and the folder is free again once the first stops.
func TestOneServePerFolder(t *testing.T) {
	cfg := daemon.Defaults()
	cfg.Addr, cfg.Data, cfg.LogOutput = "127.0.0.1:0", t.TempDir(), &bytes.Buffer{}
	first, err := daemon.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if second, err := daemon.Start(ctx, cfg); err == nil || !strings.Contains(err.Error(), "another crtxd (pid") {
		if second != nil {
			second.Close()
		}
		t.Fatalf("a second serve on one folder: %v, want a refusal naming the first", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := daemon.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("after the first stopped: %v", err)
	}
	again.Close()
}

// An offline command on a PostgreSQL database (or search_path) that holds
// no marketplace refuses, and creates no tables there.
func TestOfflineCommandsRefuseAnEmptyDatabase(t *testing.T) {
	db := storetest.SchemaDSN(t)
	data := t.TempDir()
	for _, f := range []string{"authority.json", "marketplace.json"} {
		if _, err := keyfile.LoadOrCreate(filepath.Join(data, f)); err != nil {
			t.Fatal(err)
		}
	}
	if code, out := crtxd(t, "ledger", "verify", "--db", db, "--data", data); code == 0 || !strings.Contains(out, "holds no marketplace") {
		t.Errorf("verify on an empty schema: exit %d, %s", code, out)
	}
	if ok, err := postgres.Migrated(ctx, db); ok || err != nil {
		t.Errorf("the empty schema was migrated: %v, %v", ok, err)
	}
}
