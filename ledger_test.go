package crtx_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/merkle"
)

// docExample returns the text after "<!-- example: name -->" in
// docs/ledger.md: the fenced block that follows, or the inline code.
func docExample(t *testing.T, doc, name string) string {
	t.Helper()
	m := regexp.MustCompile("(?s)<!-- example: " + name + " -->\\s*(?:```[a-z]*\\n(.*?)\\n```|`([^`]*)`)").FindStringSubmatch(doc)
	if m == nil {
		t.Fatalf("docs/ledger.md has no example %q", name)
	}
	return m[1] + m[2]
}

// The worked example of docs/ledger.md is what the code computes: the
// served transaction, less its placement, canonicalizes to the bytes shown
// and hashes to the hash shown, and its Leaf agrees.
func TestLedgerDocExample(t *testing.T) {
	b, err := os.ReadFile("docs/ledger.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	served, canonical, hash := docExample(t, doc, "transaction"), docExample(t, doc, "canonical"), docExample(t, doc, "hash")

	var obj map[string]any
	if err := json.Unmarshal([]byte(served), &obj); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"seq", "block_height", "hash"} {
		delete(obj, k)
	}
	got, err := crtx.Canonical(obj)
	if err != nil || string(got) != canonical {
		t.Fatalf("canonical form = %s, %v\nthe doc shows %s", got, err, canonical)
	}
	if !strings.Contains(doc, "Its canonical form, "+itoa(len(canonical))+" bytes") {
		t.Errorf("the doc should give the canonical form's length, %d bytes", len(canonical))
	}

	var lt crtx.LedgerTx
	if err := json.Unmarshal([]byte(served), &lt); err != nil {
		t.Fatal(err)
	}
	if lt.Leaf().String() != hash || lt.Hash != hash {
		t.Errorf("Leaf = %s, served hash %s; the doc shows %s", lt.Leaf(), lt.Hash, hash)
	}
	again, _ := json.Marshal(lt)
	var back crtx.LedgerTx
	if err := json.Unmarshal(again, &back); err != nil || back.Hash != hash {
		t.Errorf("marshalled again, the hash is %s (%v)", back.Hash, err)
	}

	blk := crtx.Block{Environment: crtx.Devnet, Height: 31, PrevHash: "5f0c6d3e0b1a9c8e7d6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d",
		MerkleRoot: merkle.Root([]merkle.Hash{lt.Leaf()}).String(), TxCount: 1, SealedAt: lt.CreatedAt.Add(2000003000), Version: 2}
	for _, want := range []string{blk.MerkleRoot, blk.ComputeHash().String(), blk.SealedAt.Format("2006-01-02T15:04:05.999999Z")} {
		if !strings.Contains(doc, want) {
			t.Errorf("the doc's block example lacks %s", want)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
