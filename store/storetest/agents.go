package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
)

func agent(id, creator string, price crtx.USDC, tags []string, created time.Time) crtx.Agent {
	return crtx.Agent{ID: id, Creator: creator, Name: "Agent " + id, Tagline: "Does " + id + ".", Description: "Description of " + id,
		Tags: tags, InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"string"}`),
		PricingModel: "pay_per_use", Price: price, EndpointURL: "https://" + id + ".example/execute",
		SigningPublicKey: "key-" + id, TimeoutSeconds: 60, Status: crtx.AgentActive, Collateral: 10_000_000,
		CreatedAt: created, UpdatedAt: created}
}

// metered is a priced per token: its price the base, 0.0025 USDC per
// 1,000 tokens, at most 0.5 USDC a call.
func metered(a crtx.Agent) crtx.Agent {
	a.PricingModel, a.Per1k, a.Cap = crtx.PricingMetered, 2_500, 500_000
	return a
}

func testCreatorsAndAgents(t *testing.T, s crtx.Store) {
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		for _, w := range []string{"w1", "w1", "w2"} {
			if err := tx.Catalog.EnsureCreator(ctx, w, t0); err != nil {
				return err
			}
		}
		if err := tx.Catalog.SetCreatorName(ctx, "w1", "Ada"); err != nil {
			return err
		}
		if err := tx.Catalog.SetCreatorVerified(ctx, "w2", true); err != nil {
			return err
		}
		if err := tx.Catalog.InsertAgent(ctx, agent("a1", "w1", 50_000, []string{"data", "sql"}, t0)); err != nil {
			return err
		}
		a2 := metered(agent("a2", "w1", 70_000, []string{"writing"}, t0.Add(time.Second)))
		a2.Example = crtx.Example{Task: "count: a b", Parameters: json.RawMessage(`{"lang":"en"}`)}
		return tx.Catalog.InsertAgent(ctx, a2)
	})
	err := s.Update(context.Background(), func(tx crtx.Tx) error {
		return tx.Catalog.InsertAgent(context.Background(), agent("a1", "w1", 1, []string{"x"}, t0))
	})
	if !errors.Is(err, crtx.ErrConflict) {
		t.Errorf("a second agent a1: %v, want ErrConflict", err)
	}
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		c, err := tx.Catalog.Creator(ctx, "w1")
		if err != nil || c.DisplayName != "Ada" || c.Verified {
			t.Errorf("creator w1 = %+v, %v", c, err)
		}
		if c, _ := tx.Catalog.Creator(ctx, "w2"); !c.Verified || c.DisplayName != "" {
			t.Errorf("creator w2 = %+v", c)
		}
		if _, err := tx.Catalog.Creator(ctx, "w3"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("unknown creator: %v", err)
		}
		a, err := tx.Catalog.Agent(ctx, "a1")
		want := agent("a1", "w1", 50_000, []string{"data", "sql"}, t0)
		if err != nil || fmt.Sprint(a) != fmt.Sprint(want) {
			t.Errorf("Agent(a1) =\n%+v, %v\nwant\n%+v", a, err, want)
		}
		if _, err := tx.Catalog.Agent(ctx, "nope"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("unknown agent: %v", err)
		}
		for _, want := range []crtx.Agent{want, metered(agent("a2", "w1", 70_000, []string{"writing"}, t0.Add(time.Second)))} {
			terms, err := tx.Catalog.AgentTerms(ctx, want.ID)
			wantTerms := crtx.Agent{ID: want.ID, Creator: want.Creator, Name: want.Name, PricingModel: want.PricingModel,
				Price: want.Price, Per1k: want.Per1k, Cap: want.Cap, EndpointURL: want.EndpointURL, SigningPublicKey: want.SigningPublicKey,
				TimeoutSeconds: want.TimeoutSeconds, Status: want.Status, SuspendedAt: want.SuspendedAt}
			if err != nil || fmt.Sprint(terms) != fmt.Sprint(wantTerms) {
				t.Errorf("AgentTerms(%s) =\n%+v, %v\nwant\n%+v", want.ID, terms, err, wantTerms)
			}
		}
		if a, err := tx.Catalog.Agent(ctx, "a2"); err != nil || a.Per1k != 2_500 || a.Cap != 500_000 || a.PricingModel != crtx.PricingMetered ||
			a.Example.Task != "count: a b" || string(a.Example.Parameters) != `{"lang":"en"}` {
			t.Errorf("Agent(a2) = %+v, %v; want its metered prices and its example", a, err)
		}
		if _, err := tx.Catalog.AgentTerms(ctx, "nope"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("terms of an unknown agent: %v", err)
		}
		mine, err := tx.Catalog.AgentsByCreator(ctx, "w1")
		if err != nil || len(mine) != 2 || mine[0].ID != "a1" {
			t.Errorf("AgentsByCreator = %v, %v", mine, err)
		}
		return nil
	})
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		a, _ := tx.Catalog.Agent(ctx, "a1")
		a.Tags, a.Status, a.Description, a.UpdatedAt = []string{"code"}, crtx.AgentPaused, "Changed", t0.Add(time.Hour)
		a.Example = crtx.Example{Task: "an example"}
		if err := tx.Catalog.UpdateAgent(ctx, a); err != nil {
			return err
		}
		if err := tx.Catalog.AddAgentStats(ctx, "a1", crtx.Devnet, crtx.AgentStats{Total: 4, Finished: 2, Successful: 1, TimeSumMS: 40, Rejected: 1}); err != nil {
			return err
		}
		return tx.Catalog.AddAgentStats(ctx, "a1", crtx.Devnet, crtx.AgentStats{Total: 1, Finished: 1, Successful: 1, TimeSumMS: 60, Disputes: 1})
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		it, err := tx.Catalog.AgentListing(ctx, "a1", crtx.Devnet)
		if err != nil || it.Agent.Status != crtx.AgentPaused || it.Agent.Description != "Changed" || it.Creator.DisplayName != "Ada" ||
			it.Agent.Example.Task != "an example" || it.Agent.Example.Parameters != nil ||
			it.Stats != (crtx.AgentStats{Total: 5, Finished: 3, Successful: 2, TimeSumMS: 100, Disputes: 1, Rejected: 1}) {
			t.Errorf("AgentListing(a1, devnet) = %+v, %v", it, err)
		}
		it, _ = tx.Catalog.AgentListing(ctx, "a1", crtx.Mainnet)
		if it.Stats != (crtx.AgentStats{}) {
			t.Errorf("mainnet stats of a1 = %+v", it.Stats)
		}
		return nil
	})
}

func testListAgents(t *testing.T, s crtx.Store) {
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		tx.Catalog.EnsureCreator(ctx, "plain", t0)
		tx.Catalog.EnsureCreator(ctx, "verified", t0)
		tx.Catalog.SetCreatorVerified(ctx, "verified", true)
		for i := range 12 {
			id := fmt.Sprintf("a%02d", i)
			owner := "plain"
			if i%3 == 0 {
				owner = "verified"
			}
			tags := []string{"data"}
			if i%2 == 0 {
				tags = append(tags, "sql")
			}
			a := agent(id, owner, crtx.USDC(10_000*(i%4+1)), tags, t0.Add(time.Duration(i/2)*time.Minute))
			if i == 5 {
				a.Name, a.Description = "Invoice reader", "Reads invoices and extracts totals"
			}
			if i == 11 {
				a.Status = crtx.AgentPaused
			}
			if err := tx.Catalog.InsertAgent(ctx, a); err != nil {
				return err
			}
			if err := tx.Catalog.AddAgentStats(ctx, id, crtx.Mainnet, crtx.AgentStats{Total: int64(i % 5), Finished: int64(i % 5), Successful: int64(min(i%3, i%5))}); err != nil {
				return err
			}
		}
		return nil
	})
	list := func(q crtx.AgentQuery) ([]string, int) {
		if q.Limit == 0 {
			q.Limit = 100
		}
		if q.Sort == "" {
			q.Sort = crtx.SortTotalExecutions
		}
		q.Environment = crtx.Mainnet
		var ids []string
		var total int
		view(t, s, func(ctx context.Context, tx crtx.Tx) error {
			items, err := tx.Catalog.ListAgents(ctx, q)
			if err != nil {
				return err
			}
			for _, it := range items {
				ids = append(ids, it.Agent.ID)
			}
			total, err = tx.Catalog.CountAgents(ctx, q)
			return err
		})
		return ids, total
	}
	ids, total := list(crtx.AgentQuery{})
	if total != 11 || len(ids) != 11 || slices.Contains(ids, "a11") {
		t.Fatalf("active agents = %v (%d)", ids, total)
	}
	// total = i%5 descending; ties by id.
	if want := "[a04 a09 a03 a08 a02 a07 a01 a06 a00 a05 a10]"; fmt.Sprint(ids) != want {
		t.Errorf("by total_executions = %v, want %s", ids, want)
	}
	if ids, _ := list(crtx.AgentQuery{Sort: crtx.SortPriceAsc, Limit: 4}); fmt.Sprint(ids) != "[a00 a04 a08 a01]" {
		t.Errorf("price_asc page = %v", ids)
	}
	if ids, _ := list(crtx.AgentQuery{Sort: crtx.SortCreatedAt, Limit: 3, Offset: 1}); fmt.Sprint(ids) != "[a08 a09 a06]" {
		t.Errorf("created_at page 2 = %v", ids)
	}
	if ids, total := list(crtx.AgentQuery{Tags: []string{"data", "sql"}}); total != 6 || slices.Contains(ids, "a01") {
		t.Errorf("tags data+sql = %v (%d)", ids, total)
	}
	// Each tag's count of listed agents is the catalog's total with that
	// tag; the paused a11's tags count it not.
	var tagCounts map[string]int
	view(t, s, func(ctx context.Context, tx crtx.Tx) (err error) {
		tagCounts, err = tx.Catalog.TagCounts(ctx)
		return err
	})
	if len(tagCounts) == 0 {
		t.Error("no tag counted")
	}
	for tag, n := range tagCounts {
		if _, total := list(crtx.AgentQuery{Tags: []string{tag}}); total != n || n == 0 {
			t.Errorf("tag %s counts %d, the catalog lists %d", tag, n, total)
		}
	}
	if _, total := list(crtx.AgentQuery{VerifiedOnly: true}); total != 4 {
		t.Errorf("verified = %d", total)
	}
	three := int64(3)
	if _, total := list(crtx.AgentQuery{MinExecutions: &three}); total != 4 {
		t.Errorf("min_executions 3 = %d", total)
	}
	rate := 0.5
	// A count joins the statistics only when a filter needs them; it must
	// still agree with the page, with a search beside (argument order).
	for _, q := range []crtx.AgentQuery{{MinSuccessRate: &rate}, {MinExecutions: &three, VerifiedOnly: true},
		{Q: "invoices total", MinExecutions: new(int64)}, {Q: "invoices", Tags: []string{"data"}, MinSuccessRate: new(float64)}} {
		if ids, total := list(q); total != len(ids) {
			t.Errorf("%+v: page of %d, total %d", q, len(ids), total)
		}
	}
	for _, id := range func() []string { ids, _ := list(crtx.AgentQuery{MinSuccessRate: &rate}); return ids }() {
		var i int
		fmt.Sscanf(id, "a%d", &i)
		if i%5 == 0 || float64(min(i%3, i%5))/float64(i%5) < 0.5 {
			t.Errorf("%s passes min_success_rate 0.5", id)
		}
	}
	if ids, total := list(crtx.AgentQuery{Q: "invoices total", Sort: crtx.SortRelevance}); total != 1 || ids[0] != "a05" {
		t.Errorf("search = %v", ids)
	}
	if ids, _ := list(crtx.AgentQuery{Q: `"*(`, Sort: crtx.SortRelevance, Limit: 2}); len(ids) != 2 {
		t.Errorf("a query with no words lists everything: %v", ids)
	}
	// Totals follow changes to a listing: suspended, paused, resumed.
	counts := func() string {
		var out []int
		for _, tags := range [][]string{nil, {"data"}, {"sql"}, {"sql", "data"}} {
			ids, total := list(crtx.AgentQuery{Tags: tags})
			if total != len(ids) {
				t.Errorf("tags %v: page of %d, total %d", tags, len(ids), total)
			}
			out = append(out, total)
		}
		return fmt.Sprint(out)
	}
	if got := counts(); got != "[11 11 6 6]" {
		t.Errorf("totals = %s", got)
	}
	change := func(id string, f func(*crtx.Agent)) {
		update(t, s, func(ctx context.Context, tx crtx.Tx) error {
			a, err := tx.Catalog.Agent(ctx, id)
			if err != nil {
				return err
			}
			f(&a)
			return tx.Catalog.UpdateAgent(ctx, a)
		})
	}
	change("a00", func(a *crtx.Agent) { a.SuspendedAt = &t0 })
	change("a11", func(a *crtx.Agent) { a.Status = crtx.AgentActive })
	change("a02", func(a *crtx.Agent) { a.Status = crtx.AgentDelisted })
	if got := counts(); got != "[10 10 4 4]" {
		t.Errorf("totals after suspending a00, resuming a11, delisting a02 = %s", got)
	}
	change("a00", func(a *crtx.Agent) { a.SuspendedAt = nil })
	if got := counts(); got != "[11 11 5 5]" {
		t.Errorf("totals after lifting the suspension = %s", got)
	}
}

