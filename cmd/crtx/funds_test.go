package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"path/filepath"
	"strings"
	"testing"
	"time"

	crtxpkg "github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain/chaintest"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/keyfile"
	"github.com/crtx-market/crtx/market"
)

// crtx deposit --pay pays the Solana Pay request from the wallet's own key
// file and waits until it is credited; crtx withdraw pays it back out to the
// wallet's token account; both appear in their lists.
func TestDepositPayAndWithdraw(t *testing.T) {
	ctx := context.Background()
	d, net, mint, mintAuth := startChainMarket(t)
	_, wallet, kp := chainWallet(t, net, mint, mintAuth)
	crtx := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(ctx, append([]string{"--url", d.URL, "--keypair", kp}, args...), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	code, out, errOut := crtx("deposit", "5", "--environment", "devnet", "--pay", "--rpc", net.RPC)
	if code != 0 || !strings.Contains(out, "solana:"+d.Market.Chain(crtxpkg.Devnet).Treasury()+"?amount=5&spl-token="+mint) ||
		!strings.Contains(out, "credited 5 USDC to devnet") {
		t.Fatalf("deposit --pay: %d\n%s\n%s", code, out, errOut)
	}
	if held := net.TokenBalance(t, tokenAccount(t, d, wallet)); held != 3*crtxpkg.MicroPerUSDC {
		t.Fatalf("the wallet's token account holds %s after paying 5 of 8", held)
	}
	// Without --pay it shows the request as a QR code a phone scans.
	code, out, _ = crtx("deposit", "1", "--environment", "devnet", "--wait", "0")
	if code != 0 || !strings.Contains(out, "█") || !strings.Contains(out, "awaiting payment") {
		t.Fatalf("deposit: %d\n%s", code, out)
	}
	code, out, errOut = crtx("withdraw", "2", "--environment", "devnet")
	if code != 0 || !strings.Contains(out, "confirmed: https://explorer.solana.com/tx/") {
		t.Fatalf("withdraw: %d\n%s\n%s", code, out, errOut)
	}
	if held := net.TokenBalance(t, tokenAccount(t, d, wallet)); held != 5*crtxpkg.MicroPerUSDC {
		t.Fatalf("the wallet's token account holds %s after withdrawing 2", held)
	}
	if code, out, _ = crtx("deposits", "list", "--environment", "devnet"); code != 0 || strings.Count(out, "dep_") != 2 ||
		!strings.Contains(out, "credited") || !strings.Contains(out, "awaiting_payment") {
		t.Errorf("deposits list: %d\n%s", code, out)
	}
	if code, out, _ = crtx("withdrawals", "list", "--environment", "devnet"); code != 0 || !strings.Contains(out, "confirmed") {
		t.Errorf("withdrawals list: %d\n%s", code, out)
	}
	// No more leaves than the balance holds.
	if code, _, errOut = crtx("withdraw", "100", "--environment", "devnet"); code == 0 || !strings.Contains(errOut, "insufficient_balance") {
		t.Errorf("withdraw beyond the balance: %d %s", code, errOut)
	}
}

// chainWallet is a wallet with a key file, 1 SOL for fees and 8 of the
// test's USDC on the chain: its key, address and key file.
func chainWallet(t *testing.T, net *chaintest.Net, mint string, mintAuth ed25519.PrivateKey) (ed25519.PrivateKey, string, string) {
	t.Helper()
	pub, key, _ := ed25519.GenerateKey(nil)
	wallet := crtxpkg.Address(pub)
	kp := filepath.Join(t.TempDir(), "id.json")
	if err := keyfile.Write(kp, key); err != nil {
		t.Fatal(err)
	}
	net.Airdrop(t, wallet, 1_000_000_000)
	net.MintTo(t, mint, mintAuth, wallet, 8*crtxpkg.MicroPerUSDC)
	return key, wallet, kp
}

// startChainMarket runs a marketplace whose devnet settles on a local
// Solana network, with a mint of its own standing for USDC.
func startChainMarket(t *testing.T) (d *daemon.Daemon, net *chaintest.Net, mint string, mintAuth ed25519.PrivateKey) {
	t.Helper()
	net = chaintest.Start(t)
	mint, mintAuth = net.NewMint(t)
	treasury := chaintest.NewKey(t)
	net.Airdrop(t, chaintest.Address(treasury), 10_000_000_000)
	dir := t.TempDir()
	tfile := filepath.Join(dir, "treasury.json")
	if err := keyfile.Write(tfile, treasury); err != nil {
		t.Fatal(err)
	}
	cfg := daemon.Defaults()
	cfg.RateLimitIP = 0
	cfg.Addr, cfg.Data, cfg.AllowPrivateEndpoints, cfg.LogOutput = "127.0.0.1:0", filepath.Join(dir, "data"), true, &bytes.Buffer{}
	cfg.BlockInterval = 50 * time.Millisecond
	cfg.SolanaRPCDevnet, cfg.USDCMintDevnet, cfg.TreasuryKeypair = net.RPC, mint, tfile
	cfg.ChainPoll, cfg.AnchorInterval = 50*time.Millisecond, 200*time.Millisecond
	d, err := daemon.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	t.Cleanup(func() { checkMoney(t, d, net) })
	return d, net, mint, mintAuth
}

// checkMoney asserts what must hold after money moved: every ledger sums
// to zero and verifies, and the reserves report the treasury's balance read
// from the chain, covering what the ledger owes.
func checkMoney(t *testing.T, d *daemon.Daemon, net *chaintest.Net) {
	t.Helper()
	ctx := context.Background()
	for _, env := range crtxpkg.Environments {
		r, err := market.VerifyLedger(ctx, d.Store, env, d.Market.AuthorityPublicKey())
		if err != nil || r.Sum != 0 || !r.OK() {
			t.Errorf("%s ledger: %+v, %v", env, r, err)
		}
	}
	rs, err := client.New(d.URL, "").Reserves(ctx)
	if err != nil || len(rs.Reserves) != 1 {
		t.Fatalf("reserves: %+v, %v", rs, err)
	}
	r := rs.Reserves[0]
	if held := net.TokenBalance(t, r.TokenAccount); r.OnChain != held || r.Surplus < 0 || r.Surplus != r.OnChain-r.Liabilities {
		t.Errorf("reserves %+v; the treasury's token account holds %s", r, held)
	}
}

func tokenAccount(t *testing.T, d *daemon.Daemon, wallet string) string {
	t.Helper()
	a, err := d.Market.Chain(crtxpkg.Devnet).TokenAccountOf(wallet)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The money commands act in the API key's environment unless --environment
// says otherwise, as every other command's figures do; deposits and
// withdrawals alone list; a deposit refused for an environment without a
// chain names the flag to add; a deposit stopped while waiting says how to
// pay it later.
func TestMoneyFollowsTheKeysEnvironment(t *testing.T) {
	d, net, mint, mintAuth := startChainMarket(t)
	key, _, kp := chainWallet(t, net, mint, mintAuth)
	dir := filepath.Dir(kp)
	s, _, err := client.New(d.URL, "").SignIn(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	k, err := s.CreateKey(context.Background(), client.KeyParams{Name: "devnet", Environment: crtxpkg.Devnet})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("CRTX_CONFIG", filepath.Join(dir, "none.json"))
	crtx := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(context.Background(), append([]string{"--url", d.URL, "--keypair", kp, "--api-key", k.Key}, args...), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}

	if code, out, errOut := crtx("deposit", "5", "--pay", "--rpc", net.RPC); code != 0 || !strings.Contains(out, "credited 5 USDC to devnet") {
		t.Fatalf("deposit with a devnet key: %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := crtx("deposits"); code != 0 || strings.Count(out, "dep_") != 1 || !strings.Contains(out, "credited") {
		t.Errorf("deposits alone: %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := crtx("withdraw", "2"); code != 0 || !strings.Contains(out, "confirmed: ") {
		t.Fatalf("withdraw with a devnet key: %d\n%s\n%s", code, out, errOut)
	}
	if code, out, _ := crtx("withdrawals"); code != 0 || !strings.Contains(out, "confirmed") {
		t.Errorf("withdrawals alone: %d\n%s", code, out)
	}
	if code, _, errOut := crtx("deposits", "lst"); code != 2 || !strings.Contains(errOut, "Did you mean this?\n\tlist") {
		t.Errorf("deposits lst: %d %s", code, errOut)
	}
	if code, _, errOut := crtx("deposit", "1", "--environment", "mainnet"); code != 1 || !strings.Contains(errOut, "chain_not_configured") ||
		!strings.Contains(errOut, "add --environment devnet") {
		t.Errorf("a deposit on mainnet, which has no chain: %d %s", code, errOut)
	}

	// Interrupted (as Ctrl-C does) once it waits for the payment: how to
	// pay it later.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &cancelOn{text: "waiting for the payment", cancel: cancel}
	var errOut bytes.Buffer
	code := run(ctx, []string{"--url", d.URL, "--keypair", kp, "--api-key", k.Key, "deposit", "1"}, strings.NewReader(""), out, &errOut)
	if code != 130 || !strings.Contains(errOut.String(), "stopped waiting") || !strings.Contains(errOut.String(), "pay it from any wallet with its URL,\n  solana:") {
		t.Errorf("an interrupted deposit: %d\n%s\n%s", code, out.String(), errOut.String())
	}
}

// cancelOn is a writer that calls cancel once what was written holds text.
type cancelOn struct {
	bytes.Buffer
	text   string
	cancel func()
}

func (w *cancelOn) Write(p []byte) (int, error) {
	n, err := w.Buffer.Write(p)
	if strings.Contains(w.String(), w.text) {
		w.cancel()
	}
	return n, err
}
