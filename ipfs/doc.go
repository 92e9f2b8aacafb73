// Package ipfs names results by content, as IPFS does: the CIDv1 that
// `ipfs add` would give a result's bytes.
package ipfs
