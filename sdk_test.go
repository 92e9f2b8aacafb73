package crtx_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The public SDKs build without the service: a creator's program pulls in no
// store, SQLite, PostgreSQL, JSON Schema or CID package, and a caller's none
// of the first four. The payment schemes keep to their room.
func TestSDKDependencies(t *testing.T) {
	for pkg, banned := range map[string][]string{
		"./creator": {"/store", "modernc.org/sqlite", "jackc/pgx", "jsonschema", "go-cid", "crtx/market"},
		"./client":  {"/store", "modernc.org/sqlite", "jackc/pgx", "jsonschema", "crtx/market"},
		// A payment scheme is given what it needs by the market, and knows
		// neither it nor an engine nor a transport (docs/architecture.md).
		"./payment/...": {"/store", "crtx/market", "crtx/http", "crtx/gate", "crtx/daemon", "crtx/chain"},
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
