package e2e_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestErrorBodies(t *testing.T) {
	e := start(t)
	w := newWallet(t)
	sess := e.signIn(w)
	airdrop := func(body string) error {
		return e.anon.Do(ctx, "POST", "/v1/devnet/airdrop", "application/json", []byte(body), nil)
	}
	valid := `{"wallet":"` + w.address + `","amount_usdc":1}`

	t.Run("unknown route", func(t *testing.T) {
		for _, p := range []string{"/v1", "/v1/keys/a/b", "/v2/agents", "/mcp/nope", "/oauth/nope", "/.well-known/nope", "/discovery/nope"} {
			wantCode(t, e.anon.Do(ctx, "GET", p, "", nil, nil), 404, "not_found")
		}
		// A wrong address of the site's pages is a page, for the person who
		// followed it; a program's request there is still the error body.
		resp, err := http.Get(e.d.URL + "/nope")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 404 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(b), `<html lang="en"`) ||
			!strings.Contains(string(b), "<title>No page here — crtx</title>") {
			t.Errorf("GET /nope: %d %s %.300s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
		wantCode(t, e.anon.Do(ctx, "POST", "/nope", "application/json", []byte(`{}`), nil), 404, "not_found")
	})
	t.Run("wrong method", func(t *testing.T) {
		req, _ := http.NewRequest("PUT", e.d.URL+"/v1/keys", nil)
		resp, err := e.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if allow := resp.Header.Get("Allow"); !strings.Contains(allow, "GET") || !strings.Contains(allow, "POST") {
			t.Errorf("Allow = %q", allow)
		}
		wantCode(t, e.anon.Do(ctx, "PUT", "/v1/keys", "", nil, nil), 405, "method_not_allowed")
		wantCode(t, e.anon.Do(ctx, "GET", "/v1/devnet/airdrop", "", nil, nil), 405, "method_not_allowed")
	})
	t.Run("body too large", func(t *testing.T) {
		big := `{"wallet":"` + strings.Repeat("a", 600<<10) + `"}`
		wantCode(t, airdrop(big), 413, "request_too_large")
	})
	t.Run("content type", func(t *testing.T) {
		for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded", "application/jsonx"} {
			err := e.anon.Do(ctx, "POST", "/v1/devnet/airdrop", ct, []byte(valid), nil)
			wantCode(t, err, 415, "unsupported_media_type")
		}
		if err := e.anon.Do(ctx, "POST", "/v1/devnet/airdrop", "application/json; charset=utf-8", []byte(valid), nil); err != nil {
			t.Errorf("JSON with a charset was refused: %v", err)
		}
	})
	t.Run("bad JSON", func(t *testing.T) {
		cases := map[string]string{
			"empty":         ``,
			"not JSON":      `wallet=x`,
			"array":         `[1]`,
			"null":          `null`,
			"truncated":     `{"wallet":`,
			"two values":    valid + valid,
			"trailing junk": valid + ` x`,
			"invalid UTF-8": "{\"wallet\":\"\xff\xfe\",\"amount_usdc\":1}",
			"wrong type":    `{"wallet":5,"amount_usdc":1}`,
			"unknown field": `{"wallet":"` + w.address + `","amount_usdc":1,"extra":true}`,
			"deep":          `{"wallet":` + strings.Repeat("[", 65) + strings.Repeat("]", 65) + `}`,
		}
		for name, body := range cases {
			t.Run(name, func(t *testing.T) {
				ce := wantCode(t, airdrop(body), 400, "invalid_request")
				if ce.ExecutionID != nil {
					t.Errorf("execution_id = %v, want null", *ce.ExecutionID)
				}
			})
		}
		ce := wantCode(t, airdrop(`{"wallet":"`+w.address+`","amount_usdc":1,"extra":true}`), 400, "invalid_request")
		if !strings.Contains(ce.Message, "extra") {
			t.Errorf("unknown parameter not named: %q", ce.Message)
		}
		ce = wantCode(t, airdrop(`{"wallet":5,"amount_usdc":1}`), 400, "invalid_request")
		if !strings.Contains(ce.Message, "wallet") {
			t.Errorf("wrong-typed field not named: %q", ce.Message)
		}
		got, _ := sess.Wallet(ctx)
		if b := got.Balances["devnet"]; b.Available != 1_000_000 {
			t.Errorf("bad requests moved money: %+v", b)
		}
	})
}

// Every response, success or error, page or JSON, carries X-Request-Id, and
// every error of a program's path is the seed's body.
func TestRequestIDEverywhere(t *testing.T) {
	e := start(t)
	seen := map[string]bool{}
	for _, r := range []struct{ method, path, ct, body string }{
		{"GET", "/healthz", "", ""}, {"GET", "/readyz", "", ""}, {"GET", "/metrics", "", ""},
		{"GET", "/.well-known/crtx.json", "", ""}, {"GET", "/v1/openapi.json", "", ""},
		{"GET", "/explorer/", "", ""}, {"GET", "/v1/nope", "", ""}, {"GET", "/nope", "", ""}, {"DELETE", "/healthz", "", ""},
		{"POST", "/v1/auth/challenge", "application/json", `{}`}, {"GET", "/v1/keys", "", ""},
	} {
		req, _ := http.NewRequest(r.method, e.d.URL+r.path, bytes.NewReader([]byte(r.body)))
		if r.ct != "" {
			req.Header.Set("Content-Type", r.ct)
		}
		resp, err := e.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		id := resp.Header.Get("X-Request-Id")
		if !strings.HasPrefix(id, "req_") || seen[id] {
			t.Errorf("%s %s: X-Request-Id %q (missing or repeated)", r.method, r.path, id)
		}
		seen[id] = true
		// A wrong page address is a page (checked in TestErrorBodies).
		if resp.StatusCode >= 400 && r.path != "/nope" && !bytes.Contains(body, []byte(`"execution_id":null`)) {
			t.Errorf("%s %s: error body %s", r.method, r.path, body)
		}
	}
}
