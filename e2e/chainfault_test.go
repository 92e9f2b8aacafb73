package e2e_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/chain/chaintest"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/market"
)

// A withdrawal whose transfer landed while the node answering for it hides
// its status, and answers the same bytes sent again in each form nodes
// use, is neither refunded nor signed again, however long it waits: a
// "not found" and a refusal prove nothing. Once the status shows, it is
// confirmed, and the chain paid it once (the reserves, checked after the
// test, would be short by a refund or a second transfer).
func TestWithdrawalUnderHiddenStatus(t *testing.T) {
	e := startChain(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		form chaintest.Already
	}{
		{"already processed, in the message alone", chaintest.AlreadyMessage},
		{"already processed, as structured data", chaintest.AlreadyStructured},
		{"accepted again", chaintest.AlreadyAccepted},
		{"the provider unavailable", chaintest.AlreadyUnavailable},
	} {
		w := newWallet(t)
		e.fund(w, usdc("3"))
		c := e.signIn(w)
		before := len(e.proxy.Sent())
		hide := func(sig string) bool { return slices.Contains(e.proxy.Sent()[before:], sig) }
		e.proxy.Set("getSignatureStatuses", chaintest.HideStatuses(hide))
		e.proxy.Set("sendTransaction", chaintest.SendsAfterFirst(tc.form))
		wd, err := c.NewWithdrawal(ctx, crtx.Devnet, usdc("2"))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		// The transfer lands, and crtxd, told nothing of it, keeps sending
		// it well past the life of a blockhash (150 blocks).
		var sig string
		waitUntil(t, func() bool {
			got, err := c.GetWithdrawal(ctx, wd.WithdrawalID)
			if err == nil && got.Signature != nil {
				sig = *got.Signature
			}
			return sig != ""
		})
		e.net.AwaitFinalized(t, sig)
		sends := e.proxy.Calls("sendTransaction")
		for end := e.net.BlockHeight(t) + 300; e.net.BlockHeight(t) < end || e.proxy.Calls("sendTransaction") < sends+3; {
			time.Sleep(100 * time.Millisecond)
		}
		got, err := c.GetWithdrawal(ctx, wd.WithdrawalID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Final() || got.Signature == nil || *got.Signature != sig {
			t.Fatalf("%s: with its status hidden, the withdrawal became %+v", tc.name, got)
		}
		if held := e.net.TokenBalance(t, wd.Destination); held != usdc("2") {
			t.Fatalf("%s: the wallet's token account holds %s, want 2", tc.name, held)
		}
		e.proxy.Set("getSignatureStatuses", nil)
		e.proxy.Set("sendTransaction", nil)
		if got := e.confirmed(c, wd.WithdrawalID); *got.Signature != sig {
			t.Errorf("%s: confirmed by %s, sent %s", tc.name, *got.Signature, sig)
		}
		if held := e.net.TokenBalance(t, wd.Destination); held != usdc("2") {
			t.Fatalf("%s: the wallet's token account holds %s once confirmed, want 2", tc.name, held)
		}
		wallet, err := c.Wallet(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if b := wallet.Balances[crtx.Devnet]; b.Available != usdc("1") {
			t.Errorf("%s: the wallet holds %s on the ledger, want 1", tc.name, b.Available)
		}
	}
}

// waitUntil polls ok for at most a minute.
func waitUntil(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A wallet that opens every deposit request it may and names all their
// references in a flood of cheap transactions costs the watcher one fetch
// of each transaction, not one per reference per turn; its requests cannot
// hold up another wallet's credit; and it may not open more.
func TestDepositWatcherUnderFlood(t *testing.T) {
	e := startChain(t)
	ctx := context.Background()
	attacker := e.payer(0)
	ca := e.signIn(attacker)
	var refs []solana.PublicKey
	for range market.MaxOpenDeposits {
		d, err := ca.NewDeposit(ctx, crtx.Devnet, usdc("1"))
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, solana.MustPublicKeyFromBase58(d.Reference))
	}
	_, err := ca.NewDeposit(ctx, crtx.Devnet, usdc("1"))
	wantCode(t, err, 429, crtx.CodeRateLimited)

	// Zero-lamport transfers to itself, each naming every reference.
	from := solana.MustPublicKeyFromBase58(attacker.address)
	const flood = 30
	var wg sync.WaitGroup
	for i := range flood {
		wg.Go(func() {
			metas := solana.AccountMetaSlice{solana.Meta(from).WRITE().SIGNER(), solana.Meta(from).WRITE()}
			for _, r := range refs {
				metas = append(metas, solana.Meta(r))
			}
			data := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint32(nil, 2), uint64(i))
			e.net.Send(t, []solana.Instruction{solana.NewInstruction(solana.SystemProgramID, metas, data)}, attacker.key)
		})
	}
	wg.Wait()
	gets := e.proxy.Calls("getTransaction")

	// A victim's deposit is credited beside the flood.
	victim := e.payer(usdc("2"))
	cv := e.signIn(victim)
	d, err := cv.NewDeposit(ctx, crtx.Devnet, usdc("2"))
	if err != nil {
		t.Fatal(err)
	}
	e.pay(victim, d, usdc("2"))
	e.credited(cv, d.DepositID, usdc("2"))
	// Many turns later (a turn is 50 ms), the flood was fetched once.
	turns := e.proxy.Calls("getSignaturesForAddress")
	for e.proxy.Calls("getSignaturesForAddress") < turns+10*(market.MaxOpenDeposits+1) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := e.proxy.Calls("getTransaction") - gets; n > flood+5 {
		t.Errorf("the watcher fetched %d transactions for a flood of %d and one payment", n, flood)
	}
	t.Logf("getTransaction: %d before the victim's deposit (the flood: %d transactions naming %d references), %d in all",
		gets, flood, len(refs), e.proxy.Calls("getTransaction"))
	// The operator sees the calls by method.
	_, body := e.scrape(e.d.URL + "/metrics")
	for _, method := range []string{"getTransaction", "getSignaturesForAddress", "getSignatureStatuses"} {
		if !strings.Contains(body, `crtx_chain_rpc_calls_total{environment="devnet",method="`+method+`"}`) {
			t.Errorf("/metrics counts no %s calls", method)
		}
	}
}

// A wallet holds at most MaxOpenDeposits requests awaiting payment and
// opens at most DepositsPerHour an hour: each is a reference the watcher
// reads for 30 days. Paid, a request is no longer open; an hour later the
// wallet may open more.
func TestDepositRequestLimits(t *testing.T) {
	e := startChain(t)
	ctx := context.Background()
	// Time moves on as the watcher turns: it reads the requests it read
	// least recently first, which a clock that stands still would tie.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				e.clock.Advance(20 * time.Millisecond)
			}
		}
	}()
	payer := e.payer(usdc("1"))
	c := e.signIn(payer)
	from := solana.MustPublicKeyFromBase58(payer.address)
	mint := solana.MustPublicKeyFromBase58(e.mint)
	source, _, _ := solana.FindAssociatedTokenAddress(from, mint)
	treasuryAccount, _, _ := solana.FindAssociatedTokenAddress(solana.MustPublicKeyFromBase58(e.treasury), mint)
	// open asks for n requests of one unit each, and pays them all in one
	// transaction, a transfer naming each one's reference.
	open := func(n int) {
		t.Helper()
		var ds []api.Deposit
		var pay []solana.Instruction
		for range n {
			d, err := c.NewDeposit(ctx, crtx.Devnet, 1)
			if err != nil {
				t.Fatal(err)
			}
			ds = append(ds, d)
			pay = append(pay, solana.NewInstruction(solana.TokenProgramID, solana.AccountMetaSlice{
				solana.Meta(source).WRITE(), solana.Meta(mint), solana.Meta(treasuryAccount).WRITE(), solana.Meta(from).SIGNER(),
				solana.Meta(solana.MustPublicKeyFromBase58(d.Reference))}, append(binary.LittleEndian.AppendUint64([]byte{12}, 1), 6)))
		}
		if n == market.MaxOpenDeposits {
			_, err := c.NewDeposit(ctx, crtx.Devnet, 1)
			wantCode(t, err, 429, crtx.CodeRateLimited)
		}
		e.net.Send(t, pay, payer.key)
		for _, d := range ds {
			e.credited(c, d.DepositID, 1)
		}
	}
	open(market.MaxOpenDeposits)
	open(market.DepositsPerHour - market.MaxOpenDeposits)
	_, err := c.NewDeposit(ctx, crtx.Devnet, 1)
	wantCode(t, err, 429, crtx.CodeRateLimited)
	e.clock.Advance(time.Hour)
	if _, err := c.NewDeposit(ctx, crtx.Devnet, 1); err != nil {
		t.Fatalf("an hour later: %v", err)
	}
}

