package http_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/daemon"
)

func TestWebhooks(t *testing.T) {
	m := newMarket(t, "10", func(c *daemon.Config) {
		c.RecoveryInterval = 20 * time.Millisecond
		c.WebhookRetryBase = 30 * time.Millisecond
	})
	var mu sync.Mutex
	var calls int
	var body []byte
	var hdr http.Header
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls < 3 {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
			return
		}
		body, _ = io.ReadAll(r.Body)
		hdr = r.Header.Clone()
	}))
	defer hook.Close()
	agent := m.list(newService(t, echo), "0.5")
	acc, err := m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: "hook", Async: true, WebhookURL: hook.URL + "/done"}, client.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		got := body != nil
		mu.Unlock()
		if got {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no webhook delivered")
		}
		m.clock.Advance(40 * time.Millisecond) // the retry backoff runs on the market's clock
		time.Sleep(20 * time.Millisecond)
	}
	var rec crtx.ExecutionRecord
	if err := json.Unmarshal(body, &rec); err != nil || rec.ExecutionID != acc.ExecutionID || rec.Status != "completed" || *rec.Result != "echo: hook" {
		t.Errorf("webhook body = %s, %v", body, err)
	}
	wk, _ := m.anon.WellKnown(ctx)
	pub, _ := crtx.ParseAddress("key", wk.SigningPublicKey)
	if !crtx.VerifyRequestSignature(pub, hdr.Get(crtx.HeaderTimestamp), body, hdr.Get(crtx.HeaderSignature)) {
		t.Error("the webhook is not signed by the marketplace key")
	}
	time.Sleep(100 * time.Millisecond)
	w, err := m.d.Market.WebhookStatus(ctx, acc.ExecutionID)
	if err != nil || w.DeliveredAt == nil || w.Attempts != 3 {
		t.Errorf("delivery = %+v, %v", w, err)
	}
	mu.Lock()
	if calls != 3 {
		t.Errorf("the webhook was called %d times after success", calls)
	}
	mu.Unlock()
}

func TestWebhookMustBePublic(t *testing.T) {
	e := start(t) // private endpoints off
	w := newWallet(t)
	c := e.signIn(w)
	k, _ := c.CreateKey(ctx, client.KeyParams{Name: "k", Environment: crtx.Devnet})
	for _, u := range []string{"https://127.0.0.1/hook", "https://169.254.169.254/", "http://example.com/hook", "ftp://x/"} {
		_, err := e.anon.WithToken(k.Key).Execute(ctx, "agt_any", crtx.ExecuteParams{Task: "x", WebhookURL: u}, client.ExecuteOptions{})
		if ce := wantCode(t, err, 400, "invalid_request"); !strings.Contains(ce.Message, "webhook_url") {
			t.Errorf("%s: %q", u, ce.Message)
		}
	}
}
