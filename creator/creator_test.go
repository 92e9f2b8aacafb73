package creator_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/daemon"
)

var ctx = context.Background()

func marketplace(t *testing.T) *daemon.Daemon {
	cfg := daemon.Defaults()
	cfg.RateLimitIP = 0 // tests sign in often from one address
	cfg.Addr, cfg.Data, cfg.AllowPrivateEndpoints = "127.0.0.1:0", t.TempDir(), true
	cfg.LogOutput = io.Discard
	d, err := daemon.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func serve(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/execute"
}

// A real request from the marketplace, checked against the marketplace key
// published at /.well-known/crtx.json, answered with a result the
// marketplace verifies.
func TestMarketplaceRequest(t *testing.T) {
	d := marketplace(t)
	mkey, err := creator.FetchMarketplaceKey(ctx, d.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, key, _ := ed25519.GenerateKey(nil)
	var mu sync.Mutex
	var got creator.Request
	h := creator.NewHandler(key, func(_ context.Context, r creator.Request) (string, int, error) {
		mu.Lock()
		defer mu.Unlock()
		got = r
		return "done ✓", 7, nil
	}, creator.Options{MarketplaceKey: mkey})
	url := serve(t, h)

	_, wkey, _ := ed25519.GenerateKey(nil)
	c, _, err := client.New(d.URL, "").SignIn(ctx, wkey)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := c.TestExecution(ctx, url, h.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Reachable || !rep.ShapeOK || !rep.SignatureOK || rep.Status != "completed" || len(rep.Problems) != 0 {
		t.Fatalf("report = %+v", rep)
	}
	mu.Lock()
	seen := got
	mu.Unlock()
	if got := seen; !got.Test || got.Environment != "mainnet" || got.Task != "crtx reachability test" || got.ExecutionID == "" || string(got.Parameters) != "{}" {
		t.Errorf("the function saw %+v", got)
	}
	// A test for another key is refused by the service (the request names
	// the key it is for), and reported.
	_, other, _ := ed25519.GenerateKey(nil)
	rep, _ = c.TestExecution(ctx, url, crtx.Address(other.Public().(ed25519.PublicKey)))
	if rep.SignatureOK || len(rep.Problems) != 1 || rep.Problems[0] != "the endpoint answered HTTP 403" {
		t.Errorf("report with another key = %+v", rep)
	}
	// The report carries the exchange, so the creator sees the service's
	// own reason for the 403.
	if ex := rep.Exchange; ex == nil || !strings.Contains(ex.Request, "X-Crtx-Signing-Key: "+crtx.Address(other.Public().(ed25519.PublicKey))+"\n") ||
		!strings.HasPrefix(ex.Response, "HTTP/1.1 403 Forbidden\n") || !strings.Contains(ex.Response, "signing key") {
		t.Errorf("the exchange of a test for another key = %+v", ex)
	}
}

// signed are the headers of a creator request for scope signed as a
// marketplace with mkey would (none but the timestamp when mkey is nil).
func signed(mkey ed25519.PrivateKey, s crtx.RequestScope, body []byte, at time.Time) http.Header {
	h := http.Header{}
	ts := strconv.FormatInt(at.Unix(), 10)
	h.Set(crtx.HeaderTimestamp, ts)
	if mkey == nil {
		return h
	}
	h.Set(crtx.HeaderAgentID, s.AgentID)
	h.Set(crtx.HeaderSigningKey, s.SigningKey)
	h.Set(crtx.HeaderEnvironment, string(s.Environment))
	if s.Test {
		h.Set(crtx.HeaderTest, "true")
	}
	h.Set(crtx.HeaderSignature, crtx.RequestSignature(mkey, s, ts, body))
	return h
}

// send POSTs body with hdr and returns the status and the decoded reply.
func send(t *testing.T, url string, body []byte, hdr http.Header) (int, crtx.CreatorReply) {
	hr, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	hr.Header = hdr
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r crtx.CreatorReply
	json.NewDecoder(resp.Body).Decode(&r)
	return resp.StatusCode, r
}

// post sends req signed for s as a marketplace with mkey would.
func post(t *testing.T, url string, mkey ed25519.PrivateKey, s crtx.RequestScope, req crtx.CreatorRequest, at time.Time) (int, crtx.CreatorReply) {
	body, _ := json.Marshal(req)
	return send(t, url, body, signed(mkey, s, body, at))
}

func TestReplayedExecutionIDGetsTheFirstAnswer(t *testing.T) {
	_, key, _ := ed25519.GenerateKey(nil)
	var calls atomic.Int32
	h := creator.NewHandler(key, func(_ context.Context, r creator.Request) (string, int, error) {
		n := calls.Add(1)
		time.Sleep(50 * time.Millisecond)
		return "answer " + strconv.Itoa(int(n)), 0, nil
	}, creator.Options{})
	url := serve(t, h)
	req := crtx.CreatorRequest{ExecutionID: crtx.NewUUID(), Task: "t", TimeoutSeconds: 5}
	// Two at once and one after: the function runs once and all three get its answer.
	results := make(chan crtx.CreatorReply, 3)
	for range 2 {
		go func() { _, r := post(t, url, nil, crtx.RequestScope{}, req, time.Now()); results <- r }()
	}
	first, second := <-results, <-results
	_, third := post(t, url, nil, crtx.RequestScope{}, req, time.Now())
	if calls.Load() != 1 {
		t.Fatalf("the function ran %d times", calls.Load())
	}
	for _, r := range []crtx.CreatorReply{first, second, third} {
		if r.Result == nil || *r.Result != "answer 1" || *r.Signature != *first.Signature {
			t.Errorf("reply = %+v", r)
		}
	}
	pub := key.Public().(ed25519.PublicKey)
	if err := crtx.CheckReply(req, first, pub); err != nil {
		t.Errorf("the reply does not verify: %v", err)
	}
	other := req
	other.ExecutionID = crtx.NewUUID()
	if _, r := post(t, url, nil, crtx.RequestScope{}, other, time.Now()); *r.Result != "answer 2" {
		t.Errorf("a new execution id got %v", *r.Result)
	}
}

func TestAnswersFailedBeforeTheDeadline(t *testing.T) {
	_, key, _ := ed25519.GenerateKey(nil)
	returned := make(chan struct{})
	h := creator.NewHandler(key, func(ctx context.Context, _ creator.Request) (string, int, error) {
		defer close(returned)
		time.Sleep(10 * time.Second) // ignores its context, as careless code does
		return "late", 0, nil
	}, creator.Options{})
	url := serve(t, h)
	req := crtx.CreatorRequest{ExecutionID: crtx.NewUUID(), Task: "t", TimeoutSeconds: 1}
	_, r := post(t, url, nil, crtx.RequestScope{}, req, time.Now())
	// It answered at its own deadline, the 1 s timeout less the margin of
	// 200 ms, while the agent's code still ran: not when that code ended.
	select {
	case <-returned:
		t.Error("answered only once the agent's code returned")
	default:
	}
	if r.Error == nil || !strings.Contains(*r.Error, "did not finish within 800ms") {
		t.Errorf("error = %v, want the deadline of 800ms", r.Error)
	}
	if r.Status != "failed" || r.Error == nil || r.Result != nil || r.Signature != nil {
		t.Errorf("reply = %+v", r)
	}
	if err := crtx.CheckReply(req, r, key.Public().(ed25519.PublicKey)); err != nil {
		t.Errorf("the failed reply has the wrong shape: %v", err)
	}
}

func TestRefusesWhatTheMarketplaceDidNotSign(t *testing.T) {
	mpub, mkey, _ := ed25519.GenerateKey(nil)
	_, forger, _ := ed25519.GenerateKey(nil)
	_, key, _ := ed25519.GenerateKey(nil)
	var calls atomic.Int32
	h := creator.NewHandler(key, func(context.Context, creator.Request) (string, int, error) {
		calls.Add(1)
		return "ok", 0, nil
	}, creator.Options{MarketplaceKey: mpub})
	url := serve(t, h)
	s := crtx.RequestScope{AgentID: "agt_x", SigningKey: h.PublicKey(), Environment: crtx.Mainnet}
	req := crtx.CreatorRequest{ExecutionID: crtx.NewUUID(), Task: "t", TimeoutSeconds: 5}
	for name, c := range map[string]struct {
		key ed25519.PrivateKey
		at  time.Time
	}{"unsigned": {nil, time.Now()}, "forged": {forger, time.Now()}, "stale": {mkey, time.Now().Add(-time.Hour)}} {
		if status, _ := post(t, url, c.key, s, req, c.at); status != http.StatusUnauthorized {
			t.Errorf("%s: status %d", name, status)
		}
	}
	if calls.Load() != 0 {
		t.Fatal("the function ran for a refused request")
	}
	if status, r := post(t, url, mkey, s, req, time.Now()); status != 200 || r.Status != "completed" {
		t.Errorf("signed request: %d %+v", status, r)
	}
}

// A request the marketplace signed for one agent is refused, unchanged, by
// another agent's service, and by its own once its environment or test
// flag is changed: a creator cannot resell another's agent through a proxy.
func TestRefusesRequestsForAnotherAgent(t *testing.T) {
	mpub, mkey, _ := ed25519.GenerateKey(nil)
	var mu sync.Mutex
	var seen []creator.Request
	fn := func(_ context.Context, r creator.Request) (string, int, error) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, r)
		return "ok", 0, nil
	}
	agent := func(ids ...string) (*creator.Handler, string) {
		_, key, _ := ed25519.GenerateKey(nil)
		h := creator.NewHandler(key, fn, creator.Options{MarketplaceKey: mpub, AgentIDs: ids})
		return h, serve(t, h)
	}
	x, xURL := agent("agt_x")
	_, yURL := agent("agt_y")
	_, zURL := agent() // serves whatever agent its key is listed for
	body, _ := json.Marshal(crtx.CreatorRequest{ExecutionID: crtx.NewUUID(), Task: "t", TimeoutSeconds: 5})
	forX := crtx.RequestScope{AgentID: "agt_x", SigningKey: x.PublicKey(), Environment: crtx.Devnet}
	captured := signed(mkey, forX, body, time.Now())
	for name, url := range map[string]string{"configured for another agent": yURL, "configured for no agent": zURL} {
		if status, _ := send(t, url, body, captured.Clone()); status != http.StatusForbidden {
			t.Errorf("X's request at a service %s: status %d", name, status)
		}
	}
	for name, change := range map[string]func(http.Header){
		"environment": func(h http.Header) { h.Set(crtx.HeaderEnvironment, "mainnet") },
		"test flag":   func(h http.Header) { h.Set(crtx.HeaderTest, "true") },
		"agent":       func(h http.Header) { h.Set(crtx.HeaderAgentID, "agt_y") },
		"no agent":    func(h http.Header) { h.Del(crtx.HeaderAgentID) },
	} {
		hdr := captured.Clone()
		change(hdr)
		if status, _ := send(t, xURL, body, hdr); status != http.StatusUnauthorized {
			t.Errorf("X's request with its %s changed: status %d", name, status)
		}
	}
	// Signed by the marketplace, but for an agent X was not configured for,
	// or naming no agent without being a test.
	for name, s := range map[string]crtx.RequestScope{
		"another agent":      {AgentID: "agt_other", SigningKey: x.PublicKey(), Environment: crtx.Devnet},
		"no agent, not test": {SigningKey: x.PublicKey(), Environment: crtx.Devnet},
		"no environment":     {AgentID: "agt_x", SigningKey: x.PublicKey(), Environment: "testnet"},
	} {
		if status, _ := send(t, xURL, body, signed(mkey, s, body, time.Now())); status != http.StatusForbidden {
			t.Errorf("%s: status %d", name, status)
		}
	}
	if len(seen) != 0 {
		t.Fatalf("the function ran for refused requests: %+v", seen)
	}
	// X serves its own request, and a new listing's test for its key.
	if status, r := send(t, xURL, body, captured); status != 200 || r.Status != "completed" {
		t.Errorf("X's own request: %d %+v", status, r)
	}
	test := crtx.RequestScope{SigningKey: x.PublicKey(), Environment: crtx.Mainnet, Test: true}
	tbody, _ := json.Marshal(crtx.CreatorRequest{ExecutionID: crtx.NewUUID(), Task: "crtx reachability test", TimeoutSeconds: 5})
	if status, _ := send(t, xURL, tbody, signed(mkey, test, tbody, time.Now())); status != 200 {
		t.Errorf("a test for X's key that names no agent: status %d", status)
	}
	if len(seen) != 2 || seen[0].AgentID != "agt_x" || seen[0].Environment != "devnet" || seen[0].Test || seen[1].AgentID != "" || !seen[1].Test {
		t.Errorf("the function saw %+v", seen)
	}
}

func TestFunctionErrorsAndPanicsAreFailures(t *testing.T) {
	_, key, _ := ed25519.GenerateKey(nil)
	h := creator.NewHandler(key, func(_ context.Context, r creator.Request) (string, int, error) {
		if r.Task == "panic" {
			panic("boom")
		}
		return "", 0, io.ErrUnexpectedEOF
	}, creator.Options{})
	url := serve(t, h)
	for _, task := range []string{"error", "panic"} {
		_, r := post(t, url, nil, crtx.RequestScope{}, crtx.CreatorRequest{ExecutionID: crtx.NewUUID(), Task: task, TimeoutSeconds: 5}, time.Now())
		if r.Status != "failed" || r.Error == nil || *r.Error == "" {
			t.Errorf("%s: %+v", task, r)
		}
	}
}
