package e2e_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/oauth"
)

// connector drives the OAuth endpoints as an MCP host does, and the
// consent page as its person's browser does (with a session cookie).
type connector struct {
	t        *testing.T
	e        *env
	clientID string
	redirect string
	verifier string
	browser  *http.Client // follows no redirect
}

func newConnector(t *testing.T, e *env, clientID, redirect string) *connector {
	return &connector{t: t, e: e, clientID: clientID, redirect: redirect, verifier: strings.Repeat("v", 20) + crtx.RandomBase62(30),
		browser: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (c *connector) challenge() string {
	sum := sha256.Sum256([]byte(c.verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// authorizeURL is the authorization request, with changes to its
// parameters ("" deletes one).
func (c *connector) authorizeURL(change map[string]string) string {
	q := url.Values{"response_type": {"code"}, "client_id": {c.clientID}, "redirect_uri": {c.redirect}, "state": {"st4te"},
		"code_challenge": {c.challenge()}, "code_challenge_method": {"S256"}, "resource": {c.e.d.URL + "/mcp"}, "scope": {"mcp offline_access"}}
	for k, v := range change {
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
	}
	return c.e.d.URL + "/oauth/authorize?" + q.Encode()
}

// page GETs a page as the signed-in person (session "" for none).
func (c *connector) page(u, session string) (*http.Response, string) {
	c.t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	if session != "" {
		req.AddCookie(&http.Cookie{Name: "crtx_session", Value: session})
	}
	resp, err := c.browser.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

var hiddenField = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)

// consent opens the consent page and answers it; it returns where the
// browser was sent.
// form opens the consent page and returns its form's fields.
func (c *connector) form(session string) url.Values {
	c.t.Helper()
	resp, body := c.page(c.authorizeURL(nil), session)
	if resp.StatusCode != 200 {
		c.t.Fatalf("consent page: %d %.300s", resp.StatusCode, body)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	if want := "form-action 'self' " + origin(c.redirect); !strings.Contains(csp, want) {
		c.t.Errorf("the consent page's CSP %q lacks %q: the browser would not follow the redirect", csp, want)
	}
	form := url.Values{}
	for _, m := range hiddenField.FindAllStringSubmatch(body, -1) {
		form.Set(m[1], htmlUnescape(m[2]))
	}
	return form
}

// post sends a consent form as the signed-in person's browser.
func (c *connector) post(session string, form url.Values) (*http.Response, string) {
	c.t.Helper()
	req, _ := http.NewRequest("POST", c.e.d.URL+"/oauth/authorize", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: "crtx_session", Value: session})
	r, err := c.browser.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	return r, string(b)
}

// consent opens the consent page and answers it; it returns where the
// browser was sent.
func (c *connector) consent(session string, answer url.Values) *url.URL {
	c.t.Helper()
	form := c.form(session)
	for k, v := range answer {
		form[k] = v
	}
	r, body := c.post(session, form)
	if r.StatusCode != http.StatusSeeOther {
		c.t.Fatalf("consent: %d %.300s", r.StatusCode, body)
	}
	to, err := url.Parse(r.Header.Get("Location"))
	if err != nil {
		c.t.Fatal(err)
	}
	return to
}

func origin(u string) string {
	p, _ := url.Parse(u)
	return p.Scheme + "://" + p.Host
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&amp;", "&", "&#43;", "+", "&#34;", `"`, "&#39;", "'", "&lt;", "<", "&gt;", ">").Replace(s)
}

// allow consents with env and limit and returns the code.
func (c *connector) allow(session string, env crtx.Environment, limit string) string {
	c.t.Helper()
	to := c.consent(session, url.Values{"decision": {"allow"}, "environment": {string(env)}, "spend_limit": {limit}})
	q := to.Query()
	if !strings.HasPrefix(to.String(), c.redirect+"?") || q.Get("code") == "" || q.Get("state") != "st4te" || q.Get("iss") != c.e.d.URL {
		c.t.Fatalf("consent sent the browser to %s; want %s with a code, the state and iss", to, c.redirect)
	}
	return q.Get("code")
}

// token posts a token request; it returns the status and the body.
func (c *connector) token(form url.Values) (int, map[string]any) {
	c.t.Helper()
	return oauthPost(c.t, c.e, "/oauth/token", form)
}

func oauthPost(t *testing.T, e *env, path string, form url.Values) (int, map[string]any) {
	t.Helper()
	resp, err := e.http.Post(e.d.URL+path, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	if resp.Header.Get("Cache-Control") != "no-store" && resp.StatusCode != 429 {
		t.Errorf("%s answered %d without Cache-Control: no-store", path, resp.StatusCode)
	}
	return resp.StatusCode, out
}

func (c *connector) exchange(code string) (int, map[string]any) {
	return c.token(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {c.redirect},
		"client_id": {c.clientID}, "code_verifier": {c.verifier}, "resource": {c.e.d.URL + "/mcp"}})
}

func register(t *testing.T, e *env, body string) (int, map[string]any) {
	t.Helper()
	resp, err := e.http.Post(e.d.URL+"/oauth/register", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// mcpStatus initializes an MCP session with token and returns the status
// and the WWW-Authenticate challenge.
func mcpStatus(t *testing.T, e *env, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", e.d.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}

// An MCP host connects by OAuth: it finds the metadata from a 401,
// registers, sends its person to consent, and gets a key with the
// environment and spend limit chosen there, which it refreshes and
// revokes; the key is listed with the person's others.
func TestOAuthConnector(t *testing.T) {
	m := newMarket(t, "100")
	e := m.env
	agent := m.list(newService(t, echo), "0.01")
	session := m.callerC.Token()

	status, challenge := mcpStatus(t, e, "")
	if status != 401 || !strings.Contains(challenge, `resource_metadata="`+e.d.URL+`/.well-known/oauth-protected-resource/mcp"`) || strings.Contains(challenge, "invalid_token") {
		t.Fatalf("/mcp without a token: %d, WWW-Authenticate %q", status, challenge)
	}
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	getJSON(t, e, "/.well-known/oauth-protected-resource/mcp", &prm)
	if prm.Resource != e.d.URL+"/mcp" || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != e.d.URL {
		t.Fatalf("protected-resource metadata: %+v", prm)
	}
	var asm map[string]any
	getJSON(t, e, "/.well-known/oauth-authorization-server", &asm)
	if asm["issuer"] != e.d.URL || asm["token_endpoint"] != e.d.URL+"/oauth/token" || asm["client_id_metadata_document_supported"] != true ||
		mustJSON(asm["code_challenge_methods_supported"]) != `["S256"]` {
		t.Fatalf("authorization-server metadata: %v", asm)
	}

	t.Run("registration refusals", func(t *testing.T) {
		for body, want := range map[string]string{
			`{"redirect_uris":["http://example.com/cb"]}`:                                   oauth.InvalidRedirectURI,
			`{"redirect_uris":["javascript:alert(1)"]}`:                                     oauth.InvalidRedirectURI,
			`{"redirect_uris":["https://a.example/cb#x"]}`:                                  oauth.InvalidRedirectURI,
			`{"redirect_uris":[]}`:                                                          oauth.InvalidRedirectURI,
			`{"redirect_uris":["https://*/cb"]}`:                                            oauth.InvalidRedirectURI,
			`{"client_name":"Claude\u202eedualC","redirect_uris":["https://a.example/cb"]}`: oauth.InvalidClientMetadata,
			`[1]`: oauth.InvalidClientMetadata,
		} {
			status, out := register(t, e, body)
			if status != 400 || out["error"] != want {
				t.Errorf("register %s: %d %v; want 400 %s", body, status, out, want)
			}
		}
		// A client that asks for a secret, or for grants not offered here, is
		// registered as the public client it can be (RFC 7591 §3.2.1), with
		// the redirect URIs native hosts use.
		status, out := register(t, e, `{"client_name":"Hosted","redirect_uris":["https://claude.ai/api/mcp/auth_callback","cursor://anysphere.cursor-mcp/oauth/callback","claude://claude.ai/mcp-auth-callback/sdk"],`+
			`"token_endpoint_auth_method":"client_secret_post","grant_types":["authorization_code","client_credentials"]}`)
		if status != 201 || out["token_endpoint_auth_method"] != "none" || mustJSON(out["grant_types"]) != `["authorization_code","refresh_token"]` {
			t.Errorf("a client asking for a secret: %d %v", status, out)
		}
	})

	status, reg := register(t, e, `{"client_name":"Test Host","redirect_uris":["http://127.0.0.1/callback"],"grant_types":["authorization_code","refresh_token"],"token_endpoint_auth_method":"none"}`)
	if status != 201 || !strings.HasPrefix(reg["client_id"].(string), "oc_") {
		t.Fatalf("register: %d %v", status, reg)
	}
	// A native client listens on a port of its own: loopback redirects
	// match on any port (RFC 8252 §7.3).
	c := newConnector(t, e, reg["client_id"].(string), "http://127.0.0.1:38917/callback")

	t.Run("requests that cannot go back to the app", func(t *testing.T) {
		for name, change := range map[string]map[string]string{
			"unknown client":     {"client_id": "oc_nobody"},
			"another redirect":   {"redirect_uri": "https://evil.example/callback"},
			"no client":          {"client_id": ""},
			"a path not its own": {"redirect_uri": "http://127.0.0.1:38917/other"},
		} {
			resp, body := c.page(c.authorizeURL(change), session)
			if resp.StatusCode != 400 || resp.Header.Get("Location") != "" || !strings.Contains(body, "This app cannot connect") {
				t.Errorf("%s: %d to %q; want a 400 page and no redirect", name, resp.StatusCode, resp.Header.Get("Location"))
			}
		}
	})
	// Anyone may register a redirect URI, so a bad request is told on a
	// page, with a link back to the app carrying the error, rather than
	// sent there unasked (RFC 9700 §4.11.2).
	t.Run("requests refused with a way back to the app", func(t *testing.T) {
		for name, c2 := range map[string]struct {
			change map[string]string
			want   string
		}{
			"no PKCE":          {map[string]string{"code_challenge": ""}, oauth.InvalidRequest},
			"plain PKCE":       {map[string]string{"code_challenge_method": "plain"}, oauth.InvalidRequest},
			"another resource": {map[string]string{"resource": "https://other.example/mcp"}, oauth.InvalidTarget},
			"another scope":    {map[string]string{"scope": "admin"}, oauth.InvalidScope},
			"token response":   {map[string]string{"response_type": "token"}, oauth.UnsupportedResponse},
		} {
			resp, body := c.page(c.authorizeURL(c2.change), session)
			m := regexp.MustCompile(`href="(` + regexp.QuoteMeta(c.redirect) + `[^"]*)"`).FindStringSubmatch(body)
			if resp.StatusCode != 400 || resp.Header.Get("Location") != "" || m == nil {
				t.Errorf("%s: %d to %q; want a 400 page with a link back", name, resp.StatusCode, resp.Header.Get("Location"))
				continue
			}
			back, _ := url.Parse(htmlUnescape(m[1]))
			if back.Query().Get("error") != c2.want || back.Query().Get("state") != "st4te" || back.Query().Get("iss") != e.d.URL {
				t.Errorf("%s: the way back is %s; want error=%s with the state and iss", name, back, c2.want)
			}
		}
	})
	t.Run("signed out", func(t *testing.T) {
		resp, _ := c.page(c.authorizeURL(nil), "")
		to, _ := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != 303 || to.Path != "/login" || to.Query().Get("connect") != "1" || !strings.HasPrefix(to.Query().Get("next"), "/oauth/authorize?") {
			t.Fatalf("signed out: %d to %q; want the sign-in page, coming back here", resp.StatusCode, to)
		}
		_, body := c.page(e.d.URL+to.String(), "")
		if !strings.Contains(body, "Test Host asks to connect to crtx") || !strings.Contains(body, `name="next" value="/oauth/authorize?`) {
			t.Errorf("the sign-in page does not say why, or does not come back: %.2000s", body)
		}
	})
	t.Run("denied", func(t *testing.T) {
		to := c.consent(session, url.Values{"decision": {"deny"}})
		if to.Query().Get("error") != oauth.AccessDenied || to.Query().Get("code") != "" || to.Query().Get("iss") != e.d.URL {
			t.Errorf("denied: sent to %s", to)
		}
	})

	t.Run("the consent form is the person's own, sent once", func(t *testing.T) {
		form := c.form(session)
		form.Set("decision", "allow")
		form.Set("environment", "devnet")
		form.Set("spend_limit", "1")
		// A token of this session's consent page for another authorization
		// request (another PKCE challenge) does not consent to this one.
		other := *c
		other.verifier = strings.Repeat("o", 50)
		for name, csrf := range map[string]string{"no token": "", "another session's": c.form(e.signIn(m.callerW).Token()).Get("csrf"), "a forged one": "1.x.y",
			"another request's": other.form(session).Get("csrf")} {
			f := url.Values{}
			for k, v := range form {
				f[k] = v
			}
			f.Set("csrf", csrf)
			if r, _ := c.post(session, f); r.StatusCode != 403 || r.Header.Get("Location") != "" {
				t.Errorf("%s: %d to %q; want 403 and no code", name, r.StatusCode, r.Header.Get("Location"))
			}
		}
		if r, _ := c.post(session, form); r.StatusCode != 303 || !strings.Contains(r.Header.Get("Location"), "code=") {
			t.Fatalf("the form itself: %d to %q", r.StatusCode, r.Header.Get("Location"))
		}
		if r, _ := c.post(session, form); r.StatusCode != 403 || r.Header.Get("Location") != "" {
			t.Errorf("the same form again: %d to %q; want 403 and no second code", r.StatusCode, r.Header.Get("Location"))
		}
	})

	t.Run("a code serves once, and only its client with its redirect and verifier", func(t *testing.T) {
		code := c.allow(session, crtx.Devnet, "1")
		wrong := *c
		wrong.verifier = strings.Repeat("w", 50)
		if status, out := wrong.exchange(code); status != 400 || out["error"] != oauth.InvalidGrant {
			t.Fatalf("a wrong verifier: %d %v", status, out)
		}
		for name, w := range map[string]connector{"another client": {clientID: "oc_other"}, "another redirect": {redirect: "http://127.0.0.1:1/callback"}} {
			other := *c
			if w.clientID != "" {
				other.clientID = w.clientID
			}
			if w.redirect != "" {
				other.redirect = w.redirect
			}
			code := c.allow(session, crtx.Devnet, "1")
			if status, out := other.exchange(code); status != 400 || out["error"] != oauth.InvalidGrant {
				t.Errorf("%s: %d %v", name, status, out)
			}
		}
		if status, out := c.exchange(code); status != 400 || out["error"] != oauth.InvalidGrant {
			t.Errorf("the code still served after a failed exchange: %d %v", status, out)
		}
		// Presented again after it gave a key, a code revokes that key: it
		// may have been stolen (RFC 6749 §4.1.2).
		code = c.allow(session, crtx.Devnet, "1")
		status, tok := c.exchange(code)
		if status != 200 {
			t.Fatalf("exchange: %d %v", status, tok)
		}
		runLogs.secret(tok["access_token"].(string), tok["refresh_token"].(string))
		// At once (the client's retry, racing the first exchange on
		// another replica), it is refused and the first keeps its key;
		// later, it revokes that key.
		if status, out := c.exchange(code); status != 400 || out["error"] != oauth.InvalidGrant {
			t.Errorf("a code exchanged twice: %d %v", status, out)
		}
		if status, _ := mcpStatus(t, e, tok["access_token"].(string)); status != 200 {
			t.Errorf("the key of a code presented twice at once was revoked: %d", status)
		}
		e.clock.Advance(15 * time.Second)
		if status, out := c.exchange(code); status != 400 || out["error"] != oauth.InvalidGrant {
			t.Errorf("a code exchanged again: %d %v", status, out)
		}
		if status, _ := mcpStatus(t, e, tok["access_token"].(string)); status != 401 {
			t.Errorf("the key of a code presented again still works: %d", status)
		}
		code = c.allow(session, crtx.Devnet, "1")
		e.clock.Advance(crtx.OAuthCodeTTL)
		if status, out := c.exchange(code); status != 400 || out["error"] != oauth.InvalidGrant {
			t.Errorf("an expired code served: %d %v", status, out)
		}
	})

	code := c.allow(session, crtx.Devnet, "0.015")
	status, tok := c.exchange(code)
	if status != 200 || tok["token_type"] != "Bearer" || tok["expires_in"] != float64(3600) || tok["scope"] != "mcp" {
		t.Fatalf("exchange: %d %v", status, tok)
	}
	access, refresh := tok["access_token"].(string), tok["refresh_token"].(string)
	runLogs.secret(access, refresh)
	if !strings.HasPrefix(access, crtx.TestKeyPrefix) || !strings.HasPrefix(refresh, crtx.RefreshPrefix) {
		t.Fatalf("tokens %q, %q; want a devnet key and a refresh token", access, refresh)
	}
	if status, _ := mcpStatus(t, e, access); status != 200 {
		t.Fatalf("/mcp with the access token: %d", status)
	}
	// The token is a devnet key with the 0.015 USDC limit the person set.
	app := e.anon.WithToken(access)
	if _, err := app.Execute(ctx, agent, run("x"), client.ExecuteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := app.Execute(ctx, agent, run("x"), client.ExecuteOptions{})
	wantCode(t, err, 402, crtx.CodeSpendLimitExceeded)
	keys, err := m.callerC.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var key crtx.APIKey
	for _, k := range keys {
		if k.Client == c.clientID {
			key = k
		}
	}
	if key.Name != "Test Host (MCP connector)" || key.Environment != crtx.Devnet || key.SpendLimit == nil || *key.SpendLimit != usdc("0.015") || key.ExecutionCount != 1 {
		t.Fatalf("the connector's key is listed as %+v", key)
	}

	// A connector reaches only the runs it made, and not the wallet's
	// webhook secret: another app's, or the person's own, are not its to read.
	personal := m.ran(t, m.key, agent)
	_, err = app.Execution(ctx, personal.ExecutionID)
	wantCode(t, err, 404, crtx.CodeExecutionNotFound)
	if page, err := app.Executions(ctx, nil); err != nil || page.Total != 1 || len(page.Executions) != 1 || page.Executions[0].ExecutionID == personal.ExecutionID {
		t.Errorf("the connector lists %+v, %v; want its one run", page, err)
	}
	_, err = app.WebhookSecret(ctx)
	wantCode(t, err, 401, crtx.CodeInvalidSession)

	// A refresh gives the key its next secret at once: the one it replaces
	// stops working though its hour is not over.
	e.clock.Advance(crtx.AccessTokenTTL / 2)
	refreshWith := func(token, clientID string) (int, map[string]any) {
		return c.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {token}, "client_id": {clientID}})
	}
	status, next := refreshWith(refresh, c.clientID)
	if status != 200 || next["access_token"] == access || next["refresh_token"] == refresh {
		t.Fatalf("refresh: %d %v", status, next)
	}
	runLogs.secret(next["access_token"].(string), next["refresh_token"].(string))
	if status, _ := mcpStatus(t, e, access); status != 401 {
		t.Errorf("the replaced token still works: %d", status)
	}
	if status, out := refreshWith(refresh, c.clientID); status != 400 || out["error"] != oauth.InvalidGrant {
		t.Errorf("a refresh token served twice: %d %v", status, out)
	}
	if status, out := refreshWith(next["refresh_token"].(string), "oc_other"); status != 400 || out["error"] != oauth.InvalidGrant {
		t.Errorf("another client's refresh: %d %v", status, out)
	}
	// An hour on, that one has expired: the 401 says so, and a refresh
	// (the client named by HTTP Basic, as a client registered for a secret
	// sends it) gives the next.
	e.clock.Advance(crtx.AccessTokenTTL)
	if status, challenge := mcpStatus(t, e, next["access_token"].(string)); status != 401 || !strings.Contains(challenge, `error="invalid_token"`) {
		t.Fatalf("an expired token: %d %q", status, challenge)
	}
	req, _ := http.NewRequest("POST", e.d.URL+"/oauth/token", strings.NewReader(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {next["refresh_token"].(string)}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(c.clientID), "a-secret-never-issued")
	resp, err := e.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&next)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("refresh with HTTP Basic: %d %v", resp.StatusCode, next)
	}
	runLogs.secret(next["access_token"].(string), next["refresh_token"].(string))
	if status, _ := mcpStatus(t, e, next["access_token"].(string)); status != 200 {
		t.Fatalf("/mcp with the refreshed token: %d", status)
	}
	// A refresh token rotated away an hour ago, presented again: one of
	// its holders stole it, so the whole grant goes (OAuth 2.1's refresh
	// token rotation); presented at once after its rotation (above) it
	// was only refused.
	if status, out := refreshWith(refresh, c.clientID); status != 400 || out["error"] != oauth.InvalidGrant {
		t.Errorf("a rotated refresh token again: %d %v", status, out)
	}
	if status, _ := mcpStatus(t, e, next["access_token"].(string)); status != 401 {
		t.Errorf("the grant's access token works after its rotated refresh token came back: %d", status)
	}
	if status, out := refreshWith(next["refresh_token"].(string), c.clientID); status != 400 || out["error"] != oauth.InvalidGrant {
		t.Errorf("the grant's refresh token works after its rotated one came back: %d %v", status, out)
	}

	// Connecting the app again replaces the connection: one key, one
	// limit, per app and wallet.
	status, again := c.exchange(c.allow(session, crtx.Devnet, "1"))
	if status != 200 {
		t.Fatalf("connect again: %d %v", status, again)
	}
	runLogs.secret(again["access_token"].(string), again["refresh_token"].(string))
	if status, _ := mcpStatus(t, e, next["access_token"].(string)); status != 401 {
		t.Errorf("the first connection still works after the second: %d", status)
	}
	live := 0
	keys, _ = m.callerC.Keys(ctx)
	for _, k := range keys {
		if k.Client == c.clientID && k.RevokedAt == nil {
			live++
		}
	}
	if live != 1 {
		t.Errorf("%d live keys of the app; want 1", live)
	}

	// Revocation: another client's id revokes nothing; the token alone
	// (an access token here) is proof enough.
	if status, _ := oauthPost(t, e, "/oauth/revoke", url.Values{"token": {again["access_token"].(string)}, "client_id": {"oc_other"}}); status != 200 {
		t.Fatalf("revoke as another client: %d", status)
	}
	if status, _ := mcpStatus(t, e, again["access_token"].(string)); status != 200 {
		t.Errorf("another client revoked the token: %d", status)
	}
	if status, _ := oauthPost(t, e, "/oauth/revoke", url.Values{"token": {again["access_token"].(string)}}); status != 200 {
		t.Fatalf("revoke: %d", status)
	}
	if status, _ := mcpStatus(t, e, again["access_token"].(string)); status != 401 {
		t.Errorf("the access token works after revocation: %d", status)
	}
	if status, out := refreshWith(again["refresh_token"].(string), c.clientID); status != 400 || out["error"] != oauth.InvalidGrant {
		t.Errorf("the refresh token works after revocation: %d %v", status, out)
	}
	if status, _ := oauthPost(t, e, "/oauth/revoke", url.Values{"token": {"crtx_rt_unknown"}}); status != 200 {
		t.Errorf("revoking an unknown token: %d, want 200 (RFC 7009 §2.2)", status)
	}
	// An app cannot revoke a key made by hand.
	if status, _ := oauthPost(t, e, "/oauth/revoke", url.Values{"token": {m.key.Token()}}); status != 200 {
		t.Errorf("revoking a hand-made key: %d", status)
	}
	if _, err := m.key.Wallet(ctx); err != nil {
		t.Errorf("a key made by hand was revoked by an app: %v", err)
	}

	t.Run("an unused registration lapses", func(t *testing.T) {
		_, reg := register(t, e, `{"client_name":"Idle","redirect_uris":["https://idle.example/cb"]}`)
		idle := newConnector(t, e, reg["client_id"].(string), "https://idle.example/cb")
		if resp, _ := idle.page(idle.authorizeURL(nil), session); resp.StatusCode != 200 {
			t.Fatalf("a new registration: %d", resp.StatusCode)
		}
		e.clock.Advance(crtx.UnusedClientTTL)
		if resp, _ := idle.page(idle.authorizeURL(nil), session); resp.StatusCode != 400 {
			t.Errorf("a day-old unused registration: %d, want 400", resp.StatusCode)
		}
		// The one that obtained a token is kept (the person signs in again:
		// sessions last a day too).
		if resp, _ := c.page(c.authorizeURL(nil), e.signIn(m.callerW).Token()); resp.StatusCode != 200 {
			t.Errorf("a used registration lapsed: %d", resp.StatusCode)
		}
	})

	t.Run("an idle connection lapses", func(t *testing.T) {
		status, tok := c.exchange(c.allow(e.signIn(m.callerW).Token(), crtx.Devnet, "1"))
		if status != 200 {
			t.Fatalf("connect: %d %v", status, tok)
		}
		runLogs.secret(tok["access_token"].(string), tok["refresh_token"].(string))
		e.clock.Advance(crtx.AccessTokenTTL + market.RefreshIdleTTL)
		if status, out := refreshWith(tok["refresh_token"].(string), c.clientID); status != 400 || out["error"] != oauth.InvalidGrant {
			t.Errorf("a refresh a month after the last access token: %d %v", status, out)
		}
	})
}

// A client identified by its metadata document's address: the document is
// fetched and must name itself; its redirect URIs bound the request.
func TestOAuthClientMetadataDocument(t *testing.T) {
	m := newMarket(t, "0")
	e := m.env
	session := m.callerC.Token()
	docs := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow.json" {
			// A document that never comes: held until the fetch gives up.
			select {
			case <-r.Context().Done():
			case <-time.After(time.Minute):
			}
			return
		}
		doc, ok := docs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, strings.ReplaceAll(doc, "SELF", "http://"+r.Host+r.URL.Path))
	}))
	defer srv.Close()
	docs["/client.json"] = `{"client_id":"SELF","client_name":"Doc Host","redirect_uris":["https://doc.example/callback"],"token_endpoint_auth_method":"none"}`
	docs["/impostor.json"] = `{"client_id":"https://someone.example/client.json","client_name":"Impostor","redirect_uris":["https://doc.example/callback"]}`
	docs["/cleartext.json"] = `{"client_id":"SELF","redirect_uris":["http://doc.example/callback"]}`
	// A document of a megabyte: valid JSON, far past what is read.
	docs["/huge.json"] = `{"client_id":"SELF","redirect_uris":["https://doc.example/callback"],"padding":"` + strings.Repeat("x", 1<<20) + `"}`

	c := newConnector(t, e, srv.URL+"/client.json", "https://doc.example/callback")
	resp, body := c.page(c.authorizeURL(nil), session)
	if resp.StatusCode != 200 || !strings.Contains(body, "Connect Doc Host to crtx") || !strings.Contains(body, "127.0.0.1") {
		t.Fatalf("consent page of a document client: %d %.500s", resp.StatusCode, body)
	}
	code := c.allow(session, crtx.Mainnet, "2")
	status, tok := c.exchange(code)
	if status != 200 || !strings.HasPrefix(tok["access_token"].(string), crtx.LiveKeyPrefix) {
		t.Fatalf("exchange: %d %v", status, tok)
	}
	runLogs.secret(tok["access_token"].(string), tok["refresh_token"].(string))
	for _, path := range []string{"/impostor.json", "/cleartext.json", "/missing.json", "/huge.json", "/slow.json"} {
		bad := newConnector(t, e, srv.URL+path, "https://doc.example/callback")
		if resp, _ := bad.page(bad.authorizeURL(nil), session); resp.StatusCode != 400 || resp.Header.Get("Location") != "" {
			t.Errorf("%s: %d to %q; want a 400 page", path, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	other := newConnector(t, e, srv.URL+"/client.json", "https://elsewhere.example/callback")
	if resp, _ := other.page(other.authorizeURL(nil), session); resp.StatusCode != 400 {
		t.Errorf("a redirect the document does not list: %d", resp.StatusCode)
	}
}

// Registration and the token endpoint are limited per client address.
func TestOAuthRateLimits(t *testing.T) {
	e := start(t, func(c *daemon.Config) { c.RateLimitIP = 1 })
	limited := false
	for range 5 {
		if status, _ := register(t, e, `{"redirect_uris":["https://a.example/cb"]}`); status == 429 {
			limited = true
		}
	}
	if !limited {
		t.Error("five registrations at once from one address were all accepted at 1 a second")
	}
	limited = false
	for range 5 {
		if status, _ := oauthPost(t, e, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}, "client_id": {"y"}}); status == 429 {
			limited = true
		}
	}
	if !limited {
		t.Error("five token requests at once from one address were all answered at 1 a second")
	}
}

func getJSON(t *testing.T, e *env, path string, v any) {
	t.Helper()
	resp, err := e.http.Get(e.d.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", path, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}
