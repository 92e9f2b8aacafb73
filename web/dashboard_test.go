package web_test

import (
	"context"
	"crypto/ed25519"
	"net/http"
	"testing"

	"github.com/crtx-market/crtx/client"
)

// Pages that show a wallet's own state are kept out of every cache, so
// that Back after signing out does not show balances again; public pages
// may be cached.
func TestSignedInPagesAreNotStored(t *testing.T) {
	d := market(t)
	_, key, _ := ed25519.GenerateKey(nil)
	_, s, err := client.New(d.URL, "").SignIn(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	for path, private := range map[string]bool{"/dashboard/": true, "/dashboard/keys": true, "/dashboard/creator": true,
		"/login": true, "/": false, "/explorer/": false} {
		req, _ := http.NewRequest("GET", d.URL+path, nil)
		req.AddCookie(&http.Cookie{Name: "crtx_session", Value: s.SessionToken})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Cache-Control") == "no-store"; resp.StatusCode != 200 || got != private {
			t.Errorf("%s: %d, Cache-Control %q; want no-store: %v", path, resp.StatusCode, resp.Header.Get("Cache-Control"), private)
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
		"/dashboard/creator/agents/a1/pause": "/dashboard/creator"} {
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
