// Package merkle builds the binary Merkle trees that seal ledger blocks and
// checks inclusion proofs against their roots. Leaves and inner nodes are
// hashed with distinct prefixes (as RFC 6962) so a leaf can never pose as a
// node; an odd node at the end of a level is carried up unchanged.
package merkle

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
)

// Hash is a SHA-256 digest.
type Hash [32]byte

func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// ParseHash reads a hex SHA-256 digest.
func ParseHash(s string) (Hash, error) {
	var h Hash
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(h) {
		return h, errors.New("merkle: not a hex SHA-256 digest")
	}
	copy(h[:], b)
	return h, nil
}

// Step is one sibling on the path from a leaf to the root.
type Step struct {
	Hash Hash
	// Left is true when the sibling sits to the left of the path.
	Left bool
}

func leaf(data Hash) Hash { return sha256.Sum256(append([]byte{0}, data[:]...)) }

func node(l, r Hash) Hash {
	b := make([]byte, 0, 65)
	b = append(b, 1)
	b = append(b, l[:]...)
	return sha256.Sum256(append(b, r[:]...))
}

// Root is the Merkle root of the leaves; the root of no leaves is the hash of
// nothing.
func Root(leaves []Hash) Hash {
	if len(leaves) == 0 {
		return sha256.Sum256(nil)
	}
	level := make([]Hash, len(leaves))
	for i, l := range leaves {
		level[i] = leaf(l)
	}
	for len(level) > 1 {
		level = up(level)
	}
	return level[0]
}

func up(level []Hash) []Hash {
	next := make([]Hash, 0, (len(level)+1)/2)
	for i := 0; i < len(level); i += 2 {
		if i+1 == len(level) {
			next = append(next, level[i])
		} else {
			next = append(next, node(level[i], level[i+1]))
		}
	}
	return next
}

// Prove returns the path that shows leaves[i] is under Root(leaves).
func Prove(leaves []Hash, i int) []Step {
	if i < 0 || i >= len(leaves) {
		return nil
	}
	level := make([]Hash, len(leaves))
	for j, l := range leaves {
		level[j] = leaf(l)
	}
	var path []Step
	for len(level) > 1 {
		sib := i ^ 1
		if sib < len(level) {
			path = append(path, Step{Hash: level[sib], Left: sib < i})
		}
		level = up(level)
		i /= 2
	}
	return path
}

// Verify reports whether path leads from data to root.
func Verify(root, data Hash, path []Step) bool {
	h := leaf(data)
	for _, s := range path {
		if s.Left {
			h = node(s.Hash, h)
		} else {
			h = node(h, s.Hash)
		}
	}
	return h == root
}
