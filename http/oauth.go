package http

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/oauth"
)

// The OAuth endpoints of the MCP authorization spec: metadata (RFC 9728,
// RFC 8414), dynamic registration (RFC 7591), token (RFC 6749 §3.2) and
// revocation (RFC 7009). The authorization endpoint is a page (the web
// package's consent page). Errors are OAuth's own body, not the seed's.

// OAuth endpoint paths.
const (
	OAuthAuthorizePath = "/oauth/authorize"
	oauthTokenPath     = "/oauth/token"
	oauthRegisterPath  = "/oauth/register"
	oauthRevokePath    = "/oauth/revoke"
)

func (s *Server) resourceMetadata(w http.ResponseWriter, r *http.Request) error {
	base := s.market.Config().PublicURL
	writeJSON(w, http.StatusOK, oauth.ResourceMetadata{Resource: s.market.Connectors.Resource(), AuthorizationServers: []string{base},
		ScopesSupported: []string{oauth.Scope}, BearerMethodsSupported: []string{"header"},
		ResourceName: "crtx agent marketplace (MCP)", ResourceDocumentation: base + "/docs#mcp"})
	return nil
}

func (s *Server) serverMetadata(w http.ResponseWriter, r *http.Request) error {
	base := s.market.Config().PublicURL
	none := []string{"none"}
	writeJSON(w, http.StatusOK, oauth.ServerMetadata{Issuer: base, AuthorizationEndpoint: base + OAuthAuthorizePath,
		TokenEndpoint: base + oauthTokenPath, RegistrationEndpoint: base + oauthRegisterPath, RevocationEndpoint: base + oauthRevokePath,
		ScopesSupported: []string{oauth.Scope, oauth.OfflineAccess}, ResponseTypesSupported: []string{"code"},
		ResponseModesSupported: []string{"query"}, GrantTypesSupported: []string{"authorization_code", "refresh_token"},
		TokenEndpointAuthMethodsSupported: none, RevocationEndpointAuthMethods: none, CodeChallengeMethodsSupported: []string{"S256"},
		ClientIDMetadataDocumentSupported: true, AuthorizationResponseIssParameter: true,
		ServiceDocumentation: base + "/docs#mcp"})
	return nil
}

func (s *Server) registerClient(w http.ResponseWriter, r *http.Request) error {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		return oauth.Errorf(oauth.InvalidClientMetadata, "send the client metadata as JSON with Content-Type: application/json")
	}
	body, err := io.ReadAll(r.Body)
	if err := tooLarge(err); err != nil {
		return err
	}
	if err != nil {
		return oauth.Errorf(oauth.InvalidClientMetadata, "the body could not be read")
	}
	c, err := s.market.Connectors.RegisterClient(r.Context(), body)
	w.Header().Set("Cache-Control", "no-store")
	return reply(w, http.StatusCreated, oauth.Registration{ClientID: c.ID, ClientIDIssuedAt: c.CreatedAt.Unix(), ClientName: c.Name,
		RedirectURIs: c.RedirectURIs, GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		TokenEndpointAuthMethod: "none", Scope: oauth.Scope}, err)
}

// oauthForm reads a token or revocation request's form body.
func oauthForm(r *http.Request) error {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		return oauth.Errorf(oauth.InvalidRequest, "send the parameters as application/x-www-form-urlencoded")
	}
	if err := r.ParseForm(); err != nil {
		if err := tooLarge(err); err != nil {
			return err
		}
		return oauth.Errorf(oauth.InvalidRequest, "the form could not be read")
	}
	// A parameter given twice is refused (RFC 6749 §3.1), as is one that
	// is not text.
	for k, vs := range r.PostForm {
		if len(vs) > 1 {
			return oauth.Errorf(oauth.InvalidRequest, "%s is given more than once", k)
		}
		if !crtx.IsText(k) || !crtx.IsText(vs[0]) {
			return oauth.Errorf(oauth.InvalidRequest, "the form holds bytes that are not text")
		}
	}
	return nil
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) error {
	if err := oauthForm(r); err != nil {
		return err
	}
	f := r.PostForm.Get
	t, err := s.market.Connectors.Token(r.Context(), market.TokenRequest{GrantType: f("grant_type"), Code: f("code"), RedirectURI: f("redirect_uri"),
		ClientID: clientID(r), CodeVerifier: f("code_verifier"), RefreshToken: f("refresh_token"), Resource: f("resource"), Scope: f("scope")})
	// Tokens are never cached (RFC 6749 §5.1).
	w.Header().Set("Cache-Control", "no-store")
	return reply(w, http.StatusOK, t, err)
}

func (s *Server) revoke(w http.ResponseWriter, r *http.Request) error {
	if err := oauthForm(r); err != nil {
		return err
	}
	if r.PostForm.Get("token") == "" {
		return oauth.Errorf(oauth.InvalidRequest, "token is missing")
	}
	if err := s.market.Connectors.RevokeToken(r.Context(), r.PostForm.Get("token"), clientID(r)); err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	return nil
}

// clientID is the request's client_id: the form's, or the user name of
// HTTP Basic authentication (RFC 6749 §2.3.1), which a client registered
// for a secret sends; the secret itself proves nothing here (clients are
// public, PKCE binds the code) and is not read.
func clientID(r *http.Request) string {
	if id := r.PostForm.Get("client_id"); id != "" {
		return id
	}
	if user, _, ok := r.BasicAuth(); ok {
		if id, err := url.QueryUnescape(user); err == nil {
			return id
		}
	}
	return ""
}

// oauthCORS lets a browser-based MCP client (the Inspector, a web host)
// read the metadata and use the token endpoints from its own origin. The
// endpoints carry no cookie and take no ambient credential.
func oauthCORS(h func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		hd := w.Header()
		hd.Set("Access-Control-Allow-Origin", "*")
		hd.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
		hd.Set("Access-Control-Allow-Headers", "Content-Type, Accept, Authorization, MCP-Protocol-Version")
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return nil
		}
		return h(w, r)
	}
}

// writeOAuthError answers an OAuth refusal: 401 for a client that is not
// known (RFC 6749 §5.2), else 400.
func writeOAuthError(w http.ResponseWriter, err error) bool {
	var oe *oauth.Error
	if !errors.As(err, &oe) {
		return false
	}
	status := http.StatusBadRequest
	if oe.Code == oauth.InvalidClient {
		status = http.StatusUnauthorized
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, oauth.ErrorBody{Error: oe.Code, ErrorDescription: oe.Description})
	return true
}
