package e2e_test

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/market"
)

// hostileBodies are bodies no endpoint should accept, or should reject
// without harm.
func hostileBodies(r *rand.Rand) []string {
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	out := []string{
		``, `{`, `}`, `[]`, `null`, `true`, `"x"`, `1e999999`, `NaN`, `-Infinity`, `{"a":}`, `{"a" 1}`, `{,}`,
		`{"task":1}`, `{"task":null}`, `{"task":["x"]}`, `{"task":{"$ne":1}}`, `{"wallet":12}`, `{"amount_usdc":"1"}`,
		`{"amount_usdc":1e309}`, `{"amount_usdc":-0.000001}`, `{"amount_usdc":0.0000001}`, `{"amount_usdc":123456789012345678901234567890}`,
		`{"amount_usdc":NaN}`, `{"price_per_call_usdc":-1}`, `{"name":"` + strings.Repeat("n", 100000) + `"}`,
		`{"__proto__":{"admin":true}}`, `{"task":"x","task":"y"}`, "{\"task\":\"\xff\xfe\"}", "\xef\xbb\xbf{\"task\":\"x\"}",
		`{"task":"x"} {"task":"y"}`, `{"task":"x"}garbage`, deep, `{"a":` + deep + `}`, `{"evidence":` + deep + `}`,
		`{"parameters":` + deep + `}`, `{"task":"\u0000"}`, `{"tags":[` + strings.Repeat(`"x",`, 5000) + `"x"]}`,
		`{"input_schema":{"$ref":"http://169.254.169.254/"}}`, `{"endpoint_url":"file:///etc/passwd"}`, `{"outcome":"upheld","slash_usdc":-1}`,
	}
	for range 20 {
		b := make([]byte, r.IntN(200))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		out = append(out, string(b))
	}
	return out
}

var hostileIDs = []string{"..%2F..%2Fetc%2Fpasswd", "%00", "x%20y", strings.Repeat("a", 5000), "%C0%AE%C0%AE", "0", "-1",
	"99999999999999999999999", "%27%20OR%201%3D1--", "agt_%3Cscript%3E"}

