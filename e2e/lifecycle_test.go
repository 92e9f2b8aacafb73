package e2e_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/crtx-market/crtx"
)

func TestListingLifecycle(t *testing.T) {
	e := start(t, private)
	svc := newService(t, echo)
	w, c := e.creatorOf("400")
	a, err := list(c, params(svc, "0.5"))
	if err != nil {
		t.Fatal(err)
	}
	listing := crtx.AccountAddress(crtx.AccountListing, a.AgentID)

	t.Run("display name", func(t *testing.T) {
		p, err := c.SetDisplayName(ctx, "Ada's agents")
		if err != nil || p.DisplayName != "Ada's agents" || p.Wallet != w.address {
			t.Fatalf("profile = %+v, %v", p, err)
		}
		got, _ := e.anon.Agent(ctx, a.AgentID, "")
		if got.Creator.DisplayName != "Ada's agents" {
			t.Errorf("listing shows %q", got.Creator.DisplayName)
		}
		p, _ = c.SetDisplayName(ctx, "")
		if p.DisplayName != crtx.DefaultDisplayName(w.address) {
			t.Errorf("empty name gives %q", p.DisplayName)
		}
		// The listing shows the change at once, not when its cached copy
		// ages out.
		if got, _ = e.anon.Agent(ctx, a.AgentID, ""); got.Creator.DisplayName != p.DisplayName {
			t.Errorf("after the name was cleared the listing shows %q", got.Creator.DisplayName)
		}
	})

	t.Run("pause and resume", func(t *testing.T) {
		paused, err := patch(c, a.AgentID, map[string]any{"status": "paused"})
		if err != nil || paused.Status != "paused" {
			t.Fatalf("pause = %+v, %v", paused.Status, err)
		}
		if page, _ := e.anon.Agents(ctx, nil); page.Total != 0 {
			t.Errorf("a paused agent is listed")
		}
		got, err := e.anon.Agent(ctx, a.AgentID, "")
		if err != nil || got.Status != "paused" {
			t.Errorf("paused agent by id = %+v, %v", got.Status, err)
		}
		if _, err := patch(c, a.AgentID, map[string]any{"status": "active"}); err != nil {
			t.Fatal(err)
		}
		if page, _ := e.anon.Agents(ctx, nil); page.Total != 1 {
			t.Errorf("a resumed agent is not listed")
		}
		_, err = patch(c, a.AgentID, map[string]any{"status": "delisted"})
		wantCode(t, err, 400, "invalid_request")
	})

	t.Run("edit", func(t *testing.T) {
		before := mainnetBalance(t, c)
		got, err := patch(c, a.AgentID, map[string]any{"description": "Now with lines.", "tags": []string{"writing"},
			"price_per_call_usdc": json.Number("2"), "timeout_seconds": 30})
		if err != nil {
			t.Fatal(err)
		}
		if got.Description != "Now with lines." || len(got.Tags) != 1 || got.Price != usdc("2") || got.TimeoutSeconds != 30 {
			t.Errorf("edited = %+v", got)
		}
		// 0.5 → 2 moves from the 50 USDC tier to the 250 tier: 200 more locked.
		if got.Collateral != usdc("250") || mainnetBalance(t, c) != before-usdc("200") {
			t.Errorf("collateral %s, balance %s (was %s)", got.Collateral, mainnetBalance(t, c), before)
		}
		// A cheaper price keeps what is locked.
		got, _ = patch(c, a.AgentID, map[string]any{"price_per_call_usdc": json.Number("0.01")})
		if got.Collateral != usdc("250") {
			t.Errorf("collateral after a price cut = %s", got.Collateral)
		}
		// Past what the wallet holds: 402 and nothing changes.
		_, err = patch(c, a.AgentID, map[string]any{"price_per_call_usdc": json.Number("20")})
		wantCode(t, err, 402, "insufficient_balance")
		if got, _ := e.anon.Agent(ctx, a.AgentID, ""); got.Price != usdc("0.01") {
			t.Errorf("a refused edit changed the price to %s", got.Price)
		}
		for _, bad := range []map[string]any{{"name": "New"}, {"pricing_model": "pay_per_use"}, {"tags": []string{}},
			{"price_per_call_usdc": json.Number("-1")}, {"input_schema": json.RawMessage(`{"type":"array"}`)}, {"owner": "x"}} {
			_, err := patch(c, a.AgentID, bad)
			wantCode(t, err, 400, "invalid_request")
		}
	})

	t.Run("endpoint re-tested", func(t *testing.T) {
		dead := httptest.NewServer(http.NotFoundHandler())
		dead.Close()
		_, err := patch(c, a.AgentID, map[string]any{"endpoint_url": dead.URL + "/execute"})
		wantCode(t, err, 422, "endpoint_unreachable")
		other := newService(t, echo)
		_, err = patch(c, a.AgentID, map[string]any{"endpoint_url": other.URL})
		wantCode(t, err, 422, "endpoint_unreachable") // it signs with another key
		got, err := patch(c, a.AgentID, map[string]any{"endpoint_url": other.URL, "signing_public_key": other.PubKey})
		if err != nil || got.EndpointURL != other.URL || got.SigningPublicKey != other.PubKey {
			t.Errorf("moved endpoint = %+v, %v", got, err)
		}
	})

	t.Run("only the owner", func(t *testing.T) {
		_, mallory := e.creatorOf("10")
		_, err := patch(mallory, a.AgentID, map[string]any{"description": "mine now"})
		wantCode(t, err, 404, "agent_not_found")
		_, err = mallory.Delist(ctx, a.AgentID)
		wantCode(t, err, 404, "agent_not_found")
		if agents, _ := mallory.CreatorAgents(ctx); len(agents) != 0 {
			t.Errorf("another creator sees %d agents", len(agents))
		}
	})

	t.Run("delist", func(t *testing.T) {
		got, err := c.Delist(ctx, a.AgentID)
		if err != nil || got.Status != "delisted" {
			t.Fatalf("delist = %+v, %v", got.Status, err)
		}
		_, err = e.anon.Agent(ctx, a.AgentID, "")
		wantCode(t, err, 404, "agent_not_found")
		if page, _ := e.anon.Agents(ctx, nil); page.Total != 0 {
			t.Errorf("a delisted agent is listed")
		}
		mine, _ := c.CreatorAgents(ctx)
		if len(mine) != 1 || mine[0].Status != "delisted" {
			t.Errorf("creator's list = %+v", mine)
		}
		_, err = patch(c, a.AgentID, map[string]any{"description": "back"})
		wantCode(t, err, 404, "agent_not_found")
		// The collateral stays locked until the release job returns it.
		coll, _ := e.anon.Account(ctx, crtx.Mainnet, crtx.AccountAddress(crtx.AccountCollateral, a.AgentID))
		if coll.Account.Balance != usdc("250") {
			t.Errorf("collateral after delisting = %s", coll.Account.Balance)
		}
	})

	if kinds := joined(accountTxKinds(t, e, listing)); kinds !=
		"AgentListed,ListingUpdated,ListingUpdated,ListingUpdated,ListingUpdated,ListingUpdated,AgentDelisted" {
		t.Errorf("listing account history = %s", kinds)
	}
}
