package verify

import (
	"crypto/ed25519"
	"errors"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// Receipt checks a receipt offline, as received, against the
// marketplace's signing key (signing_public_key in /.well-known/crtx.json,
// kept from before), and returns what it states. The signature is checked
// over the RFC 8785 form of exactly those bytes; a member the receipt's
// layout does not have, or a name given twice (in any case), is refused
// (api.ReadReceipt). It takes bytes, not a Receipt, because a decoded
// receipt has already lost what a decoder dropped.
func Receipt(data []byte, marketplace ed25519.PublicKey) (api.Receipt, error) {
	return verifySigned(api.ReadReceipt, "receipt", data, marketplace)
}

// Ruling checks a dispute's ruling offline, as Receipt does a receipt.
func Ruling(data []byte, marketplace ed25519.PublicKey) (api.Ruling, error) {
	return verifySigned(api.ReadRuling, "ruling", data, marketplace)
}

// verifySigned reads a statement the marketplace signs with read and
// checks its signature with the marketplace's key.
func verifySigned[T any](read func([]byte) (T, []byte, string, error), what string, data []byte, marketplace ed25519.PublicKey) (T, error) {
	var zero T
	v, signed, signature, err := read(data)
	if err != nil {
		return zero, err
	}
	sig, ok := strings.CutPrefix(signature, "ed25519:")
	if !ok {
		return zero, errors.New("the " + what + "'s signature lacks the ed25519: prefix")
	}
	if !crtx.VerifyBase58(marketplace, signed, sig) {
		return zero, errors.New("the " + what + "'s signature does not verify against the marketplace key")
	}
	return v, nil
}
