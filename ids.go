package crtx

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"time"

	"github.com/mr-tron/base58"
)

// NewUUID returns a time-ordered (version 7) UUID.
func NewUUID() string {
	// Version 7 (RFC 9562): the first 48 bits are the Unix time in
	// milliseconds, so ids made one after another sort together and a new
	// row's key lands beside the last one's in an index instead of on a
	// random page; the other 74 bits are random.
	var b [16]byte
	rand.Read(b[6:])
	ms := uint64(time.Now().UnixMilli())
	for i := range 6 {
		b[i] = byte(ms >> (40 - 8*i))
	}
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// NewID returns a random id after a prefix that names its kind, such as "key_".
func NewID(prefix string) string { return prefix + RandomBase62(24) }

// NewTxID returns a ledger transaction id: 33 base58 characters.
func NewTxID() string {
	// The creation time in nanoseconds, big-endian, then 16 random bytes:
	// ids sort by time (base58's alphabet is in ASCII order and the length
	// is fixed until 2262), so inserts stay at the end of the id index.
	var b [24]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixNano()))
	rand.Read(b[8:])
	return base58.Encode(b[:])
}
