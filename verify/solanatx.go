package verify

import (
	"errors"
	"fmt"
)

// The Solana transaction wire format, read as far as checking an anchor
// needs: who signed which bytes, and what each instruction carries. It is
// written here rather than imported so that the SDK pulls in no Solana
// library for the few dozen lines a verifier needs.

// errSolanaWire is wrapped by every error of the parser: the bytes are not
// a transaction the cluster could have accepted.
var errSolanaWire = errors.New("not a Solana transaction")

// solanaTx is a signed transaction: its signatures, in the order of the
// message's first account keys, and the message bytes they sign.
type solanaTx struct {
	Signatures [][]byte
	// MessageBytes are the signed bytes, exactly as sent.
	MessageBytes []byte
	Message      solanaMessage
}

// solanaMessage is a legacy (Version -1) or v0 message.
type solanaMessage struct {
	Version int
	// NumRequiredSignatures is how many of AccountKeys, from the first,
	// signed; the next two say how many signed and unsigned keys are
	// read-only.
	NumRequiredSignatures       int
	NumReadonlySignedAccounts   int
	NumReadonlyUnsignedAccounts int
	// AccountKeys are the static keys; a v0 message may load more from
	// address lookup tables, which no key checked here can come from (a
	// program or a signer is always static).
	AccountKeys     [][]byte
	RecentBlockhash []byte
	Instructions    []solanaInstruction
	// LookupTables counts a v0 message's address table lookups.
	LookupTables int
}

// solanaInstruction is one instruction: its program and accounts as indexes
// into the message's keys, and its data.
type solanaInstruction struct {
	ProgramIDIndex int
	Accounts       []int
	Data           []byte
}

// solanaReader reads the wire format; its first error sticks.
type solanaReader struct {
	b   []byte
	off int
	err error
}

func (r *solanaReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: at byte %d: %s", errSolanaWire, r.off, fmt.Sprintf(format, args...))
	}
}

func (r *solanaReader) byte() int {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.b) {
		r.fail("unexpected end")
		return 0
	}
	r.off++
	return int(r.b[r.off-1])
}

func (r *solanaReader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.b)-r.off {
		r.fail("%d bytes wanted, %d left", n, len(r.b)-r.off)
		return nil
	}
	r.off += n
	return r.b[r.off-n : r.off]
}

// compactU16 reads Solana's "shortvec" length: 7 bits a byte, low first, at
// most three bytes, in its shortest form only (the runtime refuses any
// other, so two encodings of one transaction cannot both be valid).
func (r *solanaReader) compactU16() int {
	v := 0
	for i := 0; i < 3; i++ {
		b := r.byte()
		if r.err != nil {
			return 0
		}
		if i == 2 && b > 0x03 {
			r.fail("compact-u16 overflows 16 bits")
			return 0
		}
		v |= (b & 0x7f) << (7 * i)
		if b&0x80 == 0 {
			if i > 0 && b == 0 {
				r.fail("compact-u16 not in its shortest form")
				return 0
			}
			return v
		}
	}
	r.fail("compact-u16 longer than three bytes")
	return 0
}

// parseSolanaTransaction reads a signed transaction as the cluster sends it
// (getTransaction with encoding base64): the signatures, then the message.
// Every byte must belong to it.
func parseSolanaTransaction(raw []byte) (solanaTx, error) {
	r := &solanaReader{b: raw}
	n := r.compactU16()
	tx := solanaTx{}
	for i := 0; i < n && r.err == nil; i++ {
		tx.Signatures = append(tx.Signatures, r.bytes(64))
	}
	if r.err != nil {
		return solanaTx{}, r.err
	}
	tx.MessageBytes = raw[r.off:]
	m, err := parseSolanaMessage(tx.MessageBytes)
	if err != nil {
		return solanaTx{}, err
	}
	if len(tx.Signatures) != m.NumRequiredSignatures {
		return solanaTx{}, fmt.Errorf("%w: %d signatures for %d required", errSolanaWire, len(tx.Signatures), m.NumRequiredSignatures)
	}
	tx.Message = m
	return tx, nil
}

// parseSolanaMessage reads a legacy or v0 message.
func parseSolanaMessage(b []byte) (solanaMessage, error) {
	r := &solanaReader{b: b}
	m := solanaMessage{Version: -1}
	if len(b) > 0 && b[0]&0x80 != 0 {
		m.Version = r.byte() & 0x7f
		if m.Version != 0 {
			return solanaMessage{}, fmt.Errorf("%w: message version %d", errSolanaWire, m.Version)
		}
	}
	m.NumRequiredSignatures = r.byte()
	m.NumReadonlySignedAccounts = r.byte()
	m.NumReadonlyUnsignedAccounts = r.byte()
	keys := r.compactU16()
	for i := 0; i < keys && r.err == nil; i++ {
		m.AccountKeys = append(m.AccountKeys, r.bytes(32))
	}
	m.RecentBlockhash = r.bytes(32)
	ixs := r.compactU16()
	for i := 0; i < ixs && r.err == nil; i++ {
		ix := solanaInstruction{ProgramIDIndex: r.byte()}
		na := r.compactU16()
		for _, a := range r.bytes(na) {
			ix.Accounts = append(ix.Accounts, int(a))
		}
		ix.Data = r.bytes(r.compactU16())
		m.Instructions = append(m.Instructions, ix)
	}
	if m.Version == 0 {
		m.LookupTables = r.compactU16()
		for i := 0; i < m.LookupTables && r.err == nil; i++ {
			r.bytes(32)
			r.bytes(r.compactU16()) // writable indexes
			r.bytes(r.compactU16()) // read-only indexes
		}
	}
	if r.err != nil {
		return solanaMessage{}, r.err
	}
	if r.off != len(b) {
		return solanaMessage{}, fmt.Errorf("%w: %d bytes after the message", errSolanaWire, len(b)-r.off)
	}
	switch {
	case m.NumRequiredSignatures == 0:
		return solanaMessage{}, fmt.Errorf("%w: no signer", errSolanaWire)
	case m.NumRequiredSignatures > len(m.AccountKeys):
		return solanaMessage{}, fmt.Errorf("%w: %d signers among %d keys", errSolanaWire, m.NumRequiredSignatures, len(m.AccountKeys))
	case m.NumReadonlySignedAccounts >= m.NumRequiredSignatures:
		return solanaMessage{}, fmt.Errorf("%w: no writable signer to pay the fee", errSolanaWire)
	case m.NumReadonlyUnsignedAccounts > len(m.AccountKeys)-m.NumRequiredSignatures:
		return solanaMessage{}, fmt.Errorf("%w: more read-only unsigned keys than unsigned keys", errSolanaWire)
	}
	return m, nil
}

// signer reports whether key is one of the message's signers, and which:
// its signature is the transaction's at the same index.
func (m solanaMessage) signer(key []byte) (int, bool) {
	for i := 0; i < m.NumRequiredSignatures; i++ {
		if string(m.AccountKeys[i]) == string(key) {
			return i, true
		}
	}
	return 0, false
}

// program is the instruction's program key, or nil when its index points
// past the static keys (a program cannot come from a lookup table).
func (m solanaMessage) program(ix solanaInstruction) []byte {
	if ix.ProgramIDIndex < len(m.AccountKeys) {
		return m.AccountKeys[ix.ProgramIDIndex]
	}
	return nil
}
