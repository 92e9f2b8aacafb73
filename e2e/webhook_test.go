package e2e_test

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
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
	// A thin event: the record without the result, which is at ipfs_url.
	var ev struct {
		Type string                 `json:"type"`
		Data map[string]interface{} `json:"data"`
	}
	if err := json.Unmarshal(body, &ev); err != nil || ev.Type != "execution.completed" || ev.Data["execution_id"] != acc.ExecutionID ||
		ev.Data["result_hash"] == nil || ev.Data["ipfs_url"] == nil || strings.Contains(string(body), "echo: hook") {
		t.Errorf("webhook body = %s, %v", body, err)
	}
	if _, ok := ev.Data["result"]; ok {
		t.Errorf("the webhook carries the result: %s", body)
	}
	wk, _ := m.anon.WellKnown(ctx)
	pub, _ := crtx.ParseAddress("key", wk.SigningPublicKey)
	if !crtx.VerifyTimestampSignature(pub, hdr.Get(crtx.HeaderTimestamp), body, hdr.Get(crtx.HeaderSignature)) {
		t.Error("the webhook is not signed by the marketplace key")
	}
	// Standard Webhooks: v1, HMAC-SHA256 with the wallet's secret, then
	// v1a, Ed25519, both over "id.timestamp.body".
	secret, err := m.key.WebhookSecret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	sigs := strings.Fields(hdr.Get("webhook-signature"))
	signed := hdr.Get("webhook-id") + "." + hdr.Get("webhook-timestamp") + "." + string(body)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(signed))
	v1 := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	sig, ok := strings.CutPrefix(sigs[len(sigs)-1], "v1a,")
	raw, err := base64.StdEncoding.DecodeString(sig)
	if len(sigs) != 2 || sigs[0] != v1 || !ok || err != nil || hdr.Get("webhook-id") != "msg_"+acc.ExecutionID || !ed25519.Verify(pub, []byte(signed), raw) {
		t.Errorf("Standard Webhooks headers do not verify: %v", hdr)
	}
	time.Sleep(100 * time.Millisecond)
	w, err := m.d.Market.Connectors.WebhookStatus(ctx, acc.ExecutionID)
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

// However many executions name a failing destination, it is tried at one
// pace: one delivery at a time, each failure doubling the wait.
func TestWebhookDestinationIsPaced(t *testing.T) {
	m := newMarket(t, "10", func(c *daemon.Config) {
		c.RecoveryInterval = 20 * time.Millisecond
		c.WebhookRetryBase = 100 * time.Millisecond
	})
	var mu sync.Mutex
	calls := 0
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer hook.Close()
	agent := m.list(newService(t, echo), "0.1")
	for i := range 5 {
		if _, err := m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: fmt.Sprint("hook ", i), WebhookURL: hook.URL + "/x"}, client.ExecuteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Three seconds of the market's time: one schedule of 0.1, 0.2, 0.4,
	// 0.8, 1.6 s allows five or six tries (measured: 5); five webhooks each
	// sent on its own would be several times that (10 when the destination's
	// backoff is shared but each webhook is still sent when due).
	for range 75 {
		m.clock.Advance(40 * time.Millisecond)
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls == 0 || calls > 7 {
		t.Errorf("the failing destination got %d requests for 5 webhooks in 3 s, want one paced schedule (at most 7)", calls)
	}
}
