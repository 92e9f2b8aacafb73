package market_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/payment"
	"github.com/crtx-market/crtx/payment/exact"
	"github.com/crtx-market/crtx/payment/ledger"
	"github.com/crtx-market/crtx/store/testdb"
)

// A catalog page's devnet figures are one read for all its cards, kept a
// few seconds: a second page view reads nothing. An agent no longer
// listed, or unknown, has none.
func TestFiguresAreOneReadForAPage(t *testing.T) {
	ctx := context.Background()
	store := &countingStore{Store: testdb.SQLite(t)}
	_, authority, _ := ed25519.GenerateKey(nil)
	m, err := market.New(store, market.Config{Schemes: []payment.New{ledger.New, exact.New}, PublicURL: "http://127.0.0.1:8080", Authority: authority, Signer: authority})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	var ids []string
	err = store.Update(ctx, func(tx crtx.Tx) error {
		if err := tx.Catalog.EnsureCreator(ctx, "w1", now); err != nil {
			return err
		}
		for i := range 12 {
			id := fmt.Sprintf("agt_%02d", i)
			a := crtx.Agent{ID: id, Creator: "w1", Name: "Agent " + id, Tagline: "t", Description: "d", Tags: []string{"data"},
				InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"string"}`),
				PricingModel: "pay_per_use", Price: 10_000, EndpointURL: "https://" + id + ".example/execute", SigningPublicKey: "key",
				TimeoutSeconds: 60, Status: crtx.AgentActive, CreatedAt: now, UpdatedAt: now}
			if i == 11 {
				a.Status = crtx.AgentDelisted
			}
			if err := tx.Catalog.InsertAgent(ctx, a); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return tx.Catalog.AddAgentStats(ctx, "agt_00", crtx.Devnet, crtx.AgentStats{Total: 3, Finished: 3, Successful: 2})
	})
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, "agt_unknown")
	before := store.views.Load()
	for range 2 {
		got, err := m.Catalog.Figures(ctx, crtx.Devnet, ids)
		if err != nil || len(got) != 11 || got["agt_00"].Stats.Total != 3 || got["agt_01"].Stats.Total != 0 {
			t.Fatalf("figures: %d listings, agt_00 %+v, %v", len(got), got["agt_00"], err)
		}
		if _, ok := got["agt_11"]; ok {
			t.Error("a delisted agent has figures")
		}
	}
	if n := store.views.Load() - before; n != 1 {
		t.Errorf("two page views of 12 cards read %d times, want once", n)
	}
}
