package postgres

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	"github.com/crtx-market/crtx"
)

// Batches run openings by environment, wallet account, Idempotency-Key
// and id, and closings completed first by result, then failed by wallet
// account: the order in which each takes the rows it may share.
func TestBatchOrders(t *testing.T) {
	addr := func(w string) string { return crtx.AccountAddress(crtx.AccountWallet, w) }
	wallets := []string{"alice", "bob"}
	slices.SortFunc(wallets, func(x, y string) int { return cmp.Compare(addr(x), addr(y)) })
	first, second := wallets[0], wallets[1]
	open := func(env crtx.Environment, wallet, idem, id string) *crtx.Opening {
		o := &crtx.Opening{Execution: crtx.Execution{ID: id, Environment: env, Wallet: wallet}}
		if idem != "" {
			o.Idempotency = &crtx.Idempotency{Key: idem}
		}
		return o
	}
	openings := []*crtx.Opening{
		open(crtx.Mainnet, first, "", "e1"),
		open(crtx.Devnet, second, "b", "e2"),
		open(crtx.Devnet, second, "a", "e3"),
		open(crtx.Devnet, first, "z", "e4"),
		open(crtx.Devnet, second, "a", "e0"),
	}
	slices.SortFunc(openings, func(x, y *crtx.Opening) int {
		return cmp.Compare(openingOrder(x, addr(x.Execution.Wallet)), openingOrder(y, addr(y.Execution.Wallet)))
	})
	var got []string
	for _, o := range openings {
		got = append(got, o.Execution.ID)
	}
	if fmt.Sprint(got) != "[e4 e0 e3 e2 e1]" {
		t.Errorf("openings ran %v, want [e4 e0 e3 e2 e1]", got)
	}
	closing := func(status crtx.ExecStatus, cid, wallet, id string) *crtx.Closing {
		return &crtx.Closing{Execution: crtx.Execution{ID: id, Environment: crtx.Devnet, Wallet: wallet, Status: status, ResultCID: cid}}
	}
	closings := []*crtx.Closing{
		closing(crtx.ExecFailed, "", first, "f1"),
		closing(crtx.ExecCompleted, "cid-b", first, "c1"),
		closing(crtx.ExecFailed, "", second, "f2"),
		closing(crtx.ExecCompleted, "cid-a", second, "c2"),
		closing(crtx.ExecFailed, "", first, "f0"),
	}
	slices.SortFunc(closings, func(x, y *crtx.Closing) int {
		return cmp.Compare(closingOrder(x, addr(x.Execution.Wallet)), closingOrder(y, addr(y.Execution.Wallet)))
	})
	got = nil
	for _, c := range closings {
		got = append(got, c.Execution.ID)
	}
	if fmt.Sprint(got) != "[c2 c1 f0 f1 f2]" {
		t.Errorf("closings ran %v, want [c2 c1 f0 f1 f2]", got)
	}
}
