package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/chain"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/x402"
)

// executeX402 runs a call paid by itself with x402 from the wallet key
// file, on the chain rpc serves: it asks the requirements, picks the one of
// that chain, signs the payment and runs the call with it; an asynchronous
// call is followed by signing in with the same wallet; a streamed one
// (stream) is printed as it comes, paid before its first piece.
func (c *cli) executeX402(ctx context.Context, agent string, p crtx.ExecuteParams, idem, rpc string, stream bool) error {
	key, addr, err := c.wallet()
	if err != nil {
		return err
	}
	if rpc == "" {
		return fmt.Errorf("--x402 needs --rpc (or CRTX_SOLANA_RPC): the Solana JSON-RPC URL of the chain to pay on")
	}
	network, err := chain.NetworkOf(ctx, rpc)
	if err != nil {
		return err
	}
	anon := c.api("")
	pr, err := anon.PaymentRequired(ctx, agent, p)
	if err != nil {
		return err
	}
	var req *x402.PaymentRequirements
	var offered []string
	for i, a := range pr.Accepts {
		offered = append(offered, a.Network)
		if a.Network == network {
			req = &pr.Accepts[i]
		}
	}
	if _, public := usdcMints[network]; req == nil && !public && len(pr.Accepts) == 1 {
		// A local cluster stands in for the network the marketplace names
		// (crtxd dev --local-chain's, for devnet), as x402's own clients
		// pay it given its RPC URL: the transaction lands only where its
		// blockhash was read, this cluster.
		req = &pr.Accepts[0]
		fmt.Fprintf(c.errOut, "the local cluster at %s stands in for %s\n", rpc, req.Network)
	}
	if req == nil {
		return fmt.Errorf("the marketplace takes x402 payments on %v, not on %s (the chain %s serves)", offered, network, rpc)
	}
	network = req.Network
	// The payment is signed for what the marketplace asks: it must be
	// USDC where the network is known, and no more than --max-cost.
	if mint, known := usdcMints[req.Network]; known && req.Asset != mint {
		return fmt.Errorf("the marketplace asks to be paid in %s, which is not USDC on %s (%s); refusing", req.Asset, req.Network, mint)
	}
	amount, err := strconv.ParseInt(req.Amount, 10, 64)
	if err != nil || amount <= 0 {
		return fmt.Errorf("the marketplace asks an amount of %q; refusing", req.Amount)
	}
	if p.MaxCost != nil && crtx.USDC(amount) > *p.MaxCost {
		return fmt.Errorf("the call costs %s USDC, above --max-cost %s; nothing was paid", crtx.USDC(amount), *p.MaxCost)
	}
	tx, err := chain.X402Payment(ctx, rpc, key, *req)
	if err != nil {
		return err
	}
	payload := x402.PaymentPayload{X402Version: x402.Version, Resource: &pr.Resource, Accepted: *req}
	payload.Payload.Transaction = tx
	fmt.Fprintf(c.errOut, "paying %s USDC from %s on %s…\n", crtx.USDC(amount), addr, network)
	if stream {
		var settle x402.SettleResponse
		err := c.printStream(ctx, agent, func(delta func(string)) (rec api.ExecutionRecord, err error) {
			rec, settle, err = anon.ExecutePaidStream(ctx, agent, p, payload, idem, delta)
			return rec, err
		})
		c.paidBy(settle)
		return err
	}
	label := "running " + agent
	stop := c.status(func() string { return label })
	rec, settle, err := anon.ExecutePaid(ctx, agent, p, payload, idem)
	if err == nil && p.Async {
		var signed *client.Client
		if signed, err = anon.SignInWithX(ctx, key, network); err == nil {
			label = "execution " + rec.ExecutionID + " pending"
			rec, err = c.follow(ctx, signed, rec.ExecutionID, func(s crtx.ExecStatus) { label = "execution " + rec.ExecutionID + " " + string(s) })
		}
	}
	stop()
	c.paidBy(settle)
	if err != nil {
		return err
	}
	return c.printRecord(rec)
}

// paidBy tells the transaction that paid a call, if one did.
func (c *cli) paidBy(settle x402.SettleResponse) {
	if settle.Transaction != "" && !c.json {
		fmt.Fprintf(c.errOut, "paid by transaction %s\n", settle.Transaction)
	}
}

// usdcMints are USDC's mints on the clusters whose CAIP-2 ids are known.
var usdcMints = map[string]string{
	"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
	"solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1": "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
}
