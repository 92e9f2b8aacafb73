// Package sdk_test runs the SDKs written in other languages against a real
// marketplace, each with its own test runner.
package sdk_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/market"
)

// marketplace is crtxd on 127.0.0.1 for an SDK's tests: a creator wallet
// holding collateral on mainnet, whose key the tests list agents with,
// and a caller's devnet API key with funds.
type marketplace struct {
	d       *daemon.Daemon
	logs    *bytes.Buffer
	creator ed25519.PrivateKey
	caller  string
	key     string
}

// startMarketplace starts crtxd with collateral USDC on the creator's
// mainnet balance and funds on the caller's devnet one. When the test
// ends, both ledgers must verify and sum to zero.
func startMarketplace(t *testing.T, collateral, funds crtx.USDC) *marketplace {
	t.Helper()
	ctx := context.Background()
	m := &marketplace{logs: &bytes.Buffer{}}
	cfg := daemon.Defaults()
	cfg.RateLimitIP = 0 // the tests sign in from one address
	cfg.Addr, cfg.Data, cfg.AllowPrivateEndpoints, cfg.LogOutput = "127.0.0.1:0", t.TempDir(), true, m.logs
	cfg.BlockInterval = 50 * time.Millisecond // verifiers wait for their transactions' blocks
	d, err := daemon.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m.d = d
	t.Cleanup(func() { d.Close() })
	t.Cleanup(func() { m.checkLedgers(t) })
	_, m.creator, _ = ed25519.GenerateKey(nil)
	if _, err := d.Market.Funds.OperatorDeposit(ctx, crtx.Mainnet, crtx.Address(m.creator.Public().(ed25519.PublicKey)), collateral); err != nil {
		t.Fatal(err)
	}
	_, caller, _ := ed25519.GenerateKey(nil)
	m.caller = crtx.Address(caller.Public().(ed25519.PublicKey))
	if _, err := d.Market.Funds.OperatorDeposit(ctx, crtx.Devnet, m.caller, funds); err != nil {
		t.Fatal(err)
	}
	session, _, err := client.New(d.URL, "").SignIn(ctx, caller)
	if err != nil {
		t.Fatal(err)
	}
	key, err := session.CreateKey(ctx, client.KeyParams{Name: t.Name(), Environment: crtx.Devnet})
	if err != nil {
		t.Fatal(err)
	}
	m.key = key.Key
	return m
}

// checkLedgers asserts that what the SDK's tests did left both ledgers
// verified and summing to zero.
func (m *marketplace) checkLedgers(t *testing.T) {
	t.Helper()
	for _, env := range crtx.Environments {
		r, err := market.VerifyLedger(context.Background(), m.d.Store, env, m.d.Market.AuthorityPublicKey())
		if err != nil || r.Sum != 0 || !r.OK() {
			t.Errorf("%s ledger: %+v, %v", env, r, err)
		}
	}
}
