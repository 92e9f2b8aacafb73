package e2e_test

import (
	"crypto/ed25519"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/client"
)

// losing delivers the first request and then loses its answer, as a
// connection that drops at the worst moment would.
type losing struct {
	next  http.RoundTripper
	calls atomic.Int32
	keys  []string
	// gateway answers the lost first attempt as a load balancer does
	// when its replica went away mid-request: a 502 of its own.
	gateway bool
}

func (l *losing) RoundTrip(r *http.Request) (*http.Response, error) {
	l.keys = append(l.keys, r.Header.Get("Idempotency-Key"))
	resp, err := l.next.RoundTrip(r)
	if l.calls.Add(1) == 1 && err == nil {
		resp.Body.Close()
		if l.gateway {
			return &http.Response{StatusCode: http.StatusBadGateway, Header: http.Header{"Content-Type": {"text/html"}},
				Body: io.NopCloser(strings.NewReader("<html><body><h1>502 Bad Gateway</h1></body></html>")), Request: r}, nil
		}
		return nil, errors.New("connection reset by peer")
	}
	return resp, err
}

// A retried execution carries one Idempotency-Key, so the lost answer is
// answered again and charged once.
func TestClientRetriesReuseTheIdempotencyKey(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newService(t, echo), "1")
	lt := &losing{next: m.http.Transport}
	c := m.key.WithHTTPClient(&http.Client{Transport: lt})
	rec, err := c.Execute(ctx, agent, run("once"), client.ExecuteOptions{Retries: 3})
	if err != nil || rec.Status != "completed" {
		t.Fatalf("retried execute = %+v, %v", rec, err)
	}
	if len(lt.keys) != 2 || lt.keys[0] == "" || lt.keys[0] != lt.keys[1] {
		t.Errorf("attempts carried keys %q", lt.keys)
	}
	if b := m.balance(m.callerW, crtx.Devnet); b.Available != usdc("9") {
		t.Errorf("charged %s for one execution", usdc("10")-b.Available)
	}
	page, _ := m.key.Executions(ctx, nil)
	if page.Total != 1 {
		t.Errorf("%d executions for one call", page.Total)
	}
	// A load balancer's 502 is no answer either; the marketplace's own 502
	// (an agent's bad reply) is an answer, never sent again.
	gw := &losing{next: m.http.Transport, gateway: true}
	if rec, err := m.key.WithHTTPClient(&http.Client{Transport: gw}).Execute(ctx, agent, run("gw"), client.ExecuteOptions{Retries: 3}); err != nil || rec.Status != "completed" || len(gw.keys) != 2 {
		t.Errorf("after a balancer's 502: %+v, %v, %d attempts", rec, err, len(gw.keys))
	}
	broken := m.list(fault(t, func(w http.ResponseWriter, _ crtx.CreatorRequest, _ ed25519.PrivateKey) {
		http.Error(w, "internal", 500)
	}), "1") // 502 invalid_agent_response
	counted := &losing{next: m.http.Transport}
	counted.calls.Store(1) // loses nothing
	_, err = m.key.WithHTTPClient(&http.Client{Transport: counted}).Execute(ctx, broken, run("x"), client.ExecuteOptions{Retries: 3})
	if wantCode(t, err, 502, "invalid_agent_response"); len(counted.keys) != 1 {
		t.Errorf("the marketplace's own 502 was sent %d times", len(counted.keys))
	}
	// Without retries the lost answer is the caller's error.
	lt2 := &losing{next: m.http.Transport}
	if _, err := m.key.WithHTTPClient(&http.Client{Transport: lt2}).Execute(ctx, agent, run("x"), client.ExecuteOptions{}); err == nil {
		t.Error("no error without retries")
	}
}

// The typed client reaches the dispute, admin, cancel and event endpoints.
func TestClientCoversTheRest(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newService(t, echo), "1")
	rec := m.ran(t, m.liveKey, agent)
	var seen []crtx.ExecStatus
	if err := m.liveKey.Events(ctx, rec.ExecutionID, func(r api.ExecutionRecord) { seen = append(seen, r.Status) }); err != nil || len(seen) != 1 || seen[0] != "completed" {
		t.Errorf("events of a final execution = %v, %v", seen, err)
	}
	_, err := m.liveKey.Cancel(ctx, rec.ExecutionID)
	wantCode(t, err, 409, "not_cancellable")
	d, err := m.liveKey.OpenDispute(ctx, rec.ExecutionID, crtx.DisputeParams{Reason: "other", Description: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if ds, err := m.creatorC.CreatorDisputes(ctx); err != nil || len(ds) != 1 {
		t.Errorf("creator disputes = %v, %v", ds, err)
	}
	if _, err := m.creatorC.RespondToDispute(ctx, d.DisputeID, "fine"); err != nil {
		t.Error(err)
	}
	if ds, err := m.admin.AdminDisputes(ctx, "open"); err != nil || len(ds) != 1 {
		t.Errorf("admin disputes = %v, %v", ds, err)
	}
	if r, err := m.admin.ResolveDispute(ctx, d.DisputeID, crtx.ResolveParams{Outcome: "rejected"}); err != nil || r.Status != "rejected" {
		t.Errorf("resolve = %+v, %v", r, err)
	}
	if p, err := m.admin.SetVerified(ctx, m.creatorW.address, true); err != nil || !p.Verified {
		t.Errorf("verify = %+v, %v", p, err)
	}
	if a, err := m.admin.Suspend(ctx, agent, true); err != nil || !a.Suspended {
		t.Errorf("suspend = %+v, %v", a.Suspended, err)
	}
}
