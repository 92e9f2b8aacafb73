package main

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain"
	"github.com/crtx-market/crtx/chain/surfnet"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/keyfile"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/x402"
	"github.com/gagliardetto/solana-go/rpc"
)

// benchChain is the local Solana network the x402 scenario pays on, and
// the test USDC minted on it.
type benchChain struct {
	net  *surfnet.Net
	slot time.Duration
	mint string
	auth ed25519.PrivateKey
}

// startBenchChain starts Surfnet with slots of slot and creates a mint
// standing for USDC.
func startBenchChain(ctx context.Context, slot time.Duration, stderr io.Writer) (*benchChain, error) {
	modules, err := surfnet.Package(ctx, stderr)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "x402: starting a local Solana network of %s slots…\n", slot)
	net, err := surfnet.Start(ctx, modules, slot, stderr)
	if err != nil {
		return nil, err
	}
	// Set-up transfers wait for one confirmation, not finality: a slot
	// each, not some thirty.
	net.Await = rpc.ConfirmationStatusConfirmed
	c := &benchChain{net: net, slot: slot, auth: newKey()}
	if err := net.Airdrop(ctx, addressOf(c.auth), 10_000_000_000); err != nil {
		net.Stop()
		return nil, err
	}
	if c.mint, err = net.NewMint(ctx, c.auth); err != nil {
		net.Stop()
		return nil, err
	}
	return c, nil
}

// benchX402 measures what x402 adds to a synchronous call: a marketplace
// of its own on the engine of db, devnet on the local chain, the stub
// listed; one call at a time paid with an API key, then one at a time paid
// with x402 (the payment built and signed by the client per call, as
// x402's clients do), and where an x402 call's time goes, from the
// marketplace's crtx_x402_stage_* metrics; for a payment settled after the
// result, and for one settled first. It returns, by path, ms per call by
// stage, the client's (building its payment) among them.
func benchX402(ctx context.Context, f benchFlags, db string, ch *benchChain, skey ed25519.PrivateKey, stubURL string,
	run func(result), stderr io.Writer) (map[string]map[string]float64, error) {
	cfg, token, cleanup, err := benchStore(ctx, db)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	treasury, payer, tfile := newKey(), newKey(), filepath.Join(cfg.Data, "treasury.json")
	if err := keyfile.Write(tfile, treasury); err != nil {
		return nil, err
	}
	if err := ch.net.Airdrop(ctx, addressOf(treasury), 10_000_000_000); err != nil {
		return nil, err
	}
	if _, err := ch.net.MintTo(ctx, ch.mint, ch.auth, addressOf(payer), 1_000_000*crtx.MicroPerUSDC); err != nil {
		return nil, err
	}
	addr := freeAddr()
	settleAfter := market.DefaultSettleAfter
	_, stop, err := benchServe(ctx, f, cfg, token, addr, freeAddr(), stderr,
		"--solana-rpc-devnet", ch.net.RPC, "--usdc-mint-devnet", ch.mint, "--treasury-keypair", tfile,
		"--rate-limit-payments", "0", "--x402-settle-after", settleAfter.String(),
		// Refunds alone use nonce accounts here; each transaction that
		// creates them waits for finality before the marketplace starts.
		"--nonce-accounts", "1")
	if err != nil {
		return nil, err
	}
	defer stop()
	base := "http://" + addr
	// The API-key caller pays from mainnet's ledger: an operator's deposit
	// cannot fund devnet, which settles on the chain. A synchronous x402
	// call is settled after its result when the agent's timeout is within
	// --x402-settle-after, first otherwise: one agent of each.
	one := f
	one.agents, one.wallets = 1, 1
	within := int(settleAfter.Seconds())
	after, keys, err := benchParties(ctx, base, one, skey, stubURL, crtx.Mainnet, within)
	if err != nil {
		return nil, err
	}
	one.wallets = 0
	first, _, err := benchParties(ctx, base, one, skey, stubURL, crtx.Mainnet, 2*within)
	if err != nil {
		return nil, err
	}
	params := crtx.ExecuteParams{Task: "t"}
	keyed := client.New(base, keys[0])
	run(load("API key, one at a time", 1, f.dur, func(int) error {
		rec, err := keyed.Execute(ctx, after[0], params, client.ExecuteOptions{})
		if err == nil && rec.Status != crtx.ExecCompleted {
			err = fmt.Errorf("not completed: %s", rec.Status)
		}
		return err
	}))
	stages := map[string]map[string]float64{}
	for _, path := range []struct{ name, agent string }{{"settled after", after[0]}, {"settled first", first[0]}} {
		if stages[path.name], err = payPerCall(ctx, base, ch, payer, path.agent, "x402 "+path.name+", one at a time", f.dur, run, stderr); err != nil {
			return nil, err
		}
	}
	return stages, nil
}

