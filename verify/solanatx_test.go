package verify

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/mr-tron/base58"
)

// shortvec writes n as Solana's compact-u16.
func shortvec(n int) []byte {
	var out []byte
	for {
		b := byte(n & 0x7f)
		n >>= 7
		if n == 0 {
			return append(out, b)
		}
		out = append(out, b|0x80)
	}
}

// testInstruction is an instruction as the test writes it.
type testInstruction struct {
	program  int
	accounts []int
	data     []byte
}

// encodeMessage writes a message in the wire format, by the layout of the
// Solana documentation ("Transactions": header, compact arrays of keys,
// the recent blockhash, compiled instructions, and for v0 the lookups).
func encodeMessage(v0 bool, header [3]byte, keys [][]byte, blockhash []byte, ixs []testInstruction, lookups int) []byte {
	var m []byte
	if v0 {
		m = append(m, 0x80)
	}
	m = append(m, header[:]...)
	m = append(m, shortvec(len(keys))...)
	for _, k := range keys {
		m = append(m, k...)
	}
	m = append(m, blockhash...)
	m = append(m, shortvec(len(ixs))...)
	for _, ix := range ixs {
		m = append(m, byte(ix.program))
		m = append(m, shortvec(len(ix.accounts))...)
		for _, a := range ix.accounts {
			m = append(m, byte(a))
		}
		m = append(m, shortvec(len(ix.data))...)
		m = append(m, ix.data...)
	}
	if v0 {
		m = append(m, shortvec(lookups)...)
		for i := 0; i < lookups; i++ {
			m = append(m, bytes.Repeat([]byte{byte(i + 9)}, 32)...)
			m = append(m, shortvec(1)...)
			m = append(m, 0)
			m = append(m, shortvec(2)...)
			m = append(m, 1, 2)
		}
	}
	return m
}

// signed prefixes msg with the signatures of keys, in order.
func signed(msg []byte, keys ...ed25519.PrivateKey) []byte {
	out := shortvec(len(keys))
	for _, k := range keys {
		out = append(out, ed25519.Sign(k, msg)...)
	}
	return append(out, msg...)
}

func testKey(seed byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, 32))
}

// anchorFixture is an anchor transaction as the marketplace writes one:
// the treasury pays the fee, the ledger authority signs the memo.
type anchorFixture struct {
	treasury, authority ed25519.PrivateKey
	block               crtx.Block
	raw                 []byte
	got                 solanaGot
}

func newAnchorFixture(v0 bool, memo func(crtx.Block) string) anchorFixture {
	f := anchorFixture{treasury: testKey(1), authority: testKey(2)}
	f.block = crtx.Block{Environment: crtx.Devnet, Height: 42, PrevHash: crtx.GenesisPrevHash, MerkleRoot: crtx.GenesisPrevHash,
		TxCount: 1, SealedAt: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC), Version: 2}
	f.block.Hash = f.block.ComputeHash().String()
	memoKey, _ := base58.Decode(MemoProgram)
	blockhash := sha256.Sum256([]byte("a recent blockhash"))
	keys := [][]byte{f.treasury.Public().(ed25519.PublicKey), f.authority.Public().(ed25519.PublicKey), memoKey}
	msg := encodeMessage(v0, [3]byte{2, 1, 1}, keys, blockhash[:],
		[]testInstruction{{program: 2, accounts: []int{1}, data: []byte(memo(f.block))}}, map[bool]int{true: 1}[v0])
	f.raw = signed(msg, f.treasury, f.authority)
	f.got = solanaGot{Slot: 777, Err: json.RawMessage("null"), Raw: f.raw}
	f.block.Anchor = &crtx.Anchor{Signature: base58.Encode(f.raw[1:65]), Slot: 777, Cluster: "custom"}
	return f
}

