package main

import (
	"bytes"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain"
	"github.com/crtx-market/crtx/chain/chaintest"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/keyfile"
)

// crtxd dev started as docs/chain.md's "Against a local validator" says,
// on a local Solana network: the banner says devnet settles on the chain,
// with no airdrop, and how to pay the demo wallet in; a deposit paid on the
// chain is credited and pays a call; the airdrop answers 409
// chain_configured; the reserves report what the treasury's token account
// holds on the chain. Started again without the chain's flags, it still
// runs and tops nothing up on devnet.
func TestDevOnLocalChain(t *testing.T) {
	net := chaintest.Start(t)
	mint, mintAuth := net.NewMint(t)
	treasury := chaintest.NewKey(t)
	net.Airdrop(t, chaintest.Address(treasury), 1_000_000_000)
	dir := t.TempDir()
	tfile, data := filepath.Join(dir, "treasury.json"), filepath.Join(dir, "crtx-dev")
	if err := keyfile.Write(tfile, treasury); err != nil {
		t.Fatal(err)
	}
	banner, stop := startDev(t, data, "--solana-rpc-devnet", net.RPC, "--treasury-keypair", tfile, "--usdc-mint-devnet", mint,
		"--chain-poll", "50ms", "--anchor-interval", "200ms")
	keypair := filepath.Join(data, "demo-wallet.json")
	for _, want := range []string{
		"0 USDC on devnet, paid in on its chain, and 10 on mainnet, topped up on each start",
		"devnet:       settles on the Solana chain at " + net.RPC + ", treasury " + chaintest.Address(treasury) +
			": no airdrop, USDC enters by a deposit paid on the chain",
		"CRTX_KEYPAIR=" + keypair + " go run ./cmd/crtx deposit 10 --environment devnet --pay --rpc " + net.RPC,
	} {
		if !strings.Contains(banner, want) {
			t.Errorf("the banner lacks %q:\n%s", want, banner)
		}
	}
	if strings.Contains(banner, "mainnet:      settles") {
		t.Errorf("the banner puts mainnet on a chain:\n%s", banner)
	}
	url := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+)`).FindStringSubmatch(banner)[1]
	apiKey := regexp.MustCompile(`API key:\s+(\S+)`).FindStringSubmatch(banner)[1]
	agentID := regexp.MustCompile(`agent:\s+(agt_\S+)`).FindStringSubmatch(banner)[1]
	key, err := keyfile.Load(keypair)
	if err != nil {
		t.Fatal(err)
	}
	wallet := chaintest.Address(key)

	// The demo wallet pays 10 USDC in, as crtx deposit --pay does.
	net.Airdrop(t, wallet, 100_000_000)
	net.MintTo(t, mint, mintAuth, wallet, 10*crtx.MicroPerUSDC)
	c := client.New(url, apiKey)
	d, err := c.NewDeposit(ctx, crtx.Devnet, 10*crtx.MicroPerUSDC)
	if err != nil {
		t.Fatal(err)
	}
	if d.Recipient != chaintest.Address(treasury) || d.Mint != mint {
		t.Fatalf("deposit: %+v", d)
	}
	sig, err := chain.Pay(ctx, net.RPC, key, crtx.TransferRequest{Recipient: d.Recipient, Amount: d.Amount,
		SPLToken: d.Mint, References: []string{d.Reference}, Memo: d.Memo})
	if err != nil {
		t.Fatalf("pay: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for d.Status != crtx.DepositCredited {
		if time.Now().After(deadline) {
			t.Fatalf("deposit not credited in 30 s: %+v", d)
		}
		time.Sleep(50 * time.Millisecond)
		if d, err = c.GetDeposit(ctx, d.DepositID); err != nil {
			t.Fatal(err)
		}
	}
	if d.Credited != 10*crtx.MicroPerUSDC || len(d.Payments) != 1 || d.Payments[0].Signature != sig {
		t.Fatalf("credited deposit: %+v", d)
	}
	// The banner's curl now works: the call is paid from the deposit.
	if _, err := c.Execute(ctx, agentID, crtx.ExecuteParams{Task: "The quick brown fox. It barked."}, client.ExecuteOptions{}); err != nil {
		t.Fatalf("a call paid from the deposit: %v", err)
	}
	w, err := c.Wallet(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Balances[crtx.Devnet].Available; got != 10*crtx.MicroPerUSDC-10_000 {
		t.Errorf("after the deposit and a call of 0.01 USDC the demo wallet holds %s USDC on devnet", got)
	}

	var refused *client.Error
	if _, err := client.New(url, "").Airdrop(ctx, wallet, crtx.MicroPerUSDC); !errors.As(err, &refused) ||
		refused.Status != 409 || refused.Code != crtx.CodeChainConfigured {
		t.Errorf("the airdrop on a devnet with a chain: %v, want 409 %s", err, crtx.CodeChainConfigured)
	}

	rs, err := client.New(url, "").Reserves(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.Reserves) != 1 || rs.Reserves[0].Environment != crtx.Devnet {
		t.Fatalf("reserves: %+v, want devnet's alone", rs.Reserves)
	}
	// The ledger owes the wallets less than the treasury holds: the
	// marketplace's fee of the call is the operator's.
	r := rs.Reserves[0]
	if held := net.TokenBalance(t, r.TokenAccount); r.OnChain != held || held != 10*crtx.MicroPerUSDC ||
		r.Treasury != chaintest.Address(treasury) || r.Surplus < 0 || r.Surplus != r.OnChain-r.Liabilities {
		t.Errorf("reserves %+v; the treasury's token account holds %s on the chain", r, held)
	}
	stop()

	// The folder remembers devnet ran on a chain: without its flags, dev
	// still starts, and neither tops devnet up nor offers an airdrop.
	banner, _ = startDev(t, data)
	for _, want := range []string{
		"9.99 USDC on devnet, paid in on its chain, and 10 on mainnet, topped up on each start",
		"devnet:       ran on a Solana chain before: no airdrop, USDC enters only by a deposit, with --solana-rpc-devnet again",
	} {
		if !strings.Contains(banner, want) {
			t.Errorf("the banner without the chain's flags lacks %q:\n%s", want, banner)
		}
	}
	if strings.Contains(banner, "settles on the Solana chain") {
		t.Errorf("the banner without the chain's flags names a chain:\n%s", banner)
	}
	// The airdrop says the same as the banner: the chain is not here now.
	url = regexp.MustCompile(`at (http://127\.0\.0\.1:\d+)`).FindStringSubmatch(banner)[1]
	if _, err := client.New(url, "").Airdrop(ctx, wallet, crtx.MicroPerUSDC); !errors.As(err, &refused) ||
		refused.Code != crtx.CodeChainConfigured || !strings.Contains(refused.Message, "a Solana chain it ran on before, which this marketplace is not connected to now") {
		t.Errorf("the airdrop on a devnet that ran on a chain before: %v", err)
	}
}