// payPerCall runs one synchronous call at a time to agent for d, each paid
// with an x402 payment payer builds and signs, and returns where a call's
// time went, in ms by stage.
func payPerCall(ctx context.Context, base string, ch *benchChain, payer ed25519.PrivateKey, agent, name string, d time.Duration,
	run func(result), stderr io.Writer) (map[string]float64, error) {
	anon := client.New(base, "")
	params := crtx.ExecuteParams{Task: "t"}
	pr, err := anon.PaymentRequired(ctx, agent, params)
	if err != nil {
		return nil, err
	}
	before, err := x402Stages(base)
	if err != nil {
		return nil, err
	}
	// One client: the loop's calls run one after another, so these sums
	// need no lock.
	var built time.Duration
	var builds int
	r := load(name, 1, d, func(int) error {
		t0 := time.Now()
		tx, err := chain.X402Payment(ctx, ch.net.RPC, payer, pr.Accepts[0])
		if err != nil {
			return err
		}
		built, builds = built+time.Since(t0), builds+1
		p := x402.PaymentPayload{X402Version: 2, Resource: &pr.Resource, Accepted: pr.Accepts[0]}
		p.Payload.Transaction = tx
		rec, s, err := anon.ExecutePaid(ctx, agent, params, p, "")
		if err == nil && (!s.Success || rec.Status != crtx.ExecCompleted) {
			err = fmt.Errorf("not settled and completed: %+v, %s", s, rec.Status)
		}
		return err
	})
	run(r)
	after, err := x402Stages(base)
	if err != nil {
		return nil, err
	}
	// The client's part: reading a blockhash and signing the payment.
	stages := map[string]float64{"client": float64(built.Microseconds()) / 1000 / float64(max(builds, 1))}
	for _, stage := range []string{"check", "simulate", "resimulate", "settle"} {
		if n := after[stage].runs - before[stage].runs; n > 0 {
			stages[stage] = (after[stage].seconds - before[stage].seconds) * 1000 / n
		}
	}
	fmt.Fprintf(stderr, "%-44s %s\n", "", stageLine(stages))
	return stages, nil
}

// stageLine says where an x402 call's time went.
func stageLine(ms map[string]float64) string {
	var parts []string
	for _, stage := range []string{"client", "check", "simulate", "resimulate", "settle"} {
		if v, ok := ms[stage]; ok {
			parts = append(parts, fmt.Sprintf("%s %.2f", stage, v))
		}
	}
	return "ms a call: " + strings.Join(parts, ", ")
}

// stageTotals are one stage's counters from /metrics.
type stageTotals struct{ seconds, runs float64 }

// x402Stages reads the x402 stages' counters from /metrics, by stage.
func x402Stages(base string) (map[string]stageTotals, error) {
	m, err := metrics(base)
	if err != nil {
		return nil, err
	}
	out := map[string]stageTotals{}
	for sample, v := range m {
		name, stage, ok := strings.Cut(sample, `{stage="`)
		if !ok {
			continue
		}
		stage = strings.TrimSuffix(stage, `"}`)
		t := out[stage]
		switch name {
		case "crtx_x402_stage_seconds_total":
			t.seconds = v
		case "crtx_x402_stage_runs_total":
			t.runs = v
		}
		out[stage] = t
	}
	return out, nil
}

func newKey() ed25519.PrivateKey {
	_, k, err := ed25519.GenerateKey(nil)
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return k
}

func addressOf(k ed25519.PrivateKey) string { return crtx.Address(k.Public().(ed25519.PublicKey)) }
