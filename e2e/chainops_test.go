package e2e_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain"
	"github.com/crtx-market/crtx/daemon"
)

// USDC that reaches the treasury without a deposit's reference is listed
// for the operator, never credited to anyone; a deposit's payment is not.
func TestUnattributedTransfers(t *testing.T) {
	e := startChain(t)
	ctx := context.Background()
	w := e.payer(usdc("5"))
	c := e.signIn(w)
	d, err := c.NewDeposit(ctx, crtx.Devnet, usdc("2"))
	if err != nil {
		t.Fatal(err)
	}
	paid := e.pay(w, d, usdc("2"))
	e.credited(c, d.DepositID, usdc("2"))
	stray, err := chain.Pay(ctx, e.net.RPC, w.key, crtx.TransferRequest{Recipient: d.Recipient, Amount: usdc("1.5"), SPLToken: d.Mint})
	if err != nil {
		t.Fatal(err)
	}
	u, err := e.admin.Unattributed(ctx, crtx.Devnet, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Transfers) != 1 || u.Transfers[0].Signature != stray || u.Transfers[0].Amount != usdc("1.5") || u.Transfers[0].From != w.address {
		t.Fatalf("unattributed: %+v (the deposit's payment was %s)", u.Transfers, paid)
	}
	if b, err := c.Wallet(ctx); err != nil || b.Balances[crtx.Devnet].Available != usdc("2") {
		t.Fatalf("balance %+v, %v: the stray transfer credited", b, err)
	}
	_, err = e.anon.Unattributed(ctx, crtx.Devnet, 100)
	wantCode(t, err, 401, crtx.CodeAuthenticationRequired)
	_, err = e.admin.Unattributed(ctx, crtx.Mainnet, 100)
	wantCode(t, err, 409, crtx.CodeChainNotConfigured)
}

// A request expires after a day, and a payment made later is still
// credited to it: the watcher reads old references on its slower pass.
func TestLatePaymentToAnExpiredDeposit(t *testing.T) {
	e := startChain(t)
	ctx := context.Background()
	w := e.payer(usdc("3"))
	c := e.signIn(w)
	d, err := c.NewDeposit(ctx, crtx.Devnet, usdc("3"))
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(crtx.DepositTTL + time.Hour)
	c = e.signIn(w) // the first session has expired with the day
	if got, err := c.GetDeposit(ctx, d.DepositID); err != nil || got.Status != crtx.DepositExpired {
		t.Fatalf("a day later: %+v, %v", got, err)
	}
	e.pay(w, d, usdc("3"))
	// The slower pass, which reads a month back, credits it.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, err := e.d.Market.Funds.WatchDeposits(ctx, crtx.Devnet, e.clock.Now().Add(-30*24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		got, err := c.GetDeposit(ctx, d.DepositID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Credited == usdc("3") && got.Status == crtx.DepositCredited {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the late payment was not credited: %+v", got)
		}
	}
}

// /readyz warns when the treasury's SOL for fees runs low, and still
// serves.
func TestReadyzWarnsOfLowFees(t *testing.T) {
	e := startChain(t)
	ctx := context.Background()
	// Drain the treasury's SOL below the warning by paying it out.
	lamports, err := e.d.Market.Chain(crtx.Devnet).FeeBalance(ctx)
	if err != nil || lamports < 1_000_000_000 {
		t.Fatalf("the treasury holds %d lamports, %v", lamports, err)
	}
	e.net.Drain(t, e.treasuryKey, 10_000_000)
	resp, err := e.http.Get(e.d.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ready map[string]any
	json.NewDecoder(resp.Body).Decode(&ready)
	if resp.StatusCode != 200 || ready["status"] != "degraded" || ready["devnet_warning"] == nil {
		t.Fatalf("/readyz with the treasury low on SOL: %d %v", resp.StatusCode, ready)
	}
}

// /readyz answers 503 when a configured chain does not answer.
func TestReadyzWhenTheChainIsGone(t *testing.T) {
	var ce *chainEnv
	e := start(t, func(c *daemon.Config) { ce = startChainConfig(t, c) })
	ready := func() int {
		resp, err := e.http.Get(e.d.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := ready(); got != 200 {
		t.Fatalf("/readyz with the chain up: %d", got)
	}
	ce.net.Stop()
	if got := ready(); got != 503 {
		t.Fatalf("/readyz with the chain gone: %d", got)
	}
	// The public reads that reach the chain say so, and never show the RPC
	// URL, where a provider keeps its key: the log has it.
	_, err := e.anon.Reserves(ctx)
	ce2 := wantCode(t, err, 503, "unavailable")
	rpcURL := ce.proxy.URL // what crtxd was given
	if strings.Contains(ce2.Message, rpcURL) || ce2.RetryAfter == "" || !strings.Contains(e.logs.String(), rpcURL) {
		t.Errorf("reserves with the chain gone: %+v; the log has the RPC URL: %v", ce2, strings.Contains(e.logs.String(), rpcURL))
	}
}