func testLedgerRefs(t *testing.T, s crtx.Store) {
	_, alice, _ := fund(t, s, crtx.Mainnet)
	listing := crtx.NewAccount(crtx.Mainnet, crtx.AccountListing, "a1", "alice")
	listing.CreatedAt = t0
	var lt crtx.LedgerTx
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		lt = crtx.LedgerTx{ID: "listed", Environment: crtx.Mainnet, Kind: crtx.TxAgentListed, Data: map[string]string{"agent_id": "a1"},
			Postings: []crtx.Posting{}, Accounts: []string{listing.Address, alice.Address}, CreatedAt: t0}
		return tx.Ledger.InsertTransaction(ctx, &lt, listing)
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		for _, addr := range []string{listing.Address, alice.Address} {
			txs, err := tx.Ledger.AccountTransactions(ctx, crtx.Mainnet, addr, 10)
			if err != nil || len(txs) == 0 || txs[0].ID != "listed" {
				t.Errorf("AccountTransactions(%s) = %v, %v", addr, txs, err)
			}
		}
		back, err := tx.Ledger.Transaction(ctx, crtx.Mainnet, "listed")
		if err != nil || back.Leaf() != lt.Leaf() || fmt.Sprint(back.Accounts) != fmt.Sprint(lt.Accounts) {
			t.Errorf("read back = %+v, %v", back, err)
		}
		return nil
	})
}
