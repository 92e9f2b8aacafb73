package mcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/internal/markettest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// run_agent runs the agent on its creator's service: the result is the
// one the service signed, the wallet paid the price once and holds
// nothing in escrow; get_execution reads the run back and
// verify_execution checks it from the public reads alone.
func TestRunAgent(t *testing.T) {
	m := serve(t)
	cs := connect(t, m, m.Key)
	before := m.Balance(t)

	var run struct {
		ExecutionID   string          `json:"execution_id"`
		Status        crtx.ExecStatus `json:"status"`
		Cost          crtx.USDC       `json:"cost_usdc"`
		ResultHash    *string         `json:"result_hash"`
		IPFSURL       *string         `json:"ipfs_url"`
		OnChainRecord string          `json:"on_chain_record"`
	}
	res := call(t, cs, "run_agent", map[string]any{"agent_id": m.Agent, "task": "Ada", "max_cost_usdc": 0.25}, &run)
	want := markettest.Result("Ada")
	if text, _ := res.Content[0].(*sdk.TextContent); text == nil || text.Text != want {
		t.Errorf("result content = %+v, want %q", res.Content[0], want)
	}
	if run.ExecutionID == "" || run.Status != crtx.ExecCompleted || run.Cost != markettest.Price || run.ResultHash == nil ||
		*run.ResultHash != crtx.ResultHash(want) || run.IPFSURL == nil || !strings.HasPrefix(*run.IPFSURL, m.URL+"/ipfs/") ||
		!strings.HasPrefix(run.OnChainRecord, m.URL+"/explorer/") {
		t.Errorf("run_agent = %+v", run)
	}
	if after := m.Balance(t); before.Available-after.Available != markettest.Price || after.Escrowed != 0 {
		t.Errorf("balance %+v, was %+v: want the price paid once, nothing held", after, before)
	}

	var rec struct {
		ExecutionID string          `json:"execution_id"`
		AgentID     string          `json:"agent_id"`
		Status      crtx.ExecStatus `json:"status"`
		Result      string          `json:"result"`
		Cost        crtx.USDC       `json:"cost_usdc"`
	}
	call(t, cs, "get_execution", map[string]any{"execution_id": run.ExecutionID}, &rec)
	if rec.ExecutionID != run.ExecutionID || rec.AgentID != m.Agent || rec.Status != crtx.ExecCompleted || rec.Result != want ||
		rec.Cost != markettest.Price {
		t.Errorf("get_execution = %+v", rec)
	}

	// The daemon seals blocks every few seconds; here the test does, so
	// that the record (devnet) and the listing (mainnet) have their proofs.
	for _, env := range crtx.Environments {
		if _, _, err := m.Ledger.Seal(context.Background(), env); err != nil {
			t.Fatal(err)
		}
	}
	var report struct {
		ExecutionID string `json:"execution_id"`
		Checks      []struct {
			Name   string `json:"name"`
			OK     bool   `json:"ok"`
			Detail string `json:"detail"`
		} `json:"checks"`
	}
	call(t, cs, "verify_execution", map[string]any{"execution_id": run.ExecutionID}, &report)
	passed := map[string]bool{}
	for _, c := range report.Checks {
		if !c.OK {
			t.Errorf("check %s failed: %s", c.Name, c.Detail)
		}
		passed[c.Name] = c.OK
	}
	for _, name := range []string{"completed", "result hash", "ledger record", "creator signature", "listing key", "sealed in a block", "receipt"} {
		if !passed[name] {
			t.Errorf("verify_execution of %s did not pass %q: %+v", report.ExecutionID, name, report.Checks)
		}
	}
}