func TestParseSolanaTransaction(t *testing.T) {
	for _, v0 := range []bool{false, true} {
		f := newAnchorFixture(v0, crtx.AnchorMemo)
		tx, err := parseSolanaTransaction(f.raw)
		if err != nil {
			t.Fatalf("v0 %v: %v", v0, err)
		}
		m := tx.Message
		wantVersion := map[bool]int{false: -1, true: 0}[v0]
		if m.Version != wantVersion || len(tx.Signatures) != 2 || m.NumRequiredSignatures != 2 || m.NumReadonlySignedAccounts != 1 ||
			m.NumReadonlyUnsignedAccounts != 1 || len(m.AccountKeys) != 3 || len(m.Instructions) != 1 || m.LookupTables != map[bool]int{true: 1}[v0] {
			t.Errorf("v0 %v: parsed %+v", v0, m)
		}
		if ix := m.Instructions[0]; base58.Encode(m.program(ix)) != MemoProgram || string(ix.Data) != crtx.AnchorMemo(f.block) || len(ix.Accounts) != 1 || ix.Accounts[0] != 1 {
			t.Errorf("v0 %v: instruction %+v", v0, ix)
		}
		if !ed25519.Verify(f.authority.Public().(ed25519.PublicKey), tx.MessageBytes, tx.Signatures[1]) {
			t.Errorf("v0 %v: the message bytes are not what the authority signed", v0)
		}
		if i, ok := m.signer(f.authority.Public().(ed25519.PublicKey)); !ok || i != 1 {
			t.Errorf("v0 %v: the authority is signer %d, %v", v0, i, ok)
		}
		// Every truncation, and any byte more, is refused.
		for n := 0; n < len(f.raw); n++ {
			if _, err := parseSolanaTransaction(f.raw[:n]); !errors.Is(err, errSolanaWire) {
				t.Fatalf("v0 %v: %d of %d bytes: %v", v0, n, len(f.raw), err)
			}
		}
		if _, err := parseSolanaTransaction(append(append([]byte{}, f.raw...), 0)); !errors.Is(err, errSolanaWire) {
			t.Errorf("v0 %v: a trailing byte: %v", v0, err)
		}
	}
	// A version other than 0, and signatures that the header does not ask for.
	f := newAnchorFixture(true, crtx.AnchorMemo)
	v1 := append([]byte{}, f.raw...)
	v1[1+2*64] = 0x81
	if _, err := parseSolanaTransaction(v1); !errors.Is(err, errSolanaWire) {
		t.Errorf("version 1: %v", err)
	}
	if _, err := parseSolanaTransaction(append(shortvec(1), f.raw[1:65]...)); !errors.Is(err, errSolanaWire) {
		t.Errorf("one signature and no message: %v", err)
	}
	three := append(shortvec(3), f.raw[1:129]...)
	three = append(three, make([]byte, 64)...)
	if _, err := parseSolanaTransaction(append(three, f.raw[129:]...)); !errors.Is(err, errSolanaWire) {
		t.Errorf("three signatures for two signers: %v", err)
	}
}

func TestCompactU16(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		want int
		ok   bool
	}{
		{[]byte{0x00}, 0, true},
		{[]byte{0x7f}, 0x7f, true},
		{[]byte{0x80, 0x01}, 0x80, true},
		{[]byte{0xff, 0x7f}, 0x3fff, true},
		{[]byte{0x80, 0x80, 0x01}, 0x4000, true},
		{[]byte{0xff, 0xff, 0x03}, 0xffff, true},
		{[]byte{0xff, 0xff, 0x04}, 0, false}, // past 16 bits
		{[]byte{0x80, 0x00}, 0, false},       // 0 in two bytes
		{[]byte{0x81, 0x80, 0x00}, 0, false}, // 1 in three bytes
		{[]byte{0x80, 0x80, 0x80, 0x01}, 0, false},
		{[]byte{0x80}, 0, false},
	} {
		r := &solanaReader{b: c.in}
		got := r.compactU16()
		if (r.err == nil) != c.ok || (c.ok && (got != c.want || r.off != len(c.in))) {
			t.Errorf("% x: %d, %v; want %d, ok %v", c.in, got, r.err, c.want, c.ok)
		}
		if c.ok && !bytes.Equal(shortvec(c.want), c.in) {
			t.Errorf("the test's encoder writes %d as % x, not % x", c.want, shortvec(c.want), c.in)
		}
	}
}

