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
	// A key that does not match the results' signatures is reported.
	_, other, _ := ed25519.GenerateKey(nil)
	rep, _ = c.TestExecution(ctx, url, crtx.Address(other.Public().(ed25519.PublicKey)))
	if rep.SignatureOK || !rep.ShapeOK || len(rep.Problems) == 0 {
		t.Errorf("report with another key = %+v", rep)
	}
}

// post sends a creator request signed as a marketplace with mkey would.
func post(t *testing.T, url string, mkey ed25519.PrivateKey, req crtx.CreatorRequest, at time.Time) (int, crtx.CreatorReply) {
	body, _ := json.Marshal(req)
	hr, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	ts := strconv.FormatInt(at.Unix(), 10)
	hr.Header.Set(crtx.HeaderTimestamp, ts)
	if mkey != nil {
		hr.Header.Set(crtx.HeaderSignature, crtx.RequestSignature(mkey, ts, body))
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r crtx.CreatorReply
	json.NewDecoder(resp.Body).Decode(&r)
	return resp.StatusCode, r
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
		go func() { _, r := post(t, url, nil, req, time.Now()); results <- r }()
	}
	first, second := <-results, <-results
	_, third := post(t, url, nil, req, time.Now())
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
	if _, r := post(t, url, nil, other, time.Now()); *r.Result != "answer 2" {
		t.Errorf("a new execution id got %v", *r.Result)
	}
}

func TestAnswersFailedBeforeTheDeadline(t *testing.T) {
	_, key, _ := ed25519.GenerateKey(nil)
	h := creator.NewHandler(key, func(ctx context.Context, _ creator.Request) (string, int, error) {
		time.Sleep(10 * time.Second) // ignores its context, as careless code does
		return "late", 0, nil
	}, creator.Options{})
	url := serve(t, h)
	req := crtx.CreatorRequest{ExecutionID: crtx.NewUUID(), Task: "t", TimeoutSeconds: 1}
	start := time.Now()
	_, r := post(t, url, nil, req, time.Now())
	elapsed := time.Since(start)
	if elapsed >= time.Second {
		t.Errorf("answered after %v, not before the 1 s timeout", elapsed)
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
	req := crtx.CreatorRequest{ExecutionID: crtx.NewUUID(), Task: "t", TimeoutSeconds: 5}
	for name, c := range map[string]struct {
		key ed25519.PrivateKey
		at  time.Time
	}{"unsigned": {nil, time.Now()}, "forged": {forger, time.Now()}, "stale": {mkey, time.Now().Add(-time.Hour)}} {
		if status, _ := post(t, url, c.key, req, c.at); status != http.StatusUnauthorized {
			t.Errorf("%s: status %d", name, status)
		}
	}
	if calls.Load() != 0 {
		t.Fatal("the function ran for a refused request")
	}
	if status, r := post(t, url, mkey, req, time.Now()); status != 200 || r.Status != "completed" {
		t.Errorf("signed request: %d %+v", status, r)
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
		_, r := post(t, url, nil, crtx.CreatorRequest{ExecutionID: crtx.NewUUID(), Task: task, TimeoutSeconds: 5}, time.Now())
		if r.Status != "failed" || r.Error == nil || *r.Error == "" {
			t.Errorf("%s: %+v", task, r)
		}
	}
}
