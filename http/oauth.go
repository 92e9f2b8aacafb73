package http

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/market"
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

type resourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name"`
	ResourceDocumentation  string   `json:"resource_documentation"`
}

type serverMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	RevocationEndpoint                string   `json:"revocation_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	ResponseModesSupported            []string `json:"response_modes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethods     []string `json:"revocation_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
	AuthorizationResponseIssParameter bool     `json:"authorization_response_iss_parameter_supported"`
	ServiceDocumentation              string   `json:"service_documentation"`
}

func (s *Server) resourceMetadata(w http.ResponseWriter, r *http.Request) error {
	base := s.market.Config().PublicURL
	writeJSON(w, http.StatusOK, resourceMetadata{Resource: s.market.Connectors.Resource(), AuthorizationServers: []string{base},
		ScopesSupported: []string{crtx.OAuthScope}, BearerMethodsSupported: []string{"header"},
		ResourceName: "crtx agent marketplace (MCP)", ResourceDocumentation: base + "/docs#mcp"})
	return nil
}

func (s *Server) serverMetadata(w http.ResponseWriter, r *http.Request) error {
	base := s.market.Config().PublicURL
	none := []string{"none"}
	writeJSON(w, http.StatusOK, serverMetadata{Issuer: base, AuthorizationEndpoint: base + OAuthAuthorizePath,
		TokenEndpoint: base + oauthTokenPath, RegistrationEndpoint: base + oauthRegisterPath, RevocationEndpoint: base + oauthRevokePath,
		ScopesSupported: []string{crtx.OAuthScope, crtx.OfflineAccess}, ResponseTypesSupported: []string{"code"},
		ResponseModesSupported: []string{"query"}, GrantTypesSupported: []string{"authorization_code", "refresh_token"},
		TokenEndpointAuthMethodsSupported: none, RevocationEndpointAuthMethods: none, CodeChallengeMethodsSupported: []string{"S256"},
		ClientIDMetadataDocumentSupported: true, AuthorizationResponseIssParameter: true,
		ServiceDocumentation: base + "/docs#mcp"})
	return nil
}

// registration is RFC 7591 §3.2.1's answer.
type registration struct {
	ClientID                string   `json:"client_id"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	Scope                   string   `json:"scope"`
}

func (s *Server) registerClient(w http.ResponseWriter, r *http.Request) error {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		return crtx.OAuthErrorf(crtx.OAuthInvalidClientMetadata, "send the client metadata as JSON with Content-Type: application/json")
	}
	body, err := io.ReadAll(r.Body)
	if err := tooLarge(err); err != nil {
		return err
	}
	if err != nil {
		return crtx.OAuthErrorf(crtx.OAuthInvalidClientMetadata, "the body could not be read")
	}
	c, err := s.market.Connectors.RegisterClient(r.Context(), body)
	w.Header().Set("Cache-Control", "no-store")
	return reply(w, http.StatusCreated, registration{ClientID: c.ID, ClientIDIssuedAt: c.CreatedAt.Unix(), ClientName: c.Name,
		RedirectURIs: c.RedirectURIs, GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		TokenEndpointAuthMethod: "none", Scope: crtx.OAuthScope}, err)
}

// oauthForm reads a token or revocation request's form body.
func oauthForm(r *http.Request) error {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		return crtx.OAuthErrorf(crtx.OAuthInvalidRequest, "send the parameters as application/x-www-form-urlencoded")
	}
	if err := r.ParseForm(); err != nil {
		if err := tooLarge(err); err != nil {
			return err
		}
		return crtx.OAuthErrorf(crtx.OAuthInvalidRequest, "the form could not be read")
	}
	// A parameter given twice is refused (RFC 6749 §3.1), as is one that
	// is not text.
	for k, vs := range r.PostForm {
		if len(vs) > 1 {
			return crtx.OAuthErrorf(crtx.OAuthInvalidRequest, "%s is given more than once", k)
		}
		if !crtx.IsText(k) || !crtx.IsText(vs[0]) {
			return crtx.OAuthErrorf(crtx.OAuthInvalidRequest, "the form holds bytes that are not text")
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
		return crtx.OAuthErrorf(crtx.OAuthInvalidRequest, "token is missing")
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

// oauthErrorBody is RFC 6749 §5.2's error answer.
type oauthErrorBody struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

// writeOAuthError answers an OAuth refusal: 401 for a client that is not
// known (RFC 6749 §5.2), else 400.
func writeOAuthError(w http.ResponseWriter, err error) bool {
	var oe *crtx.OAuthError
	if !errors.As(err, &oe) {
		return false
	}
	status := http.StatusBadRequest
	if oe.Code == crtx.OAuthInvalidClient {
		status = http.StatusUnauthorized
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, oauthErrorBody{Error: oe.Code, ErrorDescription: oe.Description})
	return true
}
