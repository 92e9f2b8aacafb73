// Package gate is what every transport of the marketplace asks before it
// serves a request, and how it answers a refusal: the caller's credential
// made a crtx.Principal, the rate limits and stream slots, the bounds on
// x402 payments, and the one writer of the seed's error body. The REST
// interface, MCP and A2A share one Gate, so a key is counted, and an
// error answered, alike on each.
package gate

import (
	"log/slog"

	"github.com/crtx-market/crtx/market"
)

// Gate authenticates, limits and refuses requests for one market.
type Gate struct {
	market   *market.Market
	log      *slog.Logger
	perIP    *Limiter
	payments *Limiter
	perKey   *Limiter
	streams  *inflight
}

// New returns the gate of m; log receives the internal errors it answers.
func New(m *market.Market, limits Limits, log *slog.Logger) *Gate {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Gate{market: m, log: log,
		perIP: perSecond(limits.PerIP), perKey: perSecond(limits.PerKey), payments: perSecond(limits.Payments),
		streams: &inflight{max: limits.StreamsPerKey, n: map[string]int{}}}
}
