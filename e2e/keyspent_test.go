package e2e_test

import (
	"context"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
)

// A key's spent is what its calls cost in the end: a failed call's refund
// and a dispute's refund come off it, and off its spend limit, while the
// calls stay counted.
func TestKeySpentLeavesOutRefunds(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newService(t, func(_ context.Context, r creator.Request) (string, int, error) {
		if r.Task == "fail" {
			return "", 0, errNotNow
		}
		return "ok", 0, nil
	}), "0.4")
	limit := usdc("0.5")
	k, err := m.callerC.CreateKey(ctx, client.KeyParams{Name: "limited", Environment: crtx.Devnet, SpendLimit: &limit})
	if err != nil {
		t.Fatal(err)
	}
	lk := m.anon.WithToken(k.Key)
	counters := func(want int64, spent string) {
		t.Helper()
		keys, err := m.callerC.Keys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, kk := range keys {
			if kk.ID == k.ID && (kk.ExecutionCount != want || kk.TotalSpent != usdc(spent)) {
				t.Errorf("key counters = %d executions, %s USDC spent; want %d, %s", kk.ExecutionCount, kk.TotalSpent, want, spent)
			}
		}
	}
	_, err = lk.Execute(ctx, agent, run("fail"), client.ExecuteOptions{})
	wantCode(t, err, 500, "execution_failed")
	counters(1, "0")
	// 0.4 more would pass the 0.5 limit had the refunded call counted.
	rec := m.ran(t, lk, agent)
	counters(2, "0.4")
	// Another key runs it too, for a spent the dispute's refund could
	// take below the call's price.
	big := usdc("5")
	k2, err := m.callerC.CreateKey(ctx, client.KeyParams{Name: "second", Environment: crtx.Devnet, SpendLimit: &big})
	if err != nil {
		t.Fatal(err)
	}
	k2c := m.anon.WithToken(k2.Key)
	m.ran(t, k2c, agent)
	rec2 := m.ran(t, k2c, agent)

	d, err := lk.OpenDispute(ctx, rec.ExecutionID, crtx.DisputeParams{Reason: "fraud", Description: "not what was asked"})
	if err != nil {
		t.Fatal(err)
	}
	// Devnet refunds from its treasury, past the price if the operator
	// says so; the key gets back at most what the call cost.
	slash, refund := usdc("1"), usdc("0.6")
	if _, err := m.admin.ResolveDispute(ctx, d.DisputeID, crtx.ResolveParams{Outcome: "upheld", Slash: &slash, Refund: &refund}); err != nil {
		t.Fatal(err)
	}
	counters(2, "0")
	// The second key spent 0.8 on two calls; a 0.6 refund of one 0.4 call
	// takes 0.4 off it, not 0.6.
	d2, err := k2c.OpenDispute(ctx, rec2.ExecutionID, crtx.DisputeParams{Reason: "fraud", Description: "again"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.admin.ResolveDispute(ctx, d2.DisputeID, crtx.ResolveParams{Outcome: "upheld", Slash: &slash, Refund: &refund}); err != nil {
		t.Fatal(err)
	}
	keys, _ := m.callerC.Keys(ctx)
	for _, kk := range keys {
		if kk.ID == k2.ID && (kk.ExecutionCount != 2 || kk.TotalSpent != usdc("0.4")) {
			t.Errorf("the second key = %d executions, %s spent; want 2, 0.4", kk.ExecutionCount, kk.TotalSpent)
		}
	}
}
