package merkle

import (
	"crypto/sha256"
	"fmt"
	"testing"
)

func leaves(n int) []Hash {
	out := make([]Hash, n)
	for i := range out {
		out[i] = sha256.Sum256([]byte(fmt.Sprint(i)))
	}
	return out
}

func TestProofsForEveryLeaf(t *testing.T) {
	for n := 1; n <= 17; n++ {
		ls := leaves(n)
		root := Root(ls)
		for i := range ls {
			path := Prove(ls, i)
			if !Verify(root, ls[i], path) {
				t.Fatalf("n=%d i=%d: proof does not verify", n, i)
			}
			other := sha256.Sum256([]byte("other"))
			if Verify(root, other, path) {
				t.Fatalf("n=%d i=%d: proof verifies a foreign leaf", n, i)
			}
		}
	}
}

func TestRootChangesWithAnyLeafOrOrder(t *testing.T) {
	ls := leaves(5)
	root := Root(ls)
	ls[3][0] ^= 1
	if Root(ls) == root {
		t.Fatal("changing a leaf kept the root")
	}
	ls[3][0] ^= 1
	ls[1], ls[2] = ls[2], ls[1]
	if Root(ls) == root {
		t.Fatal("reordering leaves kept the root")
	}
	// A single leaf is hashed as a leaf, not returned raw.
	if one := leaves(1); Root(one) == one[0] {
		t.Fatal("root of one leaf equals the leaf")
	}
}
