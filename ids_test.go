package crtx

import (
	"regexp"
	"slices"
	"testing"
	"time"
)

// Execution ids are version 7 UUIDs and ledger transaction ids are
// fixed-length base58: both sort by the time they were made.
func TestIDsSortByTime(t *testing.T) {
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	var uuids, txs []string
	for range 5 {
		uuids, txs = append(uuids, NewUUID()), append(txs, NewTxID())
		time.Sleep(2 * time.Millisecond)
	}
	for i, u := range uuids {
		if !uuid.MatchString(u) {
			t.Errorf("%q is not a version 7 UUID", u)
		}
		if len(txs[i]) != 33 {
			t.Errorf("tx id %q has %d characters, want 33", txs[i], len(txs[i]))
		}
	}
	if !slices.IsSorted(uuids) || !slices.IsSorted(txs) {
		t.Errorf("ids made one after another do not sort in that order:\n%v\n%v", uuids, txs)
	}
	seen := map[string]bool{}
	for range 1000 {
		id := NewUUID()
		if seen[id] {
			t.Fatalf("%s made twice", id)
		}
		seen[id] = true
	}
}
