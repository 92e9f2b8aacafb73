package client

import (
	"context"
	"crypto/ed25519"
	"errors"
	"net/url"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// Receipt fetches the marketplace's signed receipt of a final execution of
// the key's wallet; before the execution is final the error's code is
// not_final.
func (c *Client) Receipt(ctx context.Context, id string) (api.Receipt, error) {
	return do[api.Receipt](ctx, c, "GET", "/v1/executions/"+url.PathEscape(id)+"/receipt", nil)
}

// VerifyReceipt checks a receipt offline against the marketplace's signing
// key (signing_public_key in /.well-known/crtx.json, kept from before).
func VerifyReceipt(r api.Receipt, marketplace ed25519.PublicKey) error {
	sig, ok := strings.CutPrefix(r.Signature, "ed25519:")
	if !ok {
		return errors.New("the receipt's signature lacks the ed25519: prefix")
	}
	b, err := r.SignedBytes()
	if err != nil {
		return err
	}
	if !crtx.VerifyBase58(marketplace, b, sig) {
		return errors.New("the receipt's signature does not verify against the marketplace key")
	}
	return nil
}
