package client

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"net/url"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// Receipt fetches the marketplace's signed receipt of a final execution of
// the key's wallet, as its exact bytes: keep them, and read them with
// VerifyReceipt. Before the execution is final the error's code is
// not_final.
func (c *Client) Receipt(ctx context.Context, id string) ([]byte, error) {
	raw, err := do[json.RawMessage](ctx, c, "GET", "/v1/executions/"+url.PathEscape(id)+"/receipt", nil)
	return raw, err
}

// Ruling fetches the marketplace's signed ruling of the resolved dispute of
// an execution of the key's wallet, as its exact bytes, to read with
// VerifyRuling. The error's code is dispute_not_found without a dispute,
// not_final while it is open.
func (c *Client) Ruling(ctx context.Context, id string) ([]byte, error) {
	raw, err := do[json.RawMessage](ctx, c, "GET", "/v1/executions/"+url.PathEscape(id)+"/ruling", nil)
	return raw, err
}

// VerifyReceipt checks a receipt offline, as received, against the
// marketplace's signing key (signing_public_key in /.well-known/crtx.json,
// kept from before), and returns what it states. The signature is checked
// over the RFC 8785 form of exactly those bytes; a member the receipt's
// layout does not have, or a name given twice (in any case), is refused
// (api.ReadReceipt). It takes bytes, not a Receipt, because a decoded
// receipt has already lost what a decoder dropped.
func VerifyReceipt(data []byte, marketplace ed25519.PublicKey) (api.Receipt, error) {
	return verifySigned(api.ReadReceipt, "receipt", data, marketplace)
}

// VerifyRuling checks a dispute's ruling offline, as VerifyReceipt does a
// receipt.
func VerifyRuling(data []byte, marketplace ed25519.PublicKey) (api.Ruling, error) {
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
