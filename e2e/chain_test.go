package e2e_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/chain"
	"github.com/crtx-market/crtx/chain/chaintest"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/keyfile"
)

// chainEnv is crtxd with devnet on a local Solana network, in a USDC mint
// of the test's own.
type chainEnv struct {
	*env
	net *chaintest.Net
	// proxy stands between crtxd and the network, for tests that distort
	// the RPC's answers.
	proxy    *chaintest.Proxy
	mint     string
	mintAuth ed25519.PrivateKey
	treasury string
	// treasuryKey is the treasury wallet's key, for tests that act as its
	// operator on the chain.
	treasuryKey ed25519.PrivateKey
}

func startChain(t *testing.T) *chainEnv {
	t.Helper()
	var ce *chainEnv
	e := start(t, func(c *daemon.Config) { ce = startChainConfig(t, c) })
	ce.env = e
	// Registered after start's, so it runs first, with crtxd still up.
	t.Cleanup(ce.checkReserves)
	return ce
}

// startChainConfig starts a local Solana network with a USDC mint and a
// treasury of the test's own, and puts devnet on it in c.
func startChainConfig(t *testing.T, c *daemon.Config, opts ...chaintest.Option) *chainEnv {
	t.Helper()
	net := chaintest.Start(t, opts...)
	mint, auth := net.NewMint(t)
	pub, treasury, _ := ed25519.GenerateKey(nil)
	net.Airdrop(t, crtx.Address(pub), 10_000_000_000)
	file := filepath.Join(t.TempDir(), "treasury.json")
	if err := keyfile.Write(file, treasury); err != nil {
		t.Fatal(err)
	}
	proxy := chaintest.NewProxy(t, net.RPC)
	c.SolanaRPCDevnet, c.USDCMintDevnet, c.TreasuryKeypair = proxy.URL, mint, file
	c.ChainPoll, c.AnchorInterval = 50*time.Millisecond, 200*time.Millisecond
	return &chainEnv{net: net, proxy: proxy, mint: mint, mintAuth: auth, treasury: crtx.Address(pub), treasuryKey: treasury}
}

// payer is a wallet that holds SOL for fees and amount of the test's USDC.
func (e *chainEnv) payer(amount crtx.USDC) wallet {
	w := newWallet(e.t)
	e.net.Airdrop(e.t, w.address, 1_000_000_000)
	if amount > 0 {
		e.net.MintTo(e.t, e.mint, e.mintAuth, w.address, amount)
	}
	return w
}

// pay pays a deposit as a Solana Pay wallet would: memo, TransferChecked
// to the treasury's token account, the reference among its keys.
func (e *chainEnv) pay(w wallet, d api.Deposit, amount crtx.USDC) string {
	e.t.Helper()
	sig, err := chain.Pay(context.Background(), e.net.RPC, w.key, crtx.TransferRequest{Recipient: d.Recipient, Amount: amount,
		SPLToken: d.Mint, References: []string{d.Reference}, Memo: d.Memo})
	if err != nil {
		e.t.Fatalf("pay: %v", err)
	}
	return sig
}

// checkReserves asserts that what the reserves report on the chain is the
// treasury's balance read from the chain, and that it covers what the
// ledger owes.
func (e *chainEnv) checkReserves() {
	e.t.Helper()
	rs, err := e.anon.Reserves(context.Background())
	if err != nil {
		e.t.Fatalf("reserves: %v", err)
	}
	if len(rs.Reserves) != 1 || rs.Reserves[0].Environment != crtx.Devnet {
		e.t.Fatalf("reserves: %+v, want devnet's alone", rs.Reserves)
	}
	r := rs.Reserves[0]
	if held := e.net.TokenBalance(e.t, r.TokenAccount); r.OnChain != held {
		e.t.Errorf("reserves on chain %s, the treasury's token account holds %s", r.OnChain, held)
	}
	if r.Surplus < 0 || r.Surplus != r.OnChain-r.Liabilities {
		e.t.Errorf("reserves: %+v", r)
	}
}

