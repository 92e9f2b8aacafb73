package e2e_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/store/storetest"
)

const adminToken = "admin-token-for-tests-0123456789"

// clock is a settable clock shared by the daemon and the test.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// env is one running crtxd on 127.0.0.1 with its own data folder.
type env struct {
	t     *testing.T
	d     *daemon.Daemon
	data  string
	cfg   daemon.Config
	clock *clock
	logs  testWriter
	http  *http.Client   // checks every response against openapi.json
	anon  *client.Client // no credential
	admin *client.Client
}

// start runs crtxd on a free port of 127.0.0.1. After the test, both ledgers
// must verify and sum to zero.
func start(t *testing.T, adjust ...func(*daemon.Config)) *env {
	t.Helper()
	data := t.TempDir()
	tokenFile := filepath.Join(data, "admin-token")
	if err := os.WriteFile(tokenFile, []byte(adminToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	clk := &clock{now: time.Now().UTC()}
	cfg := daemon.Defaults()
	cfg.Addr = "127.0.0.1:0"
	cfg.Data = data
	cfg.AdminTokenFile = tokenFile
	cfg.BlockInterval = 20 * time.Millisecond
	// The tests post deferred credits and statistics themselves
	// (env.rollup), so that they can look before and after.
	cfg.RollupInterval = time.Hour
	cfg.Now = clk.Now
	logs := testWriter{t: t, mu: &sync.Mutex{}, buf: &bytes.Buffer{}}
	cfg.LogOutput = logs
	cfg.LogLevel = "debug"
	cfg.RateLimitIP = 0 // tests sign in often from one address; TestRateLimits turns it on
	if os.Getenv("CRTX_TEST_ENGINE") == "postgres" {
		// The same suite on PostgreSQL, in a schema of this test's own.
		cfg.DB = storetest.SchemaDSN(t)
	}
	for _, f := range adjust {
		f(&cfg)
	}
	d, err := daemon.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, d: d, cfg: cfg, data: data, clock: clk, logs: logs}
	e.connect()
	t.Cleanup(func() {
		if err := e.d.Close(); err != nil {
			t.Errorf("daemon close: %v", err)
		}
	})
	t.Cleanup(e.checkLedger)
	return e
}

// restart stops crtxd and starts it again on the same data, as after a
// deploy or a crash.
func (e *env) restart() {
	e.t.Helper()
	if err := e.d.Close(); err != nil {
		e.t.Fatal(err)
	}
	d, err := daemon.Start(context.Background(), e.cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	e.d = d
	e.connect()
}

// connect makes the test's clients, all checking responses against the
// OpenAPI document.
func (e *env) connect() {
	e.http = &http.Client{Transport: checking{t: e.t, base: e.d.URL}}
	e.anon = client.New(e.d.URL, "").WithHTTPClient(e.http)
	e.admin = e.anon.WithToken(adminToken)
}

// rollup posts every deferred credit and statistic now, as the daemon's
// roll-up would within its interval.
func (e *env) rollup() {
	e.t.Helper()
	if err := e.d.Market.Ledger.RollupAll(context.Background()); err != nil {
		e.t.Fatalf("rollup: %v", err)
	}
}

// checkLedger asserts the money invariants: every account of each
// environment sums to zero and the whole ledger verifies.
func (e *env) checkLedger() {
	e.t.Helper()
	for _, environment := range crtx.Environments {
		r, err := market.VerifyLedger(context.Background(), e.d.Store, environment, e.d.Market.AuthorityPublicKey())
		if err != nil {
			e.t.Fatalf("verify %s: %v", environment, err)
		}
		if r.Sum != 0 || !r.OK() {
			e.t.Errorf("%s ledger: sum %s, problems %v", environment, r.Sum, r.Problems)
		}
	}
}

// testWriter sends the daemon's log to the test log and keeps a copy.
type testWriter struct {
	t   *testing.T
	mu  *sync.Mutex
	buf *bytes.Buffer
}

// String is what the daemon logged so far.
func (w testWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s", p)
	runLogs.log(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// runLog keeps every daemon log line of the whole test run and every secret
// the tests made, so TestMain can check that no log ever held one.
type runLog struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	secrets []string
}

var runLogs = &runLog{}

func (l *runLog) log(p []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
}

func (l *runLog) secret(s ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.secrets = append(l.secrets, s...)
}

// leaks lists the secrets found in the logs.
func (l *runLog) leaks() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	logs := l.buf.String()
	for _, s := range l.secrets {
		if s != "" && strings.Contains(logs, s) {
			out = append(out, s[:min(len(s), 14)]+"…")
		}
	}
	return out
}

func TestMain(m *testing.M) {
	runLogs.secret(adminToken)
	code := m.Run()
	if leaks := runLogs.leaks(); len(leaks) > 0 {
		fmt.Fprintf(os.Stderr, "the logs of this run hold secrets or callers' wallets: %v\n", leaks)
		code = 1
	}
	// Tests that made secrets started daemons, which log; no log then
	// means the scan proved nothing. (A fuzzing run starts no test.)
	if len(runLogs.secrets) > 1 && runLogs.buf.Len() == 0 {
		fmt.Fprintln(os.Stderr, "no daemon logged anything: the secret scan proved nothing")
		code = 1
	}
	os.Exit(code)
}

// logsLack asserts that nothing the daemon logged holds any of secrets.
func (e *env) logsLack(secrets ...string) {
	e.t.Helper()
	e.logs.mu.Lock()
	defer e.logs.mu.Unlock()
	for _, s := range secrets {
		if s != "" && strings.Contains(e.logs.buf.String(), s) {
			e.t.Errorf("the log holds a secret: %.14s…", s)
		}
	}
	if e.logs.buf.Len() == 0 {
		e.t.Error("the daemon logged nothing, so the check proves nothing")
	}
}

// wallet is a fresh Ed25519 wallet.
type wallet struct {
	key     ed25519.PrivateKey
	address string
}

func newWallet(t *testing.T) wallet {
	pub, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return wallet{key: key, address: crtx.Address(pub)}
}

// signIn returns a client acting with a new session of w.
func (e *env) signIn(w wallet) *client.Client {
	e.t.Helper()
	c, _, err := e.anon.SignIn(context.Background(), w.key)
	if err != nil {
		e.t.Fatalf("sign in: %v", err)
	}
	runLogs.secret(c.Token())
	return c
}

// wantCode asserts that err is an API error with this status and code.
func wantCode(t *testing.T, err error, status int, code string) *client.Error {
	t.Helper()
	var ce *client.Error
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want a %d %s error", err, status, code)
	}
	if ce.Status != status || ce.Code != code {
		t.Fatalf("got %d %s (%s), want %d %s", ce.Status, ce.Code, ce.Message, status, code)
	}
	if ce.RequestID == "" {
		t.Errorf("%s: no X-Request-Id", code)
	}
	if ce.Message == "" {
		t.Errorf("%s: empty message", code)
	}
	return ce
}

func usdc(s string) crtx.USDC {
	v, err := crtx.ParseUSDC(s)
	if err != nil {
		panic(err)
	}
	return v
}

var ctx = context.Background()

// rawRequest sends a request with headers of the test's choosing through
// the client's error handling.
func rawRequest(e *env, method, path string, headers map[string]string, body []byte) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.d.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return e.anon.DoRequest(req, nil)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// bounded is a context that gives up after 30 seconds, so that a test
// waiting for an execution fails instead of hanging.
func bounded(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}
