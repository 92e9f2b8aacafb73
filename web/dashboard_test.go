package web_test

import (
	"context"
	"crypto/ed25519"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/crtx-market/crtx/client"
)

// Pages that show a wallet's own state are kept out of every cache, so
// that Back after signing out does not show balances again; public pages
// may be cached, by the browser alone while they show a signed-in header.
func TestSignedInPagesAreNotStored(t *testing.T) {
	d := market(t)
	_, key, _ := ed25519.GenerateKey(nil)
	_, s, err := client.New(d.URL, "").SignIn(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path, session, want string
	}{
		{"/dashboard/", s.SessionToken, "no-store"}, {"/dashboard/keys", s.SessionToken, "no-store"},
		{"/dashboard/creator", s.SessionToken, "no-store"}, {"/login", s.SessionToken, "no-store"},
		{"/", s.SessionToken, "private"}, {"/explorer/", s.SessionToken, "private"}, {"/docs", s.SessionToken, "private"},
		{"/", "", ""}, {"/explorer/", "", ""}, {"/docs", "", ""},
	} {
		req, _ := http.NewRequest("GET", d.URL+c.path, nil)
		if c.session != "" {
			req.AddCookie(&http.Cookie{Name: "crtx_session", Value: c.session})
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Cache-Control"); resp.StatusCode != 200 || got != c.want {
			t.Errorf("%s (signed in: %v): %d, Cache-Control %q; want %q", c.path, c.session != "", resp.StatusCode, got, c.want)
		}
	}
}

// A GET of a form's action, as a reload or a pasted address sends, lands
// on the page of the form instead of a 405 in JSON.
func TestFormActionsAnswerGetWithTheirPage(t *testing.T) {
	d := market(t)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for path, want := range map[string]string{"/dashboard/airdrop": "/dashboard/", "/dashboard/login": "/login",
		"/dashboard/creator/test": "/dashboard/creator", "/dashboard/creator/agents": "/dashboard/creator",
		"/dashboard/keys/k1/revoke": "/dashboard/keys", "/dashboard/operator/disputes/d1": "/dashboard/operator",
		"/dashboard/creator/agents/a1/pause": "/dashboard/creator", "/dashboard/deposits": "/dashboard/", "/dashboard/withdrawals": "/dashboard/"} {
		resp, err := noFollow.Get(d.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != want {
			t.Errorf("GET %s: %d to %q, want 303 to %s", path, resp.StatusCode, resp.Header.Get("Location"), want)
		}
	}
}

// Sent back to sign in for two reasons at once, the page says the same
// one every time: the session that ended under a form.
func TestLoginProblemIsStable(t *testing.T) {
	d := market(t)
	for range 5 {
		resp, err := http.Get(d.URL + "/login?token=bad&ended=1")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), "Your session has ended") {
			t.Fatalf("/login?token=bad&ended=1 says: %s", shownError.FindString(string(body)))
		}
	}
}

// After signing in, the browser goes on only to a dashboard page of this
// origin: an address that a browser reads as another origin, however it is
// written or encoded, lands on the dashboard instead.
func TestSignInGoesOnOnlyToThisOrigin(t *testing.T) {
	d := market(t)
	_, key, _ := ed25519.GenerateKey(nil)
	_, s, err := client.New(d.URL, "").SignIn(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for next, want := range map[string]string{
		"/dashboard/keys": "/dashboard/keys", "/dashboard/executions?status=failed": "/dashboard/executions?status=failed",
		"/dashboard": "/dashboard", "/dashboard/creator/": "/dashboard/creator/",
		`/dashboard/../\127.0.0.2:18081/`: "/dashboard/", `/dashboard/..\127.0.0.2:18081/`: "/dashboard/",
		`/dashboard/%2e%2e/\127.0.0.2:18081/`: "/dashboard/", `/dashboard/%2e%2e/%5C127.0.0.2/`: "/dashboard/",
		"//evil.example/": "/dashboard/", `/\evil.example/`: "/dashboard/", "/%5Cevil.example/": "/dashboard/",
		"/dashboard/%2F%2Fevil.example/": "/dashboard/evil.example/", "/dashboard/../../evil": "/dashboard/",
		"https://evil.example/dashboard/": "/dashboard/", "/dashboardevil": "/dashboard/", "": "/dashboard/",
		"/dashboard@evil.example": "/dashboard/", "javascript:alert(1)//dashboard": "/dashboard/",
		"/oauth/authorize?client_id=oc_x&state=s": "/oauth/authorize?client_id=oc_x&state=s", "/oauth/authorizeX": "/dashboard/",
		"/oauth/token": "/dashboard/", "/oauth/authorize/../../evil": "/dashboard/",
		"/agents/agt_1#try": "/agents/agt_1#try", "/agents/agt_1/run": "/dashboard/", "/agents/../evil": "/dashboard/", "/agents/": "/dashboard/",
	} {
		form := url.Values{"token": {s.SessionToken}, "next": {next}}
		resp, err := noFollow.PostForm(d.URL+"/dashboard/login", form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || got != want {
			t.Errorf("next=%s: %d to %q, want 303 to %q", next, resp.StatusCode, got, want)
		}
	}
}

// A page that needs a session sends a visitor without one to sign in,
// which says why and where they go after.
func TestSignInSaysWhy(t *testing.T) {
	d := market(t)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for page, want := range map[string]string{"/dashboard/keys": "Sign in to open your API keys", "/dashboard/creator": "Sign in to open the creator console",
		"/dashboard/": "Sign in to open your dashboard"} {
		resp, err := noFollow.Get(d.URL + page)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		to := resp.Header.Get("Location")
		if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(to, "/login?next=") {
			t.Fatalf("%s signed out: %d to %q", page, resp.StatusCode, to)
		}
		resp, err = http.Get(d.URL + to)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), want) {
			t.Errorf("%s: the sign-in page does not say %q", page, want)
		}
	}
}
