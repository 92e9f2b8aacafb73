package crtx

import (
	"crypto/ed25519"
	"strings"

	"github.com/mr-tron/base58"
)

// ParseAddress checks that s is a wallet address: the base58 encoding of a
// 32-byte Ed25519 public key, exactly as a Solana address.
func ParseAddress(field, s string) (ed25519.PublicKey, error) {
	if len(s) < 32 || len(s) > 44 {
		return nil, InvalidField(field, "must be a base58 Ed25519 public key (32 to 44 characters)")
	}
	b, err := base58.Decode(s)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, InvalidField(field, "must be a base58 Ed25519 public key of 32 bytes")
	}
	// Refuse non-canonical spellings (leading "1"s that decode to the same bytes).
	if base58.Encode(b) != s {
		return nil, InvalidField(field, "is not in canonical base58")
	}
	return ed25519.PublicKey(b), nil
}

// Address is the base58 wallet address of a public key.
func Address(pub ed25519.PublicKey) string { return base58.Encode(pub) }

// SignBase58 signs msg and returns the base58 signature, as a Solana wallet's
// signMessage does.
func SignBase58(key ed25519.PrivateKey, msg []byte) string {
	return base58.Encode(ed25519.Sign(key, msg))
}

// VerifyBase58 checks a base58 Ed25519 signature, with or without the
// "ed25519:" prefix.
func VerifyBase58(pub ed25519.PublicKey, msg []byte, sig string) bool {
	b, err := base58.Decode(strings.TrimPrefix(sig, "ed25519:"))
	if err != nil || len(b) != ed25519.SignatureSize || len(pub) != ed25519.PublicKeySize {
		return false
	}
	return ed25519.Verify(pub, msg, b)
}