// A chain given to a folder whose devnet holds airdropped money is refused,
// saying why and what to do: its treasury never received that money, so
// the reserves would read short forever. The folder still runs without it.
func TestDevRefusesAChainOverAirdroppedMoney(t *testing.T) {
	dir := t.TempDir()
	data, tfile := filepath.Join(dir, "crtx-dev"), filepath.Join(dir, "treasury.json")
	_, stop := startDev(t, data)
	stop()
	if err := keyfile.Write(tfile, chaintest.NewKey(t)); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	code := run(ctx, []string{"dev", "--data", data, "--addr", "127.0.0.1:0", "--solana-rpc-devnet", "http://127.0.0.1:9", "--treasury-keypair", tfile}, &out, &errs)
	for _, want := range []string{"ledger holds 100 USDC that entered without a chain", "give the chain a store of its own (a new --data folder, or another --db)"} {
		if code == 0 || !strings.Contains(errs.String(), want) {
			t.Errorf("exit %d, want a refusal saying %q:\n%s%s", code, want, out.String(), errs.String())
		}
	}
	banner, _ := startDev(t, data)
	if !strings.Contains(banner, "100 USDC on devnet and 10 on mainnet, topped up on each start") {
		t.Errorf("the folder without the chain:\n%s", banner)
	}
}
