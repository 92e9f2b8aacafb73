package e2e_test

import (
	"context"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/ipfs"
)

// A private execution's result reaches its caller alone: it is not served
// at /ipfs/{cid} (404, as an unknown CID), its ledger record commits the
// hash without the CID, and it still verifies with the result the caller
// holds. A public one stays served by CID.
func TestPrivateExecution(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newService(t, func(_ context.Context, r creator.Request) (string, int, error) {
		return "answer to " + r.Task, 0, nil
	}), "0.05")

	priv, err := m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: "a secret", Private: true}, client.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if priv.Result == nil || *priv.Result != "answer to a secret" || priv.ResultHash == nil || priv.IPFSURL != nil {
		t.Fatalf("private record = %+v", priv)
	}
	cid := ipfs.CID(*priv.Result)
	for _, c := range []string{cid, ipfs.CID("never produced")} {
		err := m.anon.Do(ctx, "GET", "/ipfs/"+c, "", nil, nil)
		wantCode(t, err, 404, "not_found")
	}
	record, err := m.anon.Transaction(ctx, crtx.Devnet, *priv.LedgerTransaction)
	if _, named := record.Data["cid"]; err != nil || named || record.Data["result_hash"] != *priv.ResultHash {
		t.Errorf("the private execution's ledger record = %+v, %v", record.Data, err)
	}
	again, err := m.key.Execution(ctx, priv.ExecutionID)
	if err != nil || again.Result == nil || *again.Result != *priv.Result || again.IPFSURL != nil {
		t.Errorf("the caller's read of the private execution = %+v, %v", again, err)
	}
	report, err := m.key.Verify(ctx, priv.ExecutionID)
	if err != nil || !report.OK() {
		t.Errorf("verify private: %+v, %v", report, err)
	}

	pub, err := m.key.Execute(ctx, agent, run("an open question"), client.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	content, err := m.anon.Content(ctx, *pub.IPFSURL)
	if err != nil || string(content) != "answer to an open question" {
		t.Errorf("the public result at %s = %q, %v", *pub.IPFSURL, content, err)
	}
	record, err = m.anon.Transaction(ctx, crtx.Devnet, *pub.LedgerTransaction)
	if err != nil || record.Data["cid"] != ipfs.CID(string(content)) {
		t.Errorf("the public execution's ledger record = %+v, %v", record.Data, err)
	}

	// MCP's run_agent takes the option too.
	var viaMCP runAnswer
	if msg := call(t, mcpSession(t, m.env, m.key, nil), "run_agent", map[string]any{"agent_id": agent, "task": "by MCP", "private": true}, &viaMCP); msg != "" {
		t.Fatal(msg)
	}
	if viaMCP.Status != "completed" || viaMCP.ResultHash == nil || viaMCP.IPFSURL != nil {
		t.Errorf("a private run_agent = %+v", viaMCP)
	}
	err = m.anon.Do(ctx, "GET", "/ipfs/"+ipfs.CID("answer to by MCP"), "", nil, nil)
	wantCode(t, err, 404, "not_found")
	m.rollup()
	m.checkLedger()
}
