package http

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/gate"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/payment"
	"github.com/crtx-market/crtx/payment/exact"
	"github.com/crtx-market/crtx/payment/ledger"
	"github.com/crtx-market/crtx/store/testdb"
)

func newServer(t *testing.T) *Server {
	store := testdb.SQLite(t)
	_, a, _ := ed25519.GenerateKey(nil)
	_, b, _ := ed25519.GenerateKey(nil)
	m, err := market.New(store, market.Config{Schemes: []payment.New{ledger.New, exact.New}, PublicURL: "http://127.0.0.1", Authority: a, Signer: b})
	if err != nil {
		t.Fatal(err)
	}
	return New(m, Options{})
}

// A panic in a handler answers 500 internal_error with the error body, and
// the server goes on serving.
func TestPanicAnswers500(t *testing.T) {
	s := newServer(t)
	s.mux.HandleFunc("GET /boom", func(http.ResponseWriter, *http.Request) { panic("boom") })
	s.mux.HandleFunc("GET /fail", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, errors.New("database on fire: secret detail"))
	})
	srv := httptest.NewServer(s)
	defer srv.Close()
	c := client.New(srv.URL, "")
	for _, path := range []string{"/boom", "/fail"} {
		err := c.Do(context.Background(), "GET", path, "", nil, nil)
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != 500 || ce.Code != "internal_error" {
			t.Fatalf("%s: %v", path, err)
		}
		if strings.Contains(ce.Message, "fire") || !strings.Contains(ce.Message, ce.RequestID) {
			t.Errorf("%s: message %q shows the cause or lacks the request id", path, ce.Message)
		}
	}
	if err := c.Do(context.Background(), "GET", "/healthz", "", nil, nil); err != nil {
		t.Fatalf("server stopped serving after a panic: %v", err)
	}
}

// The OpenAPI document describes exactly the routes the server has.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Errorf("openapi = %q, want 3.1.x", doc.OpenAPI)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			if method != "parameters" {
				documented[strings.ToUpper(method)+" "+path] = true
			}
		}
	}
	for _, r := range newServer(t).Routes() {
		if r.Method == "OPTIONS" {
			continue // a CORS preflight, described with the operations it admits
		}
		key := r.Method + " " + strings.TrimSuffix(r.Path, "{$}")
		if !documented[key] {
			t.Errorf("%s is not in openapi.json", key)
		}
		delete(documented, key)
	}
	for key := range documented {
		t.Errorf("openapi.json documents %s, which the server does not have", key)
	}
}

type allTypes struct {
	S string            `json:"s"`
	B bool              `json:"b"`
	N int               `json:"n"`
	A *crtx.USDC        `json:"a"`
	E crtx.Environment  `json:"e"`
	M map[string]any    `json:"m"`
	L []string          `json:"l"`
	R json.RawMessage   `json:"r"`
	X map[string]string `json:"x"`
}

