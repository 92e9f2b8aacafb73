package market

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/siwx"
)

// SignInWithX is a fresh sign-in-with-x challenge: what a wallet that paid
// with x402 signs to read its executions (GET /v1/executions/{id} and its
// receipt) for siwx.MaxAge. Its nonce is the marketplace's MAC of its
// issuedAt, so no challenge is stored: a flood of 402s writes nothing.
func (m *Accounts) SignInWithX(ctx context.Context) siwx.Extension {
	now := m.now().UTC().Truncate(time.Millisecond)
	issued := now.Format(siwx.TimeLayout)
	base := m.siwxURI()
	ext := siwx.Extension{Info: siwx.Info{Domain: host(m.cfg.PublicURL), URI: base, Version: "1",
		Nonce: m.siwxNonce(issued), IssuedAt: issued, ExpirationTime: now.Add(siwx.MaxAge).Format(siwx.TimeLayout),
		Statement: "Read the crtx executions this wallet paid for.", Resources: []string{base}},
		SupportedChains: []siwx.Chain{}, Schema: siwx.Schema}
	for _, env := range []crtx.Environment{crtx.Mainnet, crtx.Devnet} {
		if c := m.cfg.Chains[env]; c != nil {
			if n, err := c.Network(ctx); err == nil {
				ext.SupportedChains = append(ext.SupportedChains, siwx.Chain{ChainID: n, Type: "ed25519", SignatureScheme: "siws"})
			}
		}
	}
	return ext
}

// siwxNonce is the nonce of a challenge issued at issued: 32 hex
// characters of a MAC keyed by the marketplace's signing key.
func (m *core) siwxNonce(issued string) string {
	key := sha256.Sum256(append([]byte("crtx sign-in-with-x nonce\x00"), m.cfg.Signer.Seed()...))
	mac := hmac.New(sha256.New, key[:])
	mac.Write([]byte(issued))
	return hex.EncodeToString(mac.Sum(nil)[:16])
}

// SignedInWithX authenticates a SIGN-IN-WITH-X header (the extension's
// "Verification Logic"): the domain and URI are this marketplace's, the
// challenge is one it issued less than siwx.MaxAge ago and not expired,
// the chain is one of its environments', and the wallet signed the
// message. The proof is not spent by use: within its five minutes it
// reads the wallet's own executions as often as a poll asks (the
// extension's nonce tracking is a SHOULD; a proof only ever reads).
func (m *Accounts) SignedInWithX(ctx context.Context, header string) (crtx.Principal, error) {
	p, err := siwx.Decode(header)
	if err != nil {
		return crtx.Principal{}, err
	}
	refuse := func(why string) (crtx.Principal, error) {
		return crtx.Principal{}, crtx.Errorf(crtx.CodeAuthenticationRequired, "the sign-in-with-x proof is refused: %s; sign a fresh challenge (GET /v1/x402/sign-in-with-x)", why)
	}
	now := m.now()
	issued, err := time.Parse(time.RFC3339Nano, p.IssuedAt)
	switch {
	case p.Domain != host(m.cfg.PublicURL):
		return refuse("its domain is not " + host(m.cfg.PublicURL))
	case p.URI != m.siwxURI():
		// The challenge's own: a proof signed for another resource is
		// not one for reading executions.
		return refuse("its URI is not " + m.siwxURI())
	case p.Version != "1":
		return refuse("its version is not 1")
	case err != nil:
		return refuse("issuedAt is not a time")
	case issued.After(now.Add(time.Minute)):
		return refuse("it was issued in the future")
	case now.Sub(issued) > siwx.MaxAge:
		return refuse("it is more than 5 minutes old")
	case !hmac.Equal([]byte(p.Nonce), []byte(m.siwxNonce(p.IssuedAt))):
		return refuse("its nonce was not issued by this marketplace")
	}
	if p.ExpirationTime != "" {
		if exp, err := time.Parse(time.RFC3339Nano, p.ExpirationTime); err != nil || !exp.After(now) {
			return refuse("it expired")
		}
	}
	if p.NotBefore != "" {
		if nb, err := time.Parse(time.RFC3339Nano, p.NotBefore); err != nil || nb.After(now) {
			return refuse("it is not valid yet")
		}
	}
	env, _, err := m.paymentChain(ctx, p.ChainID)
	if err != nil {
		return refuse("its chain is none of this marketplace's")
	}
	if err := p.Verify(); err != nil {
		return crtx.Principal{}, err
	}
	return crtx.Principal{Wallet: p.Address, Signed: env}, nil
}

// host is the host of a URL, with its port: the challenge's domain, which
// the extension's client (2.27) binds to the origin's host.
func host(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Host
}

// siwxURI is what a sign-in-with-x challenge is for, and a proof must
// name: reading the payer's executions.
func (m *core) siwxURI() string { return m.cfg.PublicURL + "/v1/executions" }
