package client

import (
	"context"
	"crypto/ed25519"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// Challenge asks for a sign-in message for wallet.
func (c *Client) Challenge(ctx context.Context, wallet string) (api.ChallengeResponse, error) {
	return do[api.ChallengeResponse](ctx, c, "POST", "/v1/auth/challenge", map[string]string{"wallet": wallet})
}

// CreateSession exchanges a signed challenge for a session.
func (c *Client) CreateSession(ctx context.Context, wallet, message, signature string) (api.SessionResponse, error) {
	var out api.SessionResponse
	err := c.call(ctx, "POST", "/v1/auth/session",
		map[string]string{"wallet": wallet, "message": message, "signature": signature}, &out)
	return out, err
}

// SignIn runs the whole sign-in with a wallet key and returns a client that
// acts with the new session. That client keeps the key, in memory, to sign
// the listing statements of CreateListing and UpdateListing.
func (c *Client) SignIn(ctx context.Context, key ed25519.PrivateKey) (*Client, api.SessionResponse, error) {
	wallet := crtx.Address(key.Public().(ed25519.PublicKey))
	ch, err := c.Challenge(ctx, wallet)
	if err != nil {
		return nil, api.SessionResponse{}, err
	}
	s, err := c.CreateSession(ctx, wallet, ch.Message, crtx.SignBase58(key, []byte(ch.Message)))
	if err != nil {
		return nil, s, err
	}
	signed := c.WithToken(s.SessionToken)
	signed.wallet = key
	return signed, s, nil
}

// SignOut ends the client's session.
func (c *Client) SignOut(ctx context.Context) error {
	return c.call(ctx, "DELETE", "/v1/auth/session", nil, nil)
}
