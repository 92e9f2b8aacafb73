package ipfs

import (
	"testing"
)

// CIDs equal what IPFS tools compute: `ipfs add --cid-version 1
// --raw-leaves` of "hello world\n" is this well-known CID.
func TestResultCIDVector(t *testing.T) {
	if got := CID("hello world\n"); got != "bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4" {
		t.Fatalf("CID = %s", got)
	}
	if !ParseCID(CID("ü")) || ParseCID("bafkreinot") || ParseCID("QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG") {
		t.Fatal("ParseCID")
	}
}
