package gate

import "net/http"

// AllowPayer bounds the x402 payments that cost an RPC call (a
// simulation): per payer address, and for the whole marketplace. It is
// market.Paid's Allow, on every transport that takes x402.
func (g *Gate) AllowPayer(payer string) error {
	now := g.market.Now()
	if ok, retry := g.perIP.Allow("x402:"+payer, now); !ok {
		return RateLimited(retry, "too many payments from %s; try again in %d seconds", payer, max(retry, 1))
	}
	if ok, retry := g.payments.Allow("", now); !ok {
		return RateLimited(retry, "the marketplace is checking too many payments at once; try again in %d seconds", max(retry, 1))
	}
	return nil
}

// AllowReplay bounds the answers to x402 payments sent again, per payer
// address, on a budget apart from its payments', for a protocol that
// knows no client address (MCP, whose proven payers, by their idempotency
// key, never reach it). It is market.Paid's AllowReplay.
func (g *Gate) AllowReplay(payer string) error { return g.allowReplay("payer:" + payer) }

// AllowReplayFrom is AllowReplay for a transport that knows r's client
// address, which it counts by rather than by payer.
func (g *Gate) AllowReplayFrom(r *http.Request) func(string) error {
	return func(string) error { return g.allowReplay("ip:" + ClientIP(r)) }
}

// allowReplay bounds the answers to payments sent again, by who sends them
// (a client address, or a payer where no address is known): a database
// read each, and no RPC call.
func (g *Gate) allowReplay(sender string) error {
	if ok, retry := g.perIP.Allow("x402-replay:"+sender, g.market.Now()); !ok {
		return RateLimited(retry, "too many payments sent again; try again in %d seconds", max(retry, 1))
	}
	return nil
}
