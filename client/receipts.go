package client

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/url"

	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/verify"
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
// kept from before), and returns what it states (verify.Receipt).
func VerifyReceipt(data []byte, marketplace ed25519.PublicKey) (api.Receipt, error) {
	return verify.Receipt(data, marketplace)
}

// VerifyRuling checks a dispute's ruling offline, as VerifyReceipt does a
// receipt.
func VerifyRuling(data []byte, marketplace ed25519.PublicKey) (api.Ruling, error) {
	return verify.Ruling(data, marketplace)
}
