package e2e_test

import (
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/client"
)

func dispute(c *client.Client, id, reason string) (api.DisputeInfo, error) {
	var d api.DisputeInfo
	body, _ := json.Marshal(map[string]any{"reason": reason, "description": "the result is not what was signed",
		"evidence": map[string]any{"expected": "sha256:abc", "seen": "sha256:def"}})
	err := c.Do(ctx, "POST", "/v1/executions/"+id+"/disputes", "application/json", body, &d)
	return d, err
}

func resolve(c *client.Client, id string, p map[string]any) (api.DisputeInfo, error) {
	var d api.DisputeInfo
	body, _ := json.Marshal(p)
	err := c.Do(ctx, "POST", "/v1/admin/disputes/"+id+"/resolve", "application/json", body, &d)
	return d, err
}

// mainnetRun lists an agent (price 1 → 50 USDC collateral) and runs it n
// times on mainnet.
func (m *marketplace) mainnetRun(n int) (string, []api.ExecutionRecord) {
	agent := m.list(newService(m.t, echo), "1")
	var recs []api.ExecutionRecord
	for range n {
		rec, err := m.liveKey.Execute(ctx, agent, run("x"), client.ExecuteOptions{})
		if err != nil {
			m.t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	return agent, recs
}

func (m *marketplace) collateral(agent string) crtx.USDC {
	v, err := m.anon.Account(ctx, crtx.Mainnet, crtx.AccountAddress(crtx.AccountCollateral, agent))
	if err != nil {
		m.t.Fatal(err)
	}
	return v.Account.Balance
}

func TestDisputeUpheldSlashesAndRefunds(t *testing.T) {
	m := newMarket(t, "10")
	agent, recs := m.mainnetRun(2)
	// The listing's history is its own: executions point at it by agent_id
	// in their records, so a busy agent's key changes stay within reach
	// of crtx verify, which reads the newest transactions of the listing.
	listing := crtx.AccountAddress(crtx.AccountListing, agent)
	if kinds := joined(accountTxKinds(t, m.env, listing)); kinds != "AgentListed" {
		t.Errorf("listing history after two executions = %s", kinds)
	}
	before := m.balance(m.callerW, crtx.Mainnet).Available
	treasuryBefore := m.treasury(crtx.Mainnet)

	d, err := dispute(m.liveKey, recs[0].ExecutionID, "hash_mismatch")
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != "open" || d.RespondBy.Sub(d.OpenedAt) != 72*time.Hour || d.EvidenceHash == "" {
		t.Errorf("dispute = %+v", d)
	}
	rec, _ := m.liveKey.Execution(ctx, recs[0].ExecutionID)
	if rec.Status != "disputed" || rec.Dispute == nil || rec.Dispute.Status != "open" || rec.Dispute.DisputeID != d.DisputeID {
		t.Errorf("record while disputed = %+v", rec)
	}
	if a, _ := m.anon.Agent(ctx, agent, crtx.Mainnet); a.DisputeCount != 1 {
		t.Errorf("dispute_count = %d", a.DisputeCount)
	}
	// The creator sees and answers it.
	var mine api.DisputeList
	if err := m.creatorC.Do(ctx, "GET", "/v1/creator/disputes", "", nil, &mine); err != nil || len(mine.Disputes) != 1 {
		t.Fatalf("creator disputes = %+v, %v", mine, err)
	}
	var answered api.DisputeInfo
	if err := m.creatorC.Do(ctx, "POST", "/v1/creator/disputes/"+d.DisputeID+"/response", "application/json",
		[]byte(`{"text":"the result was right"}`), &answered); err != nil || *answered.Response != "the result was right" {
		t.Errorf("response = %+v, %v", answered, err)
	}
	// The operator lists it with its due time and upholds it: slash 30 of
	// the 50 USDC collateral, refund the caller 1 from it, 29 to the treasury.
	var open api.DisputeList
	if err := m.admin.Do(ctx, "GET", "/v1/admin/disputes?status=open", "", nil, &open); err != nil || len(open.Disputes) != 1 ||
		!open.Disputes[0].RespondBy.Equal(d.RespondBy) {
		t.Fatalf("open disputes = %+v, %v", open, err)
	}
	got, err := resolve(m.admin, d.DisputeID, map[string]any{"outcome": "upheld", "slash_usdc": 30, "refund_usdc": 1})
	if err != nil || got.Status != "upheld" || got.Slashed != usdc("30") || got.Refunded != usdc("1") || got.ResolvedAt == nil {
		t.Fatalf("resolved = %+v, %v", got, err)
	}
	if c := m.collateral(agent); c != usdc("20") {
		t.Errorf("collateral left %s", c)
	}
	if b := m.balance(m.callerW, crtx.Mainnet).Available; b != before+usdc("1") {
		t.Errorf("caller %s, was %s", b, before)
	}
	if tr := m.treasury(crtx.Mainnet); tr != treasuryBefore+usdc("29") {
		t.Errorf("treasury %s, was %s", tr, treasuryBefore)
	}
	rec, _ = m.liveKey.Execution(ctx, recs[0].ExecutionID)
	if rec.Status != "disputed" || rec.Dispute.Status != "upheld" || rec.Dispute.Slashed != usdc("30") || rec.Dispute.Refunded != usdc("1") {
		t.Errorf("record after upholding = %+v", rec.Dispute)
	}
	kinds := joined(accountTxKinds(t, m.env, crtx.AccountAddress(crtx.AccountEscrow, recs[0].ExecutionID)))
	if kinds != "EscrowOpened,ExecutionRecord,DisputeOpened,DisputeResolved" {
		t.Errorf("record account history = %s", kinds)
	}

	t.Run("a slash larger than what is left is refused", func(t *testing.T) {
		d2, err := dispute(m.liveKey, recs[1].ExecutionID, "fraud")
		if err != nil {
			t.Fatal(err)
		}
		_, err = resolve(m.admin, d2.DisputeID, map[string]any{"outcome": "upheld", "slash_usdc": 20.000001, "refund_usdc": 1})
		ce := wantCode(t, err, 400, "invalid_request")
		if !contains(ce.Message, "20 USDC of collateral left") {
			t.Errorf("message %q does not say what is left", ce.Message)
		}
		if c := m.collateral(agent); c != usdc("20") {
			t.Errorf("a refused slash moved collateral: %s", c)
		}
		_, err = resolve(m.admin, d2.DisputeID, map[string]any{"outcome": "upheld", "slash_usdc": 5, "refund_usdc": 6})
		wantCode(t, err, 400, "invalid_request")
		if _, err := resolve(m.admin, d2.DisputeID, map[string]any{"outcome": "upheld", "slash_usdc": 20, "refund_usdc": 1}); err != nil {
			t.Fatalf("slashing exactly what is left: %v", err)
		}
		if c := m.collateral(agent); c != 0 {
			t.Errorf("collateral left %s", c)
		}
		_, err = resolve(m.admin, d2.DisputeID, map[string]any{"outcome": "rejected"})
		wantCode(t, err, 409, "dispute_closed")
	})
}

func TestDisputeRejectedAndRefusals(t *testing.T) {
	m := newMarket(t, "10")
	agent, recs := m.mainnetRun(3)
	d, err := dispute(m.liveKey, recs[0].ExecutionID, "other")
	if err != nil {
		t.Fatal(err)
	}
	coll := m.collateral(agent)
	got, err := resolve(m.admin, d.DisputeID, map[string]any{"outcome": "rejected"})
	if err != nil || got.Status != "rejected" || got.Slashed != 0 {
		t.Fatalf("rejected = %+v, %v", got, err)
	}
	rec, _ := m.liveKey.Execution(ctx, recs[0].ExecutionID)
	if rec.Status != "completed" || rec.Dispute == nil || rec.Dispute.Status != "rejected" {
		t.Errorf("record after rejection = %+v", rec)
	}
	if m.collateral(agent) != coll {
		t.Error("a rejected dispute moved collateral")
	}
	_, err = resolve(m.admin, d.DisputeID, map[string]any{"outcome": "rejected", "slash_usdc": 1})
	wantCode(t, err, 400, "invalid_request")

	t.Run("second dispute", func(t *testing.T) {
		_, err := dispute(m.liveKey, recs[0].ExecutionID, "fraud")
		wantCode(t, err, 409, "dispute_exists")
	})
	t.Run("after the window", func(t *testing.T) {
		m.clock.Advance(72*time.Hour + time.Second)
		_, err := dispute(m.liveKey, recs[1].ExecutionID, "fraud")
		ce := wantCode(t, err, 409, "dispute_window_closed")
		if ce.ExecutionID == nil || *ce.ExecutionID != recs[1].ExecutionID {
			t.Error("no execution id in the error")
		}
		m.clock.Advance(-72*time.Hour - time.Second)
	})
	t.Run("failed execution", func(t *testing.T) {
		failing := m.list(fault(t, func(w http.ResponseWriter, req crtx.CreatorRequest, _ ed25519.PrivateKey) {
			msg := "no"
			replyJSON(w, crtx.CreatorReply{ExecutionID: req.ExecutionID, Status: "failed", Error: &msg})
		}), "0.1", map[string]any{"name": "Failing"})
		_, err := m.liveKey.Execute(ctx, failing, run("x"), client.ExecuteOptions{})
		ce := wantCode(t, err, 500, "execution_failed")
		_, err = dispute(m.liveKey, *ce.ExecutionID, "fraud")
		wantCode(t, err, 409, "not_disputable")
	})
	t.Run("stranger", func(t *testing.T) {
		other := m.signIn(newWallet(t))
		k, _ := other.CreateKey(ctx, client.KeyParams{Name: "s", Environment: crtx.Mainnet})
		_, err := dispute(m.anon.WithToken(k.Key), recs[2].ExecutionID, "fraud")
		wantCode(t, err, 404, "execution_not_found")
		_, err = dispute(m.key, recs[2].ExecutionID, "fraud") // the caller's devnet key
		wantCode(t, err, 404, "execution_not_found")
		_, err = dispute(m.callerC, recs[2].ExecutionID, "fraud") // a session, not a key
		wantCode(t, err, 401, "invalid_api_key")
		err = other.Do(ctx, "POST", "/v1/creator/disputes/"+d.DisputeID+"/response", "application/json", []byte(`{"text":"x"}`), nil)
		wantCode(t, err, 404, "dispute_not_found")
	})
	t.Run("bad input", func(t *testing.T) {
		for _, b := range []string{`{"reason":"bored","description":"x"}`, `{"reason":"fraud","description":""}`,
			`{"reason":"fraud","description":"x","evidence":[1]}`, `{"reason":"fraud","description":"x","extra":1}`} {
			err := m.liveKey.Do(ctx, "POST", "/v1/executions/"+recs[2].ExecutionID+"/disputes", "application/json", []byte(b), nil)
			wantCode(t, err, 400, "invalid_request")
		}
	})
	t.Run("admin token on every admin path", func(t *testing.T) {
		for _, p := range []struct{ method, path string }{
			{"GET", "/v1/admin/disputes"}, {"POST", "/v1/admin/disputes/" + d.DisputeID + "/resolve"},
			{"POST", "/v1/admin/creators/" + m.creatorW.address + "/verify"}, {"POST", "/v1/admin/creators/" + m.creatorW.address + "/unverify"},
			{"POST", "/v1/admin/agents/" + agent + "/suspend"}, {"POST", "/v1/admin/agents/" + agent + "/unsuspend"},
			{"POST", "/v1/admin/deposits"}, {"POST", "/v1/admin/withdrawals"},
		} {
			wantCode(t, m.anon.Do(ctx, p.method, p.path, "application/json", []byte(`{}`), nil), 401, "authentication_required")
			// A wrong token is refused; past five from one address the
			// refusal is a throttle (TestAdminGuessesThrottled).
			err := m.creatorC.Do(ctx, p.method, p.path, "application/json", []byte(`{}`), nil)
			if code := client.Code(err); code != "invalid_api_key" && code != "rate_limited" {
				t.Errorf("%s %s with a session token: %v", p.method, p.path, err)
			}
		}
	})
}

// Devnet has no collateral: the treasury refunds, and the record shows the
// slash that would have been made.
func TestDevnetDisputeRefundsFromTreasury(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newService(t, echo), "2")
	rec := m.ran(t, m.key, agent)
	before := m.balance(m.callerW, crtx.Devnet).Available
	coll := m.collateral(agent)
	d, _ := dispute(m.key, rec.ExecutionID, "fraud")
	got, err := resolve(m.admin, d.DisputeID, map[string]any{"outcome": "upheld", "slash_usdc": 100, "refund_usdc": 2})
	if err != nil || got.Slashed != usdc("100") || got.Refunded != usdc("2") {
		t.Fatalf("devnet ruling = %+v, %v", got, err)
	}
	if b := m.balance(m.callerW, crtx.Devnet).Available; b != before+usdc("2") {
		t.Errorf("caller %s", b)
	}
	if m.collateral(agent) != coll {
		t.Error("a devnet ruling touched mainnet collateral")
	}
}

func TestBadgesAndSuspension(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newService(t, echo), "0.5")
	var p api.CreatorProfile
	if err := m.admin.Do(ctx, "POST", "/v1/admin/creators/"+m.creatorW.address+"/verify", "", nil, &p); err != nil || !p.Verified {
		t.Fatalf("verify = %+v, %v", p, err)
	}
	if page, _ := m.anon.Agents(ctx, url.Values{"verified_only": {"true"}}); page.Total != 1 || !page.Agents[0].Creator.Verified {
		t.Errorf("verified_only after verifying = %+v", page)
	}
	if a, _ := m.anon.Agent(ctx, agent, ""); !a.Creator.Verified {
		t.Error("the listing does not show the badge")
	}
	m.admin.Do(ctx, "POST", "/v1/admin/creators/"+m.creatorW.address+"/unverify", "", nil, &p)
	if page, _ := m.anon.Agents(ctx, url.Values{"verified_only": {"true"}}); page.Total != 0 || p.Verified {
		t.Errorf("verified_only after unverifying = %d", page.Total)
	}
	wantCode(t, m.admin.Do(ctx, "POST", "/v1/admin/creators/nope/verify", "", nil, nil), 400, "invalid_request")

	var a api.CreatorAgent
	if err := m.admin.Do(ctx, "POST", "/v1/admin/agents/"+agent+"/suspend", "", nil, &a); err != nil || !a.Suspended {
		t.Fatalf("suspend = %+v, %v", a.Suspended, err)
	}
	if page, _ := m.anon.Agents(ctx, nil); page.Total != 0 {
		t.Error("a suspended agent is listed")
	}
	_, err := m.anon.Agent(ctx, agent, "")
	wantCode(t, err, 404, "agent_not_found")
	_, err = m.key.Execute(ctx, agent, run("x"), client.ExecuteOptions{})
	wantCode(t, err, 404, "agent_not_found")
	// The creator's resume does not lift it.
	patch(m.creatorC, agent, map[string]any{"status": "active"})
	if page, _ := m.anon.Agents(ctx, nil); page.Total != 0 {
		t.Error("the creator lifted a suspension")
	}
	if mine, _ := m.creatorC.CreatorAgents(ctx); len(mine) != 1 || !mine[0].Suspended {
		t.Errorf("creator's view = %+v", mine)
	}
	m.admin.Do(ctx, "POST", "/v1/admin/agents/"+agent+"/unsuspend", "", nil, &a)
	if _, err := m.key.Execute(ctx, agent, run("x"), client.ExecuteOptions{}); err != nil {
		t.Errorf("after unsuspending: %v", err)
	}
	wantCode(t, m.admin.Do(ctx, "POST", "/v1/admin/agents/agt_nope/suspend", "", nil, nil), 404, "agent_not_found")
}