// credited waits until the deposit is credited with want in all.
func (e *chainEnv) credited(c *client.Client, id string, want crtx.USDC) api.Deposit {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		d, err := c.GetDeposit(context.Background(), id)
		if err != nil {
			e.t.Fatal(err)
		}
		if d.Credited == want {
			return d
		}
		if d.Credited > want || time.Now().After(deadline) {
			e.t.Fatalf("deposit %s credited %s, want %s", id, d.Credited, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestDepositBySolanaPay(t *testing.T) {
	e := startChain(t)
	ctx := context.Background()
	w := e.payer(usdc("40"))
	c := e.signIn(w)
	d, err := c.NewDeposit(ctx, crtx.Devnet, usdc("25"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != crtx.DepositAwaitingPayment || d.Recipient != e.treasury || d.Mint != e.mint || d.Credited != 0 {
		t.Fatalf("deposit: %+v", d)
	}
	req, err := crtx.ParseTransferRequest(d.SolanaPayURL)
	if err != nil || req.Recipient != e.treasury || req.Amount != usdc("25") || req.SPLToken != e.mint ||
		len(req.References) != 1 || req.References[0] != d.Reference || req.Memo != d.Memo {
		t.Fatalf("solana_pay_url %s: %+v, %v", d.SolanaPayURL, req, err)
	}
	sig := e.pay(w, d, usdc("25"))
	got := e.credited(c, d.DepositID, usdc("25"))
	if got.Status != crtx.DepositCredited || len(got.Payments) != 1 || got.Payments[0].Signature != sig {
		t.Fatalf("credited deposit: %+v", got)
	}
	tx, err := c.Transaction(ctx, crtx.Devnet, got.Payments[0].TransactionID)
	if err != nil {
		t.Fatal(err)
	}
	if tx.Kind != crtx.TxDeposit || tx.Data["signature"] != sig || tx.Data["reference"] != d.Reference || tx.Data["slot"] == "" {
		t.Fatalf("ledger transaction: %+v", tx)
	}
	wb, err := c.Wallet(ctx)
	if err != nil || wb.Balances[crtx.Devnet].Available != usdc("25") {
		t.Fatalf("balance %+v, %v", wb, err)
	}
	// /readyz reads the treasury's SOL for fees: 10 SOL, not low.
	resp, err := e.http.Get(e.d.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	var ready map[string]any
	json.NewDecoder(resp.Body).Decode(&ready)
	resp.Body.Close()
	if resp.StatusCode != 200 || ready["status"] != "ok" || ready["devnet_fee_lamports"] == nil {
		t.Fatalf("/readyz: %d %v", resp.StatusCode, ready)
	}
	// Read again, the same payment credits nothing more.
	if n, err := e.d.Market.Funds.WatchDeposits(ctx, crtx.Devnet, time.Time{}); err != nil || n != 0 {
		t.Fatalf("second read credited %d (%v)", n, err)
	}
	if _, err := c.GetDeposit(ctx, d.DepositID); err != nil {
		t.Fatal(err)
	}
}

// An attacker who reads a reference from the QR code and pays 1 unit with
// it must not hide the real payment: every transfer is credited.
func TestGriefingTransferDoesNotHideThePayment(t *testing.T) {
	e := startChain(t)
	ctx := context.Background()
	w := e.payer(usdc("10"))
	c := e.signIn(w)
	d, err := c.NewDeposit(ctx, crtx.Devnet, usdc("10"))
	if err != nil {
		t.Fatal(err)
	}
	attacker := e.payer(usdc("1"))
	e.pay(attacker, d, 1)
	e.pay(w, d, usdc("10"))
	got := e.credited(c, d.DepositID, usdc("10")+1)
	if got.Status != crtx.DepositCredited || len(got.Payments) != 2 {
		t.Fatalf("deposit: %+v", got)
	}
	// A transfer after the amount was reached is credited too, never kept.
	e.pay(attacker, d, 2)
	if got = e.credited(c, d.DepositID, usdc("10")+3); len(got.Payments) != 3 {
		t.Fatalf("deposit: %+v", got)
	}
}

func TestChainMoneyEntersOnlyFromTheChain(t *testing.T) {
	e := startChain(t)
	ctx := context.Background()
	w := newWallet(t)
	_, err := e.anon.Airdrop(ctx, w.address, usdc("1"))
	wantCode(t, err, 409, crtx.CodeChainConfigured)
	_, err = e.admin.Deposit(ctx, crtx.Devnet, w.address, usdc("1"))
	wantCode(t, err, 409, crtx.CodeChainConfigured)
	c := e.signIn(w)
	_, err = c.NewDeposit(ctx, crtx.Mainnet, usdc("1"))
	wantCode(t, err, 409, crtx.CodeChainNotConfigured)
	_, err = c.NewWithdrawal(ctx, crtx.Mainnet, usdc("1"))
	wantCode(t, err, 409, crtx.CodeChainNotConfigured)
	_, err = c.NewDeposit(ctx, crtx.Devnet, 0)
	wantCode(t, err, 400, crtx.CodeInvalidRequest)
	// The treasury pays no token account's rent: a wallet withdraws to
	// the account it has, and at least 1 USDC (the treasury pays the fee).
	_, err = c.NewWithdrawal(ctx, crtx.Devnet, usdc("1"))
	wantCode(t, err, 400, crtx.CodeInvalidRequest)
	e.net.MintTo(t, e.mint, e.mintAuth, w.address, 0)
	_, err = c.NewWithdrawal(ctx, crtx.Devnet, usdc("1"))
	wantCode(t, err, 402, crtx.CodeInsufficientBalance)
	_, err = c.NewWithdrawal(ctx, crtx.Devnet, usdc("0.5"))
	wantCode(t, err, 400, crtx.CodeInvalidRequest)
	// An API key, which a program holds, deposits in its own environment
	// and never withdraws.
	k, err := c.CreateKey(ctx, client.KeyParams{Name: "bot", Environment: crtx.Devnet})
	if err != nil {
		t.Fatal(err)
	}
	key := e.anon.WithToken(k.Key)
	runLogs.secret(k.Key)
	_, err = key.NewWithdrawal(ctx, crtx.Devnet, usdc("1"))
	wantCode(t, err, 401, crtx.CodeInvalidSession)
	_, err = key.NewDeposit(ctx, crtx.Mainnet, usdc("1"))
	wantCode(t, err, 400, crtx.CodeInvalidRequest)
	if _, err := key.NewDeposit(ctx, crtx.Devnet, usdc("1")); err != nil {
		t.Fatal(err)
	}
}

// Withdrawals above the balance, sent together, pay only what it covers:
// the debit is in each request's own transaction, and the database refuses
// a negative balance.
func TestConcurrentWithdrawals(t *testing.T) {
	e := startChain(t)
	ctx := context.Background()
	w := e.payer(usdc("10"))
	c := e.signIn(w)
	d, err := c.NewDeposit(ctx, crtx.Devnet, usdc("10"))
	if err != nil {
		t.Fatal(err)
	}
	e.pay(w, d, usdc("10"))
	e.credited(c, d.DepositID, usdc("10"))
	var mu sync.Mutex
	var ok []api.Withdrawal
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			wd, err := c.NewWithdrawal(ctx, crtx.Devnet, usdc("3"))
			if err != nil {
				wantCode(t, err, 402, crtx.CodeInsufficientBalance)
				return
			}
			mu.Lock()
			ok = append(ok, wd)
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(ok) != 3 {
		t.Fatalf("%d withdrawals accepted, want 3", len(ok))
	}
	for _, wd := range ok {
		e.confirmed(c, wd.WithdrawalID)
	}
	dest := ok[0].Destination
	if held := e.net.TokenBalance(t, dest); held != usdc("9") {
		t.Fatalf("the wallet's token account holds %s, want 9", held)
	}
}

// confirmed waits until a withdrawal is confirmed.
func (e *chainEnv) confirmed(c *client.Client, id string) api.Withdrawal {
	e.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		wd, err := c.GetWithdrawal(context.Background(), id)
		if err != nil {
			e.t.Fatal(err)
		}
		switch {
		case wd.Status == crtx.WithdrawalConfirmed:
			return wd
		case wd.Status == crtx.WithdrawalFailed || time.Now().After(deadline):
			e.t.Fatalf("withdrawal: %+v", wd)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// fund credits amount to w on devnet by a deposit paid on the chain.
func (e *chainEnv) fund(w wallet, amount crtx.USDC) {
	e.t.Helper()
	e.net.Airdrop(e.t, w.address, 1_000_000_000)
	e.net.MintTo(e.t, e.mint, e.mintAuth, w.address, amount)
	c := e.signIn(w)
	d, err := c.NewDeposit(context.Background(), crtx.Devnet, amount)
	if err != nil {
		e.t.Fatal(err)
	}
	e.pay(w, d, amount)
	e.credited(c, d.DepositID, amount)
}

// An execution is proved all the way to Solana: its record's Merkle path,
// its block, the hash chain to the first anchored block, and the memo of
// that block in a finalized transaction the ledger authority signed.
func TestExecutionProvedToTheAnchor(t *testing.T) {
	var ce *chainEnv
	m := newMarket(t, "0", func(c *daemon.Config) {
		ce = startChainConfig(t, c)
	})
	ce.env = m.env
	t.Cleanup(ce.checkReserves)
	ce.fund(m.callerW, usdc("5"))
	agent := m.list(newService(t, echo), "0.5")
	rec, err := m.key.Execute(ctx, agent, run("anchored"), client.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	verifier := m.key.WithSolanaRPC(ce.net.RPC)
	deadline := time.Now().Add(30 * time.Second)
	for {
		report, err := verifier.Verify(ctx, rec.ExecutionID)
		if err != nil {
			t.Fatal(err)
		}
		if !report.OK() {
			t.Fatalf("verify: %+v", report)
		}
		if report.Anchor == client.Anchored {
			if report.AnchoredBy == nil || report.AnchoredBy.Signature == "" || report.AnchoredBlock < 1 {
				t.Fatalf("anchored report: %+v", report)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not anchored after 30 s: %+v", report)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The verifier written from the docs alone reaches the same memo, read
	// from the local cluster, and fails it under another authority key.
	wk, err := m.anon.WellKnown(ctx)
	if err != nil {
		t.Fatal(err)
	}
	verify := verifyNode(t)
	args := func(authority string) []string {
		return []string{"--base", m.d.URL, "--key", m.key.Token(), "--execution", rec.ExecutionID,
			"--authority", authority, "--marketplace", wk.SigningPublicKey, "--rpc", ce.net.RPC}
	}
	code, out := verify(args(wk.AuthorityPublicKey)...)
	if code != 0 || !strings.HasSuffix(strings.TrimSpace(out), "\nverified") ||
		!regexp.MustCompile(`(?m)^ok   anchor: block \d+ is named by the memo of Solana transaction \w+ \(slot \d+, custom\)`).MatchString(out) {
		t.Errorf("verify.mjs through the anchor: exit %d\n%s", code, out)
	}
	if code, out := verify(args(wk.SigningPublicKey)...); code != 1 || !strings.Contains(out, "NOT verified") {
		t.Errorf("verify.mjs with another authority key: exit %d\n%s", code, out)
	}
}
