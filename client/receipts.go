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

// VerifyReceipt checks a receipt offline, as received, against the
// marketplace's signing key (signing_public_key in /.well-known/crtx.json,
// kept from before), and returns what it states. The signature is checked
// over the RFC 8785 form of exactly those bytes; a member the receipt's
// layout does not have, or a name given twice (in any case), is refused
// (api.ReadReceipt). It takes bytes, not a Receipt, because a decoded
// receipt has already lost what a decoder dropped.
func VerifyReceipt(data []byte, marketplace ed25519.PublicKey) (api.Receipt, error) {
	r, signed, signature, err := api.ReadReceipt(data)
	if err != nil {
		return api.Receipt{}, err
	}
	sig, ok := strings.CutPrefix(signature, "ed25519:")
	if !ok {
		return api.Receipt{}, errors.New("the receipt's signature lacks the ed25519: prefix")
	}
	if !crtx.VerifyBase58(marketplace, signed, sig) {
		return api.Receipt{}, errors.New("the receipt's signature does not verify against the marketplace key")
	}
	return r, nil
}