func TestCheckAnchorTransaction(t *testing.T) {
	for _, v0 := range []bool{false, true} {
		f := newAnchorFixture(v0, crtx.AnchorMemo)
		if err := checkAnchorTransaction(f.got, f.block, f.authority.Public().(ed25519.PublicKey)); err != nil {
			t.Errorf("v0 %v: the anchor as written: %v", v0, err)
		}
	}
	refused := func(name string, f anchorFixture, got solanaGot, b crtx.Block, authority ed25519.PublicKey) {
		t.Helper()
		if err := checkAnchorTransaction(got, b, authority); !errors.Is(err, errAnchor) {
			t.Errorf("%s: %v", name, err)
		}
	}
	f := newAnchorFixture(false, crtx.AnchorMemo)
	auth := f.authority.Public().(ed25519.PublicKey)

	failed := f.got
	failed.Err = json.RawMessage(`{"InstructionError":[0,"Custom"]}`)
	refused("a failed transaction", f, failed, f.block, auth)

	slot := f.got
	slot.Slot++
	refused("another slot", f, slot, f.block, auth)

	other := f.block
	other.Height++
	other.Hash = other.ComputeHash().String()
	refused("the memo of another block", f, f.got, other, auth)

	refused("another authority", f, f.got, f.block, testKey(3).Public().(ed25519.PublicKey))

	forged := f.got
	forged.Raw = append([]byte{}, f.raw...)
	forged.Raw[1+64+5] ^= 1 // the authority's signature
	refused("a forged signature", f, forged, f.block, auth)

	sig := f.block
	a := *f.block.Anchor
	a.Signature = base58.Encode(make([]byte, 64))
	sig.Anchor = &a
	refused("another transaction's answer", f, f.got, sig, auth)

	// The memo, signed by the authority, but the memo's data prefixed with
	// its length (as an older memo library writes it) is not the memo.
	prefixed := newAnchorFixture(false, func(b crtx.Block) string { return string(rune(len(crtx.AnchorMemo(b)))) + crtx.AnchorMemo(b) })
	refused("a length-prefixed memo", prefixed, prefixed.got, prefixed.block, prefixed.authority.Public().(ed25519.PublicKey))

	// The authority signed the transaction, but the memo names only the
	// treasury as its signer.
	g := newAnchorFixture(false, crtx.AnchorMemo)
	memoKey, _ := base58.Decode(MemoProgram)
	blockhash := sha256.Sum256([]byte("a recent blockhash"))
	msg := encodeMessage(false, [3]byte{2, 1, 1}, [][]byte{g.treasury.Public().(ed25519.PublicKey), g.authority.Public().(ed25519.PublicKey), memoKey},
		blockhash[:], []testInstruction{{program: 2, accounts: []int{0}, data: []byte(crtx.AnchorMemo(g.block))}}, 0)
	g.got.Raw = signed(msg, g.treasury, g.authority)
	g.block.Anchor.Signature = base58.Encode(g.got.Raw[1:65])
	refused("a memo the authority is not a signer of", g, g.got, g.block, g.authority.Public().(ed25519.PublicKey))
}

// FuzzParseSolanaTransaction: whatever the bytes, the parser neither panics
// nor reads past them, and what it accepts is consistent: the signatures
// the header asks for, the message as the bytes after them, and every
// instruction's program either a static key or reported as none.
func FuzzParseSolanaTransaction(f *testing.F) {
	for _, v0 := range []bool{false, true} {
		f.Add(newAnchorFixture(v0, crtx.AnchorMemo).raw)
	}
	f.Add([]byte{0x01})
	f.Add([]byte{0x00, 0x80, 0x01, 0x00, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, raw []byte) {
		tx, err := parseSolanaTransaction(raw)
		if err != nil {
			if !errors.Is(err, errSolanaWire) {
				t.Fatalf("an error that is not errSolanaWire: %v", err)
			}
			return
		}
		m := tx.Message
		if len(tx.Signatures) != m.NumRequiredSignatures || m.NumRequiredSignatures > len(m.AccountKeys) || m.NumRequiredSignatures == 0 {
			t.Fatalf("%d signatures, %d required, %d keys", len(tx.Signatures), m.NumRequiredSignatures, len(m.AccountKeys))
		}
		if !bytes.HasSuffix(raw, tx.MessageBytes) || len(raw) != len(shortvec(len(tx.Signatures)))+64*len(tx.Signatures)+len(tx.MessageBytes) {
			t.Fatal("the message bytes are not the bytes after the signatures")
		}
		for _, k := range m.AccountKeys {
			if len(k) != 32 {
				t.Fatalf("a key of %d bytes", len(k))
			}
		}
		for _, ix := range m.Instructions {
			if p := m.program(ix); p != nil && len(p) != 32 {
				t.Fatalf("a program key of %d bytes", len(p))
			}
		}
		again, err := parseSolanaMessage(tx.MessageBytes)
		if err != nil || len(again.Instructions) != len(m.Instructions) {
			t.Fatalf("the message parses otherwise alone: %v", err)
		}
	})
}
