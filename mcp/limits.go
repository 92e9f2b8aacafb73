package mcp

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"

	"github.com/crtx-market/crtx"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// codeServer is JSON-RPC's code for a condition of the server's own (the
// range -32000 to -32099): here, a call over the key's rate limit.
const codeServer = -32000

// calls counts the calls an HTTP request carries: one, or each of a JSON-RPC
// batch (protocol 2025-03-26).
type calls struct{ n atomic.Int32 }

// limitCalls counts every call of a batch against the key's rate limit, as
// that many REST requests would be. authenticate counted the HTTP request
// as its first call; each further call is counted here, and one over the
// limit is refused alone. Notifications are not calls: they answer nothing.
func (s *server) limitCalls(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		c, err := callerOf(ctx)
		if err != nil || strings.HasPrefix(method, "notifications/") || c.calls.n.Add(1) == 1 {
			return next(ctx, method, req)
		}
		if err := s.gate.Limit(c.p); err != nil {
			var e *crtx.Error
			if errors.As(err, &e) {
				return refuse(method, codeServer, e)
			}
			return nil, err
		}
		return next(ctx, method, req)
	}
}
