package ipfs

import (
	cid "github.com/ipfs/go-cid"
	"github.com/multiformats/go-multibase"
	mh "github.com/multiformats/go-multihash"
)

// CID is the CIDv1 of a result's bytes: raw codec, sha2-256
// multihash, base32 ("bafkrei…"), exactly what `ipfs add --cid-version 1
// --raw-leaves` computes for content under one block.
func CID(content string) string {
	h, err := mh.Sum([]byte(content), mh.SHA2_256, -1)
	if err != nil {
		panic(err) // sha2-256 is always registered
	}
	s, err := cid.NewCidV1(cid.Raw, h).StringOfBase(multibase.Base32)
	if err != nil {
		panic(err)
	}
	return s
}

// ParseCID checks that s is a CID of the form CID makes.
func ParseCID(s string) bool {
	c, err := cid.Decode(s)
	if err != nil || c.Version() != 1 || c.Type() != cid.Raw || c.Prefix().MhType != mh.SHA2_256 {
		return false
	}
	str, err := c.StringOfBase(multibase.Base32)
	return err == nil && str == s
}
