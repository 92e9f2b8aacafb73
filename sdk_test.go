package crtx_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The public SDKs build without the service: a creator's program pulls in no
// store, SQLite, PostgreSQL, JSON Schema or CID package, and a caller's none
// of the first four.
func TestSDKDependencies(t *testing.T) {
	for pkg, banned := range map[string][]string{
		"./creator": {"/store", "modernc.org/sqlite", "jackc/pgx", "jsonschema", "go-cid", "crtx/market"},
		"./client":  {"/store", "modernc.org/sqlite", "jackc/pgx", "jsonschema", "crtx/market"},
	} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, b := range banned {
				if strings.Contains(dep, b) {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
