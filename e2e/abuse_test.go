package e2e_test

import (
	"context"
	"crypto/ed25519"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
)

// Creators that misbehave on purpose are cut off (one that trickles or
// stalls, at the execution's deadline: its error says so), with the right
// error and the escrow refunded.
func TestCreatorAbuse(t *testing.T) {
	cases := []struct {
		name string
		bad  func(w http.ResponseWriter, req crtx.CreatorRequest, key ed25519.PrivateKey)
		code string
	}{
		{"trickles bytes forever", func(w http.ResponseWriter, req crtx.CreatorRequest, _ ed25519.PrivateKey) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			for i := 0; ; i++ {
				if _, err := w.Write([]byte(" ")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				time.Sleep(50 * time.Millisecond)
				if i > 400 {
					return
				}
			}
		}, "execution_timeout"},
		{"a million nested arrays", func(w http.ResponseWriter, req crtx.CreatorRequest, _ ed25519.PrivateKey) {
			w.Write([]byte(`{"execution_id":"` + req.ExecutionID + `","status":"completed","steps":` +
				strings.Repeat("[", 1_000_000) + strings.Repeat("]", 1_000_000) + `}`))
		}, "invalid_agent_response"},
		{"redirects to the metadata address", func(w http.ResponseWriter, req crtx.CreatorRequest, _ ed25519.PrivateKey) {
			http.Redirect(w, &http.Request{}, "http://169.254.169.254/latest/meta-data/iam/security-credentials/", http.StatusFound)
		}, "invalid_agent_response"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newMarket(t, "5")
			agent := m.list(fault(t, tc.bad), "0.25", map[string]any{"timeout_seconds": 2})
			before := m.balance(m.callerW, crtx.Devnet)
			// The call ends, failed, however the creator misbehaves: one
			// that held it past its deadline would run into this context's
			// end, which is no bound on its speed, only on a hang.
			c, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			_, err := m.key.Execute(c, agent, run("x"), client.ExecuteOptions{})
			wantCode(t, err, statusOf(tc.code), tc.code)
			if got := m.balance(m.callerW, crtx.Devnet); got != before {
				t.Errorf("escrow not refunded: %+v, was %+v", got, before)
			}
		})
	}
}

func statusOf(code string) int {
	return map[string]int{"execution_timeout": 408, "invalid_agent_response": 502}[code]
}
