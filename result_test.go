package crtx

import "testing"

// CIDs equal what IPFS tools compute: `ipfs add --cid-version 1
// --raw-leaves` of "hello world\n" is this well-known CID.
func TestResultCIDVector(t *testing.T) {
	if got := ResultCID("hello world\n"); got != "bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4" {
		t.Fatalf("CID = %s", got)
	}
	if !ParseResultCID(ResultCID("ü")) || ParseResultCID("bafkreinot") || ParseResultCID("QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG") {
		t.Fatal("ParseResultCID")
	}
}