func TestCollateralRelease(t *testing.T) {
	m := newMarket(t, "10") // the release job runs once a minute: only the test's calls act
	agent, recs := m.mainnetRun(2)
	release := func() int {
		n, err := m.d.Market.Listings.ReleaseCollateral(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// A dispute, upheld with a partial slash, then delisting. A devnet
	// dispute, which can slash nothing, stays open and holds nothing.
	d, _ := dispute(m.liveKey, recs[0].ExecutionID, "fraud")
	dev, err := m.key.Execute(ctx, agent, run("x"), client.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dispute(m.key, dev.ExecutionID, "fraud"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.creatorC.Delist(ctx, agent); err != nil {
		t.Fatal(err)
	}
	creatorBefore := m.balance(m.creatorW, crtx.Mainnet).Available
	m.clock.Advance(73 * time.Hour)
	if n := release(); n != 0 {
		t.Fatal("released while a dispute is open")
	}
	resolve(m.admin, d.DisputeID, map[string]any{"outcome": "upheld", "slash_usdc": 12.5, "refund_usdc": 1})
	m.clock.Advance(-73 * time.Hour)
	// Not before 72 h after the last execution and the delisting.
	m.clock.Advance(72*time.Hour - time.Second)
	if n := release(); n != 0 {
		t.Fatal("released before 72 hours")
	}
	m.clock.Advance(2 * time.Second)
	// The release job of a restarted crtxd finds the work from the database.
	m.cfg.ReleaseInterval = 20 * time.Millisecond
	m.restart()
	deadline := time.Now().Add(10 * time.Second)
	for m.collateral(agent) != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := m.balance(m.creatorW, crtx.Mainnet).Available; got != creatorBefore+usdc("37.5") {
		t.Errorf("creator got back %s, want exactly the 37.5 left after slashing", got-creatorBefore)
	}
	if c := m.collateral(agent); c != 0 {
		t.Errorf("collateral left %s", c)
	}
	// Once, even after a restart of the job.
	if n := release(); n != 0 {
		t.Error("released twice")
	}
	kinds := joined(accountTxKinds(t, m.env, crtx.AccountAddress(crtx.AccountCollateral, agent)))
	if kinds != "CollateralLocked,CollateralSlashed,CollateralReleased" {
		t.Errorf("collateral history = %s", kinds)
	}
}
