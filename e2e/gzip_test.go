package e2e_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"
)

// A catalog page goes out gzip-compressed to a client that accepts gzip,
// and decompresses to the very bytes other clients get; a client that
// refuses gzip (q=0) gets them plain.
func TestCatalogGzip(t *testing.T) {
	e := start(t, private)
	catalog(t, e, 25)
	raw := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	get := func(acceptEncoding string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "GET", e.d.URL+"/v1/agents?tags=data&sort=price_asc", nil)
		if acceptEncoding != "" {
			req.Header.Set("Accept-Encoding", acceptEncoding)
		}
		resp, err := raw.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET /v1/agents (Accept-Encoding %q): %d %v %s", acceptEncoding, resp.StatusCode, err, b)
		}
		if v := resp.Header.Values("Vary"); !strings.Contains(strings.Join(v, ","), "Accept-Encoding") {
			t.Errorf("Vary = %q, want Accept-Encoding", v)
		}
		return resp, b
	}
	_, plain := get("")
	if !bytes.HasPrefix(plain, []byte(`{"agents":[`)) {
		t.Fatalf("plain page: %.100s", plain)
	}
	for _, ae := range []string{"gzip", "br;q=1.0, gzip;q=0.8", "*"} {
		for range 2 { // the first request fills the kept page, the second is served from it
			resp, body := get(ae)
			if resp.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("Accept-Encoding %q: Content-Encoding %q", ae, resp.Header.Get("Content-Encoding"))
			}
			if len(body) >= len(plain) || resp.ContentLength != int64(len(body)) {
				t.Errorf("Accept-Encoding %q: %d bytes compressed (Content-Length %d), %d plain", ae, len(body), resp.ContentLength, len(plain))
			}
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, plain) {
				t.Fatalf("Accept-Encoding %q: decompressed %v\n%.200s\nwant\n%.200s", ae, err, got, plain)
			}
		}
	}
	for _, ae := range []string{"gzip;q=0", "identity", "br", "*;q=0", "gzip;q=0, *"} {
		resp, body := get(ae)
		if resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, plain) {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, %d bytes (plain %d)", ae, resp.Header.Get("Content-Encoding"), len(body), len(plain))
		}
	}
	// The SDK asks for gzip as Go's client does, and reads the same page.
	page, err := e.anon.Agents(ctx, nil)
	if err != nil || len(page.Agents) != 20 {
		t.Fatalf("client: %v, %d agents", err, len(page.Agents))
	}
}
