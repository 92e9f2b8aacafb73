package gate_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/gate"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/oauth"
	"github.com/crtx-market/crtx/payment"
	"github.com/crtx-market/crtx/payment/exact"
	"github.com/crtx-market/crtx/payment/ledger"
	"github.com/crtx-market/crtx/store/testdb"
)

const publicURL = "http://127.0.0.1:8080"

// fixture is a market on a fresh SQLite store, its clock stopped, and a
// wallet with a session and an API key.
type fixture struct {
	m               *market.Market
	session, apiKey string
	logs            *bytes.Buffer
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	ctx := context.Background()
	_, authority, _ := ed25519.GenerateKey(nil)
	_, signer, _ := ed25519.GenerateKey(nil)
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	m, err := market.New(testdb.SQLite(t), market.Config{Schemes: []payment.New{ledger.New, exact.New}, PublicURL: publicURL, Authority: authority, Signer: signer,
		Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	pub, priv, _ := ed25519.GenerateKey(nil)
	wallet := crtx.Address(pub)
	msg, err := m.Accounts.Challenge(ctx, wallet)
	if err != nil {
		t.Fatal(err)
	}
	session, _, err := m.Accounts.SignIn(ctx, wallet, msg.String(), crtx.SignBase58(priv, []byte(msg.String())))
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := m.Accounts.CreateKey(ctx, wallet, "test", crtx.Devnet, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fixture{m: m, session: session, apiKey: key, logs: &bytes.Buffer{}}
}

func (f fixture) gate(l gate.Limits) *gate.Gate {
	return gate.New(f.m, l, slog.New(slog.NewTextHandler(f.logs, nil)))
}

func request(authorization string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	if authorization != "" {
		r.Header.Set("Authorization", authorization)
	}
	return r
}

// A protocol's caller is an API key, never a session, and a missing or
// malformed credential is told how to send one.
func TestCallerIsAnAPIKey(t *testing.T) {
	f := newFixture(t)
	g := f.gate(gate.Limits{})
	for _, c := range []struct{ name, auth, code string }{
		{"none", "", crtx.CodeAuthenticationRequired},
		{"not bearer", "Basic " + f.apiKey, crtx.CodeAuthenticationRequired},
		{"session", "Bearer " + f.session, crtx.CodeInvalidAPIKey},
		{"unknown key", "Bearer crtx_test_" + strings.Repeat("x", 32), crtx.CodeInvalidAPIKey},
	} {
		if _, err := g.Caller(request(c.auth)); crtx.ErrorCode(err) != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}
	p, err := g.Caller(request("bearer " + f.apiKey))
	if err != nil || p.Key == nil || p.Key.Environment != crtx.Devnet {
		t.Fatalf("the key: %+v, %v", p, err)
	}
	if _, err := g.Session(request("Bearer " + f.apiKey)); crtx.ErrorCode(err) != crtx.CodeInvalidSession {
		t.Errorf("a key where a session is needed: %v", err)
	}
	if p, err := g.Session(request("Bearer " + f.session)); err != nil || p.Key != nil || p.Wallet == "" {
		t.Errorf("the session: %+v, %v", p, err)
	}
}

// The challenge names the MCP endpoint's OAuth metadata, and says
// invalid_token only when a token was sent.
func TestChallenge(t *testing.T) {
	g := newFixture(t).gate(gate.Limits{})
	want := `Bearer resource_metadata="` + publicURL + gate.ResourceMetadataPath + `", scope="` + oauth.Scope + `"`
	if got := g.Challenge(request("")); got != want {
		t.Errorf("without a token: %s, want %s", got, want)
	}
	if got := g.Challenge(request("Bearer nope")); got != want+`, error="invalid_token"` {
		t.Errorf("with a token: %s", got)
	}
}

// A key's requests are counted alike whichever transport asks: at 1 a
// second, a burst of two passes and the third waits, on the market's clock.
func TestLimitCountsAKey(t *testing.T) {
	f := newFixture(t)
	g := f.gate(gate.Limits{PerKey: 1, PerIP: 1})
	for i := range 2 {
		if _, err := g.Caller(request("Bearer " + f.apiKey)); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	_, err := g.Caller(request("Bearer " + f.apiKey))
	var e *crtx.Error
	if !errors.As(err, &e) || e.Code != crtx.CodeRateLimited || e.RetryAfter != 1 {
		t.Fatalf("third request: %v", err)
	}
	// A session is not a key: not counted.
	for range 3 {
		if _, err := g.Session(request("Bearer " + f.session)); err != nil {
			t.Fatalf("session: %v", err)
		}
	}
	// Addresses are counted apart from keys, and from each other.
	r := request("")
	r.RemoteAddr = "192.0.2.1:1234"
	for range 2 {
		if err := g.LimitAddress(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.LimitAddress(r); crtx.ErrorCode(err) != crtx.CodeRateLimited {
		t.Errorf("third from one address: %v", err)
	}
	r.RemoteAddr = "192.0.2.2:1234"
	if err := g.LimitAddress(r); err != nil {
		t.Errorf("another address: %v", err)
	}
}

// A key holds at most StreamsPerKey streams; one closed frees its slot.
func TestAdmitStream(t *testing.T) {
	g := newFixture(t).gate(gate.Limits{StreamsPerKey: 2})
	r1, err1 := g.AdmitStream("k")
	_, err2 := g.AdmitStream("k")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if _, err := g.AdmitStream("k"); crtx.ErrorCode(err) != crtx.CodeRateLimited {
		t.Fatalf("third stream: %v", err)
	}
	if _, err := g.AdmitStream("other"); err != nil {
		t.Errorf("another key: %v", err)
	}
	r1()
	if _, err := g.AdmitStream("k"); err != nil {
		t.Errorf("after one closed: %v", err)
	}
}

// The one error writer: a marketplace error is its code, message, status
// and Retry-After; anything else is logged with the request id and
// answered without its text.
func TestWriteError(t *testing.T) {
	f := newFixture(t)
	g := f.gate(gate.Limits{})
	answer := func(err error) (*httptest.ResponseRecorder, api.ErrorBody) {
		t.Helper()
		w := httptest.NewRecorder()
		g.WriteError(w, gate.WithRequestID(request(""), "req-1"), err)
		var body api.ErrorBody
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatalf("%s: %v", w.Body, err)
		}
		return w, body
	}

	busy := &crtx.Error{Code: crtx.CodeUnavailable, Message: "busy", RetryAfter: 3, ExecutionID: "e1"}
	w, body := answer(fmt.Errorf("wrapped: %w", busy))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "3" || body.Error.Code != crtx.CodeUnavailable ||
		body.Error.Message != "busy" || body.Error.ExecutionID == nil || *body.Error.ExecutionID != "e1" {
		t.Errorf("a marketplace error: %d %v %+v", w.Code, w.Header(), body)
	}

	w, body = answer(errors.New("secret dsn postgres://user:pw@db"))
	if w.Code != http.StatusInternalServerError || body.Error.Code != crtx.CodeInternal || !strings.Contains(body.Error.Message, "req-1") ||
		strings.Contains(w.Body.String(), "secret") {
		t.Errorf("an internal error: %d %s", w.Code, w.Body)
	}
	if !strings.Contains(f.logs.String(), "secret dsn") || !strings.Contains(f.logs.String(), "req-1") {
		t.Errorf("the log does not hold the internal error with its request id: %s", f.logs)
	}

	w, body = answer(crtx.PaymentRefused("invalid_network", "wrong network"))
	if w.Code != http.StatusPaymentRequired || body.Error.Code != crtx.CodePaymentInvalid || !strings.Contains(body.Error.Message, "invalid_network") {
		t.Errorf("a payment refusal: %d %+v", w.Code, body)
	}

	w = httptest.NewRecorder()
	g.Refuse(w, request(""), crtx.Errorf(crtx.CodeAuthenticationRequired, "who"))
	if w.Code != http.StatusUnauthorized || w.Header().Get("WWW-Authenticate") != `Bearer realm="crtx"` {
		t.Errorf("a protocol's 401: %d %v", w.Code, w.Header())
	}
}
