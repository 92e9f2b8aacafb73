package oauth_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/oauth"
)

// RFC 7636 Appendix B: the verifier and the S256 challenge it gives.
func TestCheckPKCE(t *testing.T) {
	const verifier, challenge = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
	if !oauth.CheckPKCE(verifier, challenge) {
		t.Error("RFC 7636's own example does not match")
	}
	if !oauth.ValidChallenge(challenge) || oauth.ValidChallenge(challenge[:42]) || oauth.ValidChallenge(strings.Repeat("+", 43)) {
		t.Error("ValidChallenge accepts the wrong shapes")
	}
	for _, v := range []string{verifier[:42], verifier + "!", strings.Repeat("a", 129), "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXl"} {
		if oauth.CheckPKCE(v, challenge) {
			t.Errorf("verifier %q matched", v)
		}
	}
}

func TestCheckRedirectURI(t *testing.T) {
	for _, ok := range []string{"https://claude.ai/api/mcp/auth_callback", "http://127.0.0.1:33418/callback", "http://localhost/cb",
		"http://[::1]:8080/cb", "com.example.app:/oauth", "https://a.example/cb?x=1",
		"cursor://anysphere.cursor-mcp/oauth/callback", "claude://claude.ai/mcp-auth-callback/sdk", "https://10.0.0.1:8443/cb"} {
		if err := oauth.CheckRedirectURI(ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"http://example.com/cb", "https://a.example/cb#frag", "javascript:alert(1)", "data:text/html,x",
		"/relative", "https://user:pw@a.example/cb", "ftp://a.example/cb", "https:///nohost", "", "https://*/cb", "https://a;b/cb",
		"file:///etc/passwd", "blob:https://a.example/x", "vbscript:x"} {
		if err := oauth.CheckRedirectURI(bad); !errors.Is(err, oauth.ErrRedirectURI) {
			t.Errorf("%q accepted (%v)", bad, err)
		}
	}
}

// Loopback redirects match on any port (RFC 8252 §7.3); nothing else
// matches but exactly.
func TestRedirectAllowed(t *testing.T) {
	reg := []string{"http://127.0.0.1/callback", "https://host.example/cb"}
	for uri, want := range map[string]bool{
		"http://127.0.0.1:5555/callback": true, "http://127.0.0.1/callback": true, "https://host.example/cb": true,
		"http://127.0.0.1:5555/other": false, "http://localhost:5555/callback": false, "https://host.example:444/cb": false,
		"https://host.example/cb?x=1": false, "https://host.example/cb/": false,
	} {
		if got := oauth.RedirectAllowed(reg, uri); got != want {
			t.Errorf("RedirectAllowed(%s) = %v, want %v", uri, got, want)
		}
	}
}

func TestClientIDIsURL(t *testing.T) {
	for id, want := range map[string]bool{"https://app.example/client.json": true, "https://app.example/": false, "https://app.example": false,
		"oc_3kTMd9PqY8mV2xWz": false, "https://u@app.example/c.json": false, "https://app.example/c.json#x": false} {
		if got := oauth.ClientIDIsURL(id); got != want {
			t.Errorf("ClientIDIsURL(%s) = %v, want %v", id, got, want)
		}
	}
}

// A client asking for a secret or for grants not offered is read as the
// public client it can be; a name that would display as another is not.
func TestParseClientMetadata(t *testing.T) {
	m, err := oauth.ParseClientMetadata([]byte(`{"client_name":"Host","redirect_uris":["https://a.example/cb"],` +
		`"token_endpoint_auth_method":"client_secret_basic","grant_types":["authorization_code","client_credentials"],"response_types":["code","token"]}`))
	if err != nil || m.TokenEndpointAuthMethod != "none" || len(m.GrantTypes) != 1 || len(m.ResponseTypes) != 1 {
		t.Errorf("parsed %+v, %v", m, err)
	}
	for _, name := range []string{"Claude\u202eedualC", "a\u0000b", "tab\there", "zero\u200bwidth"} {
		if _, err := oauth.ParseClientMetadata([]byte(`{"client_name":"` + name + `","redirect_uris":["https://a.example/cb"]}`)); !errors.Is(err, oauth.ErrClientMetadata) {
			t.Errorf("client_name %s accepted (%v)", name, err)
		}
	}
}

func TestCheckScope(t *testing.T) {
	for _, ok := range []string{"", "mcp", "mcp offline_access", "offline_access"} {
		if err := oauth.CheckScope(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	var oe *oauth.Error
	if err := oauth.CheckScope("mcp admin"); !errors.As(err, &oe) || oe.Code != oauth.InvalidScope {
		t.Errorf("an unknown scope: %v", err)
	}
}

// Client metadata from anyone (a registration, a document) never panics,
// and what it accepts has only redirect URIs CheckRedirectURI accepts and
// asks for no secret.
func FuzzParseClientMetadata(f *testing.F) {
	f.Add([]byte(`{"client_name":"Host","redirect_uris":["http://127.0.0.1/cb"],"token_endpoint_auth_method":"none"}`))
	f.Add([]byte(`{"redirect_uris":["com.example.app:/cb"],"grant_types":["authorization_code","refresh_token"],"response_types":["code"]}`))
	f.Add([]byte(`{"redirect_uris":["javascript:alert(1)"]}`))
	f.Add([]byte(`{"redirect_uris":"https://a.example/cb"}`))
	f.Add([]byte(`{"client_name":"a\u0000b","redirect_uris":["https://a.example/cb"]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := oauth.ParseClientMetadata(body)
		if err != nil {
			if !errors.Is(err, oauth.ErrClientMetadata) && !errors.Is(err, oauth.ErrRedirectURI) {
				t.Fatalf("an error of no kind: %v", err)
			}
			return
		}
		if len(m.RedirectURIs) == 0 || len(m.RedirectURIs) > oauth.MaxRedirectURIs {
			t.Fatalf("accepted %d redirect URIs", len(m.RedirectURIs))
		}
		for _, u := range m.RedirectURIs {
			if oauth.CheckRedirectURI(u) != nil {
				t.Fatalf("accepted redirect URI %q", u)
			}
		}
		if !crtx.IsText(m.ClientName) {
			t.Fatalf("accepted client_name %q, which a database cannot store", m.ClientName)
		}
		if m.TokenEndpointAuthMethod != "none" {
			t.Fatalf("accepted token_endpoint_auth_method %q", m.TokenEndpointAuthMethod)
		}
	})
}
