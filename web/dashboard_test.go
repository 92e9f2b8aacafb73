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
