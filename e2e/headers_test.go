package e2e_test

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
)

// browserClient is a plain client with a cookie jar that does not follow
// redirects, as a test of the pages needs.
func browserClient(t *testing.T) *http.Client {
	jar := &cookieJar{cookies: map[string]*http.Cookie{}}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type cookieJar struct{ cookies map[string]*http.Cookie }

func (j *cookieJar) SetCookies(_ *url.URL, cs []*http.Cookie) {
	for _, c := range cs {
		j.cookies[c.Name] = c
	}
}

func (j *cookieJar) Cookies(*url.URL) []*http.Cookie {
	var out []*http.Cookie
	for _, c := range j.cookies {
		if c.MaxAge >= 0 {
			out = append(out, c)
		}
	}
	return out
}

func send(t *testing.T, c *http.Client, method, u string, form url.Values, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader(form.Encode()))
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// No response may be sniffed or framed; the pages allow their own scripts
// and styles only; a creator's result bytes run nothing in a browser.
func TestSecurityHeaders(t *testing.T) {
	m := newMarket(t, "1")
	rec, err := m.key.Execute(ctx, m.list(newService(t, echo), "0.1"), run("<script>alert(1)</script>"), client.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := browserClient(t)
	for _, path := range []string{"/healthz", "/v1/agents", "/docs", "/explorer/", "/", "/nope", *rec.IPFSURL} {
		u := path
		if strings.HasPrefix(path, "/") {
			u = m.d.URL + path
		}
		resp, _ := send(t, c, "GET", u, nil, nil)
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: nosniff %q, frame options %q", path, resp.Header.Get("X-Content-Type-Options"), resp.Header.Get("X-Frame-Options"))
		}
		csp := resp.Header.Get("Content-Security-Policy")
		switch {
		case strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") && !strings.Contains(csp, "frame-ancestors 'none'"):
			t.Errorf("%s: page without a framing policy: %q", path, csp)
		case strings.Contains(path, "/ipfs/") && !strings.Contains(csp, "sandbox"):
			t.Errorf("%s: result bytes without a sandbox: %q", path, csp)
		}
	}
}

// A page's form posted from another site is refused before it runs; sign-in
// forms have no session to tie a CSRF value to.
func TestCrossSiteFormsRefused(t *testing.T) {
	m := newMarket(t, "1")
	c := browserClient(t)
	form := url.Values{"token": {"crtx_sess_nope"}}
	for _, h := range []map[string]string{{"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"}} {
		for _, path := range []string{"/dashboard/login", "/dashboard/operator/login"} {
			if resp, body := send(t, c, "POST", m.d.URL+path, form, h); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "another site") {
				t.Errorf("%s with %v: %d %.200s", path, h, resp.StatusCode, body)
			}
		}
	}
	same := map[string]string{"Origin": m.d.URL, "Sec-Fetch-Site": "same-origin"}
	if resp, _ := send(t, c, "POST", m.d.URL+"/dashboard/login", form, same); resp.StatusCode != http.StatusSeeOther ||
		!strings.HasPrefix(resp.Header.Get("Location"), "/login?token=bad") {
		t.Errorf("same-site sign-in with a bad token: %d to %q, want the sign-in page saying so", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// The operator's cookie holds a session of its own, not the admin token:
// the token itself in the cookie opens nothing.
func TestOperatorSession(t *testing.T) {
	m := newMarket(t, "1")
	c := browserClient(t)
	resp, _ := send(t, c, "POST", m.d.URL+"/dashboard/operator/login", url.Values{"token": {adminToken}}, nil)
	var cookie *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == "crtx_admin" {
			cookie = ck
		}
	}
	if resp.StatusCode != http.StatusSeeOther || cookie == nil || cookie.Value == adminToken || !strings.HasPrefix(cookie.Value, crtx.OperatorPrefix) {
		t.Fatalf("operator sign-in: %d, cookie %+v", resp.StatusCode, cookie)
	}
	if _, body := send(t, c, "GET", m.d.URL+"/dashboard/operator", nil, nil); !strings.Contains(body, `action="/dashboard/operator/creators"`) {
		t.Errorf("the operator's session does not open the operator's page:\n%.300s", body)
	}
	// The admin token as the cookie, as before: the sign-in form.
	forged := browserClient(t)
	base, _ := url.Parse(m.d.URL)
	forged.Jar.SetCookies(base, []*http.Cookie{{Name: "crtx_admin", Value: adminToken}})
	if _, body := send(t, forged, "GET", m.d.URL+"/dashboard/operator", nil, nil); strings.Contains(body, `action="/dashboard/operator/creators"`) {
		t.Error("the admin token in the cookie opened the operator's page")
	}
	// An operator session is no wallet's session on the API.
	err := m.anon.WithToken(cookie.Value).Do(ctx, "GET", "/v1/keys", "", nil, nil)
	wantCode(t, err, 401, "invalid_api_key")
	// Signing out ends the session: the cookie, replayed, opens nothing.
	_, page := send(t, c, "GET", m.d.URL+"/dashboard/operator", nil, nil)
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if csrf == nil {
		t.Fatal("no CSRF value on the operator page")
	}
	send(t, c, "POST", m.d.URL+"/dashboard/operator/logout", url.Values{"csrf": {csrf[1]}}, nil)
	replay := browserClient(t)
	replay.Jar.SetCookies(base, []*http.Cookie{cookie})
	if _, body := send(t, replay, "GET", m.d.URL+"/dashboard/operator", nil, nil); strings.Contains(body, `action="/dashboard/operator/creators"`) {
		t.Error("a signed-out operator session still opens the operator's page")
	}
}