// Every endpoint, given a generated corpus of broken requests, answers only
// well-formed 4xx error bodies; nothing moves money; /healthz answers
// throughout.
func TestHostileInput(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newService(t, echo), "0.5")
	rec := m.ran(t, m.key, agent)
	before := map[crtx.Environment]market.LedgerReport{}
	for _, env := range crtx.Environments {
		before[env], _ = market.VerifyLedger(ctx, m.d.Store, env, m.d.Market.AuthorityPublicKey())
	}
	r := rand.New(rand.NewPCG(1, 2))
	creds := []string{"", "Bearer " + m.key.Token(), "Bearer " + m.creatorC.Token(), "Bearer " + adminToken, "Bearer x", "Basic Zm9vOmJhcg==",
		"Bearer crtx_live_" + strings.Repeat("\xff", 32)}
	type target struct{ method, path string }
	var targets []target
	for _, rt := range []struct{ method, path string }{
		{"POST", "/v1/auth/challenge"}, {"POST", "/v1/auth/session"}, {"DELETE", "/v1/auth/session"}, {"POST", "/v1/keys"},
		{"DELETE", "/v1/keys/{id}"}, {"GET", "/v1/wallet"}, {"POST", "/v1/devnet/airdrop"}, {"POST", "/v1/admin/deposits"},
		{"POST", "/v1/admin/withdrawals"}, {"GET", "/v1/agents"}, {"GET", "/v1/agents/{id}"}, {"POST", "/v1/agents/{id}/execute"},
		{"GET", "/v1/executions"}, {"GET", "/v1/executions/{id}"}, {"POST", "/v1/executions/{id}/cancel"},
		{"POST", "/v1/executions/{id}/disputes"}, {"GET", "/v1/ledger/{id}/accounts/{id}"}, {"GET", "/v1/ledger/devnet/blocks/{id}"},
		{"PUT", "/v1/creator/profile"}, {"POST", "/v1/creator/agents"}, {"PATCH", "/v1/creator/agents/{id}"},
		{"DELETE", "/v1/creator/agents/{id}"}, {"POST", "/v1/creator/test-execution"}, {"POST", "/v1/creator/disputes/{id}/response"},
		{"POST", "/v1/admin/disputes/{id}/resolve"}, {"POST", "/v1/admin/creators/{id}/verify"}, {"POST", "/v1/admin/agents/{id}/suspend"},
		{"GET", "/ipfs/{id}"}, {"GET", "/explorer/tx/{id}"},
	} {
		for _, id := range hostileIDs {
			targets = append(targets, target{rt.method, strings.ReplaceAll(rt.path, "{id}", id)})
		}
	}
	bodies := hostileBodies(r)
	queries := []string{"", "?limit=-1", "?limit=1e9", "?offset=99999999999999999999", "?sort=;DROP", "?tags=" + strings.Repeat("a,", 3000),
		"?min_success_rate=NaN", "?from=%00", "?q=" + strings.Repeat("%22", 500), "?environment[]=x", "?limit=1&limit=2"}
	contentTypes := []string{"application/json", "text/plain", "application/x-www-form-urlencoded", "", "application/json; charset=latin1"}
	hc := &http.Client{Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	sent := 0
	for i := 0; sent < 1200; i++ {
		tg := targets[i%len(targets)]
		body := bodies[r.IntN(len(bodies))]
		path := tg.path
		if tg.method == "GET" {
			path += queries[r.IntN(len(queries))]
		}
		req, err := http.NewRequest(tg.method, m.d.URL+path, bytes.NewReader([]byte(body)))
		if err != nil {
			continue // not even a request
		}
		req.Header.Set("Content-Type", contentTypes[r.IntN(len(contentTypes))])
		if c := creds[r.IntN(len(creds))]; c != "" {
			req.Header.Set("Authorization", c)
		}
		switch r.IntN(10) {
		case 0:
			req.Header.Set("Idempotency-Key", strings.Repeat("k", 300))
		case 1:
			req.Header.Set("Idempotency-Key", "k\xff\xfe")
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", tg.method, path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		sent++
		if resp.StatusCode >= 500 {
			t.Errorf("%s %.80s with %.60q → %d %s", tg.method, path, body, resp.StatusCode, b)
			continue
		}
		if resp.StatusCode >= 400 && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			// A page's refusal is a page for people, in the site's layout.
			if !strings.HasPrefix(tg.path, "/explorer/") && !strings.HasPrefix(tg.path, "/dashboard/") && !strings.HasPrefix(tg.path, "/agents/") ||
				!bytes.Contains(b, []byte(`<main id="main"`)) || resp.Header.Get("X-Request-Id") == "" {
				t.Errorf("%s %.80s → %d with a page that is not one: %.200s", tg.method, path, resp.StatusCode, b)
			}
		} else if resp.StatusCode >= 400 {
			var eb api.ErrorBody
			if err := json.Unmarshal(b, &eb); err != nil || eb.Error.Code == "" || eb.Error.Message == "" || resp.Header.Get("X-Request-Id") == "" {
				t.Errorf("%s %.80s → %d with a malformed error body: %.200s", tg.method, path, resp.StatusCode, b)
			}
		}
		if sent%100 == 0 {
			if err := m.anon.Do(ctx, "GET", "/healthz", "", nil, nil); err != nil {
				t.Fatalf("after %d requests /healthz: %v", sent, err)
			}
		}
	}
	// Nothing moved: the ledgers hold what they held.
	for _, env := range crtx.Environments {
		after, _ := market.VerifyLedger(ctx, m.d.Store, env, m.d.Market.AuthorityPublicKey())
		if after.Transactions != before[env].Transactions {
			t.Errorf("%s: %d transactions before, %d after", env, before[env].Transactions, after.Transactions)
		}
	}
	if got, err := m.key.Execution(ctx, rec.ExecutionID); err != nil || got.Status != "completed" {
		t.Errorf("the earlier execution: %+v, %v", got, err)
	}
	t.Logf("%d hostile requests", sent)
}
