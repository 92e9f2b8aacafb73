package crtx_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

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
	if !strings.Contains(doc, "Its canonical form, "+strconv.Itoa(len(canonical))+" bytes") {
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

// Whatever a transaction holds, the hash served with it is the hash of what
// is served, read back by any JSON decoder: the served object without seq,
// block_height and hash, in its RFC 8785 form.
func FuzzServedHash(f *testing.F) {
	f.Add("wallet", "café <&> \u2028", int64(50000), int64(1_700_000_000_123_456), "3GkQ7QDDnjb2RB8xWctb7UMA9VHSrren8")
	f.Add("", "\x00\xff", int64(7), int64(0), "")
	f.Fuzz(func(t *testing.T, key, value string, micro, at int64, id string) {
		if micro <= 0 || micro > int64(crtx.MaxUSDC) {
			micro = 1
		}
		lt := crtx.LedgerTx{ID: id, Environment: crtx.Devnet, Kind: crtx.TxAirdrop, Data: map[string]string{key: value},
			Postings:  []crtx.Posting{{From: "ISS", To: value, Amount: crtx.USDC(micro)}},
			CreatedAt: time.UnixMicro(at % 1e17), Version: crtx.HashVersion}
		served, err := json.Marshal(lt)
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := json.Unmarshal(served, &obj); err != nil {
			t.Fatal(err)
		}
		hash := obj["hash"]
		for _, k := range []string{"seq", "block_height", "hash"} {
			delete(obj, k)
		}
		canonical, err := crtx.Canonical(obj)
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(canonical); hex.EncodeToString(sum[:]) != hash || hash != lt.Leaf().String() {
			t.Fatalf("served %s with hash %v; its canonical form %s hashes to %x; Leaf %s", served, hash, canonical, sum, lt.Leaf())
		}
	})
}

// examples/verify-node/fixtures/ledger-v1.json is a block of version 1
// (docs/ledger.md, end of "Hashes") that the Node verifier's self-test
// checks: its hashes, Merkle root and signature are what this package
// computes, so the verifier's version-1 encoding is held to Go's.
func TestVersion1Fixture(t *testing.T) {
	raw, err := os.ReadFile("examples/verify-node/fixtures/ledger-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Authority    string          `json:"authority"`
		Block        crtx.Block      `json:"block"`
		Transactions []crtx.LedgerTx `json:"transactions"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if f.Block.Version != 1 || len(f.Transactions) != f.Block.TxCount || f.Block.TxCount < 2 {
		t.Fatalf("fixture block %+v with %d transactions: want version 1 and several", f.Block, len(f.Transactions))
	}
	for _, tx := range f.Transactions {
		if tx.Version != 1 || tx.Leaf().String() != tx.Hash {
			t.Errorf("transaction %s (version %d): hash %s, Leaf %s", tx.ID, tx.Version, tx.Hash, tx.Leaf())
		}
	}
	if root := merkle.Root(crtx.TxLeaves(f.Transactions)).String(); root != f.Block.MerkleRoot {
		t.Errorf("Merkle root %s, fixture %s", root, f.Block.MerkleRoot)
	}
	h := f.Block.ComputeHash()
	if h.String() != f.Block.Hash {
		t.Errorf("block hash %s, fixture %s", h, f.Block.Hash)
	}
	authority, err := crtx.ParseAddress("authority", f.Authority)
	if err != nil || !crtx.VerifyBase58(authority, h[:], f.Block.Signature) {
		t.Errorf("block signature does not verify with %s (%v)", f.Authority, err)
	}
	// The same block hashed as version 2 is another hash: the fixture
	// tells the versions apart.
	v2 := f.Block
	v2.Version = 2
	if v2.ComputeHash() == h {
		t.Error("the block hashes the same under versions 1 and 2")
	}
}