func TestDecode(t *testing.T) {
	var v allTypes
	err := decodeBytes([]byte(`{"s":"é","b":true,"n":3,"a":0.5,"e":"devnet","m":{"k":[1]},"l":["x"],"r":{"z":null}}`), &v)
	if err != nil || v.S != "é" || !v.B || v.N != 3 || *v.A != 500_000 || v.E != crtx.Devnet || len(v.L) != 1 {
		t.Fatalf("decode = %+v, %v", v, err)
	}
	for body, field := range map[string]string{
		`{"s":1}`: "s", `{"b":"yes"}`: "b", `{"a":"1"}`: "a", `{"a":1.0000001}`: "a", `{"n":1.5}`: "n",
		`{"l":{}}`: "l", `{"zz":1}`: "zz", `{"m":[]}`: "m",
	} {
		var v allTypes
		err := decodeBytes([]byte(body), &v)
		var e *crtx.Error
		if !errors.As(err, &e) || e.Code != crtx.CodeInvalidRequest || !strings.Contains(e.Message, field) {
			t.Errorf("%s: %v, want invalid_request naming %q", body, err, field)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{}`, `{"s":"x","a":1.5}`, `{"m":{"a":[1,2,{"b":null}]}}`, `[`, `{"a":1e999}`,
		`{"wallet":"x","amount_usdc":0.000001}`, "{\"s\":\"\xff\"}", `{"s":"\ud800"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var v allTypes
		err := decodeBytes(body, &v)
		if err == nil {
			if v.A != nil && (*v.A < 0 || *v.A > crtx.MaxUSDC) {
				t.Fatalf("decoded amount %d out of range", *v.A)
			}
			return
		}
		// Every refusal is a clean invalid_request, never an internal error.
		var e *crtx.Error
		if !errors.As(err, &e) || e.Code != crtx.CodeInvalidRequest {
			t.Fatalf("decode(%q) = %v", body, err)
		}
	})
}

// textOnly refuses a query whose keys or values unescape to bytes that are
// not text, and leaves malformed escapes to the handler's parser.
func TestTextOnlyQuery(t *testing.T) {
	for raw, ok := range map[string]bool{
		"":                        true,
		"a=1&b=%C3%A9":            true,
		"q=b+c&x":                 true,
		"a=%zz":                   true, // malformed: newQuery refuses it
		"a=%00":                   false,
		"%ff=1":                   false,
		"a=%C3&b=%A9":             false,
		"a=1&&b=x%00y":            false,
		"tags=sql&sort=price_asc": true,
	} {
		r := httptest.NewRequest("GET", "/v1/agents?"+raw, nil)
		if err := textOnly(r); (err == nil) != ok {
			t.Errorf("textOnly(%q) = %v, want ok %t", raw, err, ok)
		}
	}
}

// Passing health and readiness checks are logged at debug, every other
// request at info: a load balancer's checks do not fill the log.
func TestProbesLogAtDebug(t *testing.T) {
	s := newServer(t)
	var out strings.Builder
	s.log = slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo}))
	srv := httptest.NewServer(s)
	defer srv.Close()
	for _, path := range []string{"/healthz", "/readyz", "/v1/agents"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	logged := out.String()
	if strings.Contains(logged, "/healthz") || strings.Contains(logged, "/readyz") || !strings.Contains(logged, "route=\"GET /v1/agents\"") {
		t.Errorf("the log at info:\n%s", logged)
	}
}

// Behind a trusted proxy the client is the one it forwards for, and its
// request id is kept; the same headers from anyone else are ignored.
func TestTrustedProxy(t *testing.T) {
	for _, c := range []struct {
		proxies string
		trusted bool
	}{{"127.0.0.0/8", true}, {"10.0.0.0/8", false}} {
		s := newServer(t)
		var err error
		if s.proxies, err = gate.ParseProxies(c.proxies); err != nil {
			t.Fatal(err)
		}
		s.mux.HandleFunc("GET /ip", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, gate.ClientIP(r)) })
		srv := httptest.NewServer(s)
		req, _ := http.NewRequest("GET", srv.URL+"/ip", nil)
		req.Header.Set("X-Forwarded-For", "198.51.100.7")
		req.Header.Set("X-Request-Id", "lb-0123456789")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		ip, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		srv.Close()
		id := resp.Header.Get("X-Request-Id")
		if c.trusted && (string(ip) != "198.51.100.7" || id != "lb-0123456789") {
			t.Errorf("through a trusted proxy: client %s, request id %s", ip, id)
		}
		if !c.trusted && (string(ip) != "127.0.0.1" || !strings.HasPrefix(id, "req_")) {
			t.Errorf("from an untrusted peer: client %s, request id %s; want its own address and a new id", ip, id)
		}
		// Two ids (a client's, and one a proxy appended) are neither kept.
		srv = httptest.NewServer(s)
		req, _ = http.NewRequest("GET", srv.URL+"/ip", nil)
		req.Header.Add("X-Request-Id", "forged-by-client")
		req.Header.Add("X-Request-Id", "lb-0123456789")
		if resp, err = http.DefaultClient.Do(req); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		srv.Close()
		if id := resp.Header.Get("X-Request-Id"); !strings.HasPrefix(id, "req_") {
			t.Errorf("with two X-Request-Id values the id is %s, want a new one", id)
		}
	}
}

// /metrics names the build running, as a label of crtx_build_info.
func TestMetricsNameTheBuild(t *testing.T) {
	srv := httptest.NewServer(newServer(t))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `crtx_build_info{version="` + crtx.Version() + `"} 1`; !strings.Contains(string(body), want) {
		t.Errorf("/metrics lacks %s", want)
	}
}