// Money that reaches the treasury's token account is credited or listed
// for the operator, whatever instruction moved it: a plain SPL Transfer
// naming a deposit's reference is credited by what it added; one naming
// none is listed. One transaction paying two wallets' deposits, each
// transfer naming its own reference, credits each its part; one whose
// references are not in its transfers (so nothing says which pays which)
// credits neither, and is listed.
func TestDepositsPaidInAnyForm(t *testing.T) {
	e := startChain(t)
	ctx := context.Background()
	payer := e.payer(usdc("20"))
	from := solana.MustPublicKeyFromBase58(payer.address)
	source, _, _ := solana.FindAssociatedTokenAddress(from, solana.MustPublicKeyFromBase58(e.mint))
	treasuryAccount, _, _ := solana.FindAssociatedTokenAddress(solana.MustPublicKeyFromBase58(e.treasury), solana.MustPublicKeyFromBase58(e.mint))
	// transfer is an SPL Transfer (plain, or checked) of amount into the
	// treasury, with refs among its own accounts.
	transfer := func(amount crtx.USDC, checked bool, refs ...string) solana.Instruction {
		metas := solana.AccountMetaSlice{solana.Meta(source).WRITE()}
		data := []byte{3}
		if checked {
			metas = append(metas, solana.Meta(solana.MustPublicKeyFromBase58(e.mint)))
			data = []byte{12}
		}
		metas = append(metas, solana.Meta(treasuryAccount).WRITE(), solana.Meta(from).SIGNER())
		data = binary.LittleEndian.AppendUint64(data, uint64(amount))
		if checked {
			data = append(data, 6)
		}
		for _, r := range refs {
			metas = append(metas, solana.Meta(solana.MustPublicKeyFromBase58(r)))
		}
		return solana.NewInstruction(solana.TokenProgramID, metas, data)
	}
	// naming names keys in a transaction outside its transfers.
	naming := func(refs ...string) solana.Instruction {
		metas := solana.AccountMetaSlice{solana.Meta(from).WRITE().SIGNER(), solana.Meta(from).WRITE()}
		for _, r := range refs {
			metas = append(metas, solana.Meta(solana.MustPublicKeyFromBase58(r)))
		}
		return solana.NewInstruction(solana.SystemProgramID, metas, binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint32(nil, 2), 0))
	}
	deposit := func() (*client.Client, api.Deposit) {
		w := newWallet(t)
		c := e.signIn(w)
		d, err := c.NewDeposit(ctx, crtx.Devnet, usdc("5"))
		if err != nil {
			t.Fatal(err)
		}
		return c, d
	}
	cPlain, plain := deposit()
	cA, a := deposit()
	cB, b := deposit()
	cC, c := deposit()
	cD, d := deposit()
	plainSig := e.net.Send(t, []solana.Instruction{transfer(usdc("2"), false, plain.Reference)}, payer.key)
	stray := e.net.Send(t, []solana.Instruction{transfer(usdc("3"), false)}, payer.key)
	both := e.net.Send(t, []solana.Instruction{transfer(usdc("1"), true, a.Reference), transfer(usdc("4"), true, b.Reference)}, payer.key)
	unclear := e.net.Send(t, []solana.Instruction{naming(c.Reference, d.Reference), transfer(usdc("1.5"), true), transfer(usdc("0.5"), false)}, payer.key)

	e.credited(cPlain, plain.DepositID, usdc("2"))
	e.credited(cA, a.DepositID, usdc("1"))
	e.credited(cB, b.DepositID, usdc("4"))
	// The watcher has read c's and d's references once the ones made
	// after them are credited; give it some turns more.
	for turns := e.proxy.Calls("getSignaturesForAddress") + 20; e.proxy.Calls("getSignaturesForAddress") < turns; {
		time.Sleep(50 * time.Millisecond)
	}
	for _, x := range []struct {
		c *client.Client
		d api.Deposit
	}{{cC, c}, {cD, d}} {
		if got, err := x.c.GetDeposit(ctx, x.d.DepositID); err != nil || got.Credited != 0 {
			t.Errorf("deposit %s named beside another outside the transfers: %+v, %v; want nothing credited", x.d.DepositID, got, err)
		}
	}
	got, err := cA.GetDeposit(ctx, a.DepositID)
	if err != nil || len(got.Payments) != 1 || got.Payments[0].Signature != both || got.Payments[0].Part != 1 {
		t.Errorf("a's payments: %+v, %v", got.Payments, err)
	}
	u, err := e.admin.Unattributed(ctx, crtx.Devnet, 100)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]crtx.USDC{}
	for _, tr := range u.Transfers {
		listed[tr.Signature] += tr.Amount
	}
	if len(listed) != 2 || listed[stray] != usdc("3") || listed[unclear] != usdc("2") {
		t.Errorf("unattributed: %+v; want %s (3) and %s (2); credited: %s, %s", u.Transfers, stray, unclear, plainSig, both)
	}
}

