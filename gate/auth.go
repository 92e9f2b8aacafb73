package gate

import (
	"net/http"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/oauth"
)

// ResourceMetadataPath is the MCP endpoint's protected-resource metadata
// (RFC 9728 §3.1: the well-known prefix before the resource's path).
const ResourceMetadataPath = "/.well-known/oauth-protected-resource/mcp"

// Bearer returns the token of an Authorization: Bearer header.
func Bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// Principal authenticates the request with a session, an API key or an
// OAuth token, and applies the per-key rate limit.
func (g *Gate) Principal(r *http.Request) (crtx.Principal, error) {
	if r.Header.Get("Authorization") != "" && Bearer(r) == "" {
		return crtx.Principal{}, crtx.Errorf(crtx.CodeAuthenticationRequired, "the Authorization header must be \"Bearer <token>\"")
	}
	p, err := g.market.Accounts.Authenticate(r.Context(), Bearer(r))
	if err != nil {
		return p, err
	}
	return p, g.Limit(p)
}

// Session authenticates the request with a wallet session only: API keys
// never manage keys or act as creators.
func (g *Gate) Session(r *http.Request) (crtx.Principal, error) {
	p, err := g.Principal(r)
	if err != nil {
		return p, err
	}
	if p.Key != nil {
		return crtx.Principal{}, crtx.Errorf(crtx.CodeInvalidSession,
			"this endpoint needs a wallet session (Bearer crtx_sess_…); an API key cannot use it")
	}
	return p, nil
}

// APIKey authenticates with an API key only.
func (g *Gate) APIKey(r *http.Request) (crtx.Principal, error) {
	p, err := g.Principal(r)
	if err == nil && p.Key == nil {
		return p, crtx.Errorf(crtx.CodeInvalidAPIKey, "this endpoint needs an API key (Bearer crtx_live_… or crtx_test_…)")
	}
	return p, err
}

// Caller authenticates a protocol request as the REST interface does an
// execute: an API key (never a session), within the key's rate limit.
func (g *Gate) Caller(r *http.Request) (crtx.Principal, error) {
	if r.Header.Get("Authorization") == "" {
		return crtx.Principal{}, crtx.Errorf(crtx.CodeAuthenticationRequired, "send Authorization: Bearer crtx_live_… or crtx_test_… (an API key)")
	}
	return g.APIKey(r)
}

// Challenge is the WWW-Authenticate of a 401 from the MCP endpoint: where
// its OAuth metadata is (RFC 9728 §5.1), and invalid_token when a token
// was sent and refused (RFC 6750 §3.1), so a connector refreshes it.
func (g *Gate) Challenge(r *http.Request) string {
	c := `Bearer resource_metadata="` + g.market.Config().PublicURL + ResourceMetadataPath + `", scope="` + oauth.Scope + `"`
	if Bearer(r) != "" {
		c += `, error="invalid_token"`
	}
	return c
}
