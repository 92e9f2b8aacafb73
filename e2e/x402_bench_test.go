package e2e_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain"
	"github.com/crtx-market/crtx/chain/chaintest"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/keyfile"
	"github.com/crtx-market/crtx/x402"
)

// BenchmarkX402 measures what paying per call with x402 adds to a
// synchronous call against paying from a wallet with an API key, on a
// local Solana network of 100 ms slots, one call at a time, and where the
// time goes: the checks without RPC, the simulation, the settlement
// (sending until confirmed), in ms per call. The payment's transaction is
// built by the benchmark, as a client would, outside the measured time
// only for its signature; its blockhash read is the client's and is
// measured.
//
//	go test ./e2e/ -run XXX -bench X402 -benchtime 20x
func BenchmarkX402(b *testing.B) {
	ctx := context.Background()
	net := chaintest.Start(b, chaintest.SlotTime(100*time.Millisecond))
	mint, mintAuth := net.NewMint(b)
	treasury := chaintest.NewKey(b)
	net.Airdrop(b, chaintest.Address(treasury), 10_000_000_000)
	dir := b.TempDir()
	tfile := filepath.Join(dir, "treasury.json")
	if err := keyfile.Write(tfile, treasury); err != nil {
		b.Fatal(err)
	}
	cfg := daemon.Defaults()
	cfg.Addr, cfg.Data, cfg.AllowPrivateEndpoints, cfg.LogOutput = "127.0.0.1:0", filepath.Join(dir, "data"), true, &bytes.Buffer{}
	cfg.RateLimitIP, cfg.RateLimitPayments = 0, 0
	cfg.SolanaRPCDevnet, cfg.USDCMintDevnet, cfg.TreasuryKeypair = net.RPC, mint, tfile
	cfg.ChainPoll, cfg.X402SettleAfter = 50*time.Millisecond, 10*time.Second
	d, err := daemon.Start(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })

	// An agent that answers at once, of a creator with collateral.
	ak := agentKey()
	srv := httptest.NewServer(creator.NewHandler(ak, echo, creator.Options{}))
	b.Cleanup(srv.Close)
	_, ck, _ := ed25519.GenerateKey(nil)
	if _, err := d.Market.Funds.OperatorDeposit(ctx, crtx.Mainnet, crtx.Address(ck.Public().(ed25519.PublicKey)), 100*crtx.MicroPerUSDC); err != nil {
		b.Fatal(err)
	}
	cc, _, err := client.New(d.URL, "").SignIn(ctx, ck)
	if err != nil {
		b.Fatal(err)
	}
	str := func(s string) *string { return &s }
	raw := func(s string) *json.RawMessage { r := json.RawMessage(s); return &r }
	price, timeout, tags := crtx.USDC(10_000), 5, []string{"data"}
	pub := crtx.Address(ak.Public().(ed25519.PublicKey))
	a, err := cc.WithAgentKey(ak).CreateListing(ctx, crtx.ListingParams{Name: str("Echo"), Tagline: str("Echoes."), Description: str("Echoes."),
		Tags: &tags, InputSchema: raw(`{"type":"object"}`), OutputSchema: raw(`{"type":"string"}`), PricingModel: str("pay_per_use"),
		Price: &price, EndpointURL: str(srv.URL), SigningPublicKey: str(pub), TimeoutSeconds: &timeout})
	if err != nil {
		b.Fatal(err)
	}

	// The API-key caller deposits on the chain first; the x402 payer only
	// holds USDC.
	_, caller, _ := ed25519.GenerateKey(nil)
	callerW := crtx.Address(caller.Public().(ed25519.PublicKey))
	net.Airdrop(b, callerW, 1_000_000_000)
	net.MintTo(b, mint, mintAuth, callerW, 100*crtx.MicroPerUSDC)
	cs, _, err := client.New(d.URL, "").SignIn(ctx, caller)
	if err != nil {
		b.Fatal(err)
	}
	dep, err := cs.NewDeposit(ctx, crtx.Devnet, 100*crtx.MicroPerUSDC)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := chain.Pay(ctx, net.RPC, caller, crtx.TransferRequest{Recipient: dep.Recipient, Amount: dep.Amount, SPLToken: dep.Mint,
		References: []string{dep.Reference}, Memo: dep.Memo}); err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if got, err := cs.GetDeposit(ctx, dep.DepositID); err == nil && got.Status == crtx.DepositCredited {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the deposit was not credited")
		}
	}
	k, err := cs.CreateKey(ctx, client.KeyParams{Name: "bench", Environment: crtx.Devnet})
	if err != nil {
		b.Fatal(err)
	}
	key := client.New(d.URL, k.Key)
	payerPub, payer, _ := ed25519.GenerateKey(nil)
	net.MintTo(b, mint, mintAuth, crtx.Address(payerPub), 100*crtx.MicroPerUSDC)
	anon := client.New(d.URL, "")
	params := crtx.ExecuteParams{Task: "bench"}
	pr, err := anon.PaymentRequired(ctx, a.AgentID, params)
	if err != nil {
		b.Fatal(err)
	}

	b.Run("api-key", func(b *testing.B) {
		for b.Loop() {
			if _, err := key.Execute(ctx, a.AgentID, params, client.ExecuteOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("x402", func(b *testing.B) {
		before := d.Market.X402.X402Stages()
		for b.Loop() {
			tx, err := chain.X402Payment(ctx, net.RPC, payer, pr.Accepts[0])
			if err != nil {
				b.Fatal(err)
			}
			p := x402.PaymentPayload{X402Version: 2, Resource: &pr.Resource, Accepted: pr.Accepts[0]}
			p.Payload.Transaction = tx
			if _, s, err := anon.ExecutePaid(ctx, a.AgentID, params, p, ""); err != nil || !s.Success {
				b.Fatalf("%+v %v", s, err)
			}
		}
		for stage, t := range d.Market.X402.X402Stages() {
			if n := t.Count - before[stage].Count; n > 0 {
				b.ReportMetric(float64((t.Total-before[stage].Total).Microseconds())/1000/float64(n), stage+"-ms/op")
			}
		}
	})
}