// A wallet that closes its USDC token account after asking to withdraw
// cannot have the treasury pay failed transfers' fees for free: closed
// before its transfer is signed, nothing is sent and it is refunded in
// full; closed while its transfer is on its way, the transfer fails on the
// chain and the refund keeps FailedTransferFee.
func TestWithdrawalToAClosedAccount(t *testing.T) {
	var ce *chainEnv
	e := start(t, func(c *daemon.Config) {
		ce = startChainConfig(t, c)
		c.NonceAccounts = 1 // one withdrawal in flight at a time
	})
	ce.env = e
	t.Cleanup(ce.checkReserves)
	ctx := context.Background()
	mint := solana.MustPublicKeyFromBase58(ce.mint)
	first, second := newWallet(t), newWallet(t)
	ce.fund(first, usdc("5"))
	ce.fund(second, usdc("5"))
	// closeAccount closes w's token account, empty since its deposit.
	closeAccount := func(w wallet) {
		owner := solana.MustPublicKeyFromBase58(w.address)
		account, _, _ := solana.FindAssociatedTokenAddress(owner, mint)
		ce.net.Send(t, []solana.Instruction{solana.NewInstruction(solana.TokenProgramID,
			solana.AccountMetaSlice{solana.Meta(account).WRITE(), solana.Meta(owner).WRITE(), solana.Meta(owner).SIGNER()}, []byte{9})}, w.key)
	}
	// The first transfer waits at the proxy until the test lets it go.
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	ce.proxy.Set("sendTransaction", func(c chaintest.Call, forward func() []byte) ([]byte, int) {
		memo, token := solana.MemoProgramID.Bytes(), solana.TokenProgramID.Bytes()
		if raw := chaintest.Transaction(c); bytes.Contains(raw, memo) && bytes.Contains(raw, token) {
			once.Do(func() {
				close(held)
				<-release
			})
		}
		return forward(), 0
	})
	c1, c2 := ce.signIn(first), ce.signIn(second)
	w1, err := c1.NewWithdrawal(ctx, crtx.Devnet, usdc("2"))
	if err != nil {
		t.Fatal(err)
	}
	<-held
	// The second waits for the one nonce account, signed on nothing yet.
	w2, err := c2.NewWithdrawal(ctx, crtx.Devnet, usdc("3"))
	if err != nil {
		t.Fatal(err)
	}
	closeAccount(first)
	closeAccount(second)
	close(release)
	final := func(c *client.Client, id string) api.Withdrawal {
		var got api.Withdrawal
		waitUntil(t, func() bool {
			got, err = c.GetWithdrawal(ctx, id)
			return err == nil && got.Status.Final()
		})
		return got
	}
	if got := final(c1, w1.WithdrawalID); got.Status != crtx.WithdrawalFailed || got.Signature == nil {
		t.Errorf("the withdrawal whose account closed on the way: %+v", got)
	}
	if got := final(c2, w2.WithdrawalID); got.Status != crtx.WithdrawalFailed || got.Signature != nil {
		t.Errorf("the withdrawal whose account closed before it was signed: %+v; want failed, nothing sent", got)
	}
	for _, x := range []struct {
		c    *client.Client
		want crtx.USDC
	}{{c1, usdc("5") - market.FailedTransferFee}, {c2, usdc("5")}} {
		if b, err := x.c.Wallet(ctx); err != nil || b.Balances[crtx.Devnet].Available != x.want {
			t.Errorf("balance %+v, %v; want %s", b, err, x.want)
		}
	}
}

// A payment sent and not finalized yet is not asked for again: a wallet
// that requests the deposit's transaction in that window (a reload, a
// phone scanning the code after paying from the browser) is asked for
// what is left, or told the payment is on its way.
func TestPaymentOnItsWayIsNotAskedAgain(t *testing.T) {
	e := startChain(t)
	ctx := context.Background()
	w := e.payer(usdc("10"))
	c := e.signIn(w)
	d, err := c.NewDeposit(ctx, crtx.Devnet, usdc("5"))
	if err != nil {
		t.Fatal(err)
	}
	// crtxd sees no transaction finalized while the statuses are hidden.
	e.proxy.Set("getSignatureStatuses", chaintest.HideStatuses(func(string) bool { return true }))
	ask := func() (int, string) {
		t.Helper()
		res, err := e.http.Post(e.d.URL+"/v1/solana-pay/deposits/"+d.DepositID, "application/json",
			strings.NewReader(`{"account":"`+w.address+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out struct {
			Message string `json:"message"`
			Error   struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		json.NewDecoder(res.Body).Decode(&out)
		return res.StatusCode, out.Message + out.Error.Code
	}
	if status, msg := ask(); status != 200 || !strings.Contains(msg, "Add 5 USDC") {
		t.Fatalf("before any payment: %d %q", status, msg)
	}
	e.pay(w, d, usdc("2"))
	if status, msg := ask(); status != 200 || !strings.Contains(msg, "Add 3 USDC") {
		t.Errorf("with 2 on its way: %d %q; want the 3 left asked", status, msg)
	}
	e.pay(w, d, usdc("3"))
	if status, msg := ask(); status != 409 || !strings.Contains(msg, crtx.CodeDepositClosed) {
		t.Errorf("with all of it on its way: %d %q; want 409 deposit_closed", status, msg)
	}
	if got, err := c.GetDeposit(ctx, d.DepositID); err != nil || got.Credited != 0 {
		t.Fatalf("credited while the statuses were hidden: %+v, %v", got, err)
	}
	e.proxy.Set("getSignatureStatuses", nil)
	e.credited(c, d.DepositID, usdc("5"))
}
