// Package mcp serves the marketplace as an MCP server at /mcp (Streamable
// HTTP): callers' MCP clients search, inspect, run and verify agents with
// their API key, charged and checked exactly as on the REST interface; and
// at /mcp/x402, without a key, runs paid per call with x402 (x402.go).
//
// The protocol is the official Go SDK's. What it lacks — the experimental
// Tasks of protocol 2025-11-25 — is added in tasks.go over the same
// executions the REST interface queues.
package mcp

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/gate"
	"github.com/crtx-market/crtx/market"
	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure the MCP handler.
type Options struct {
	// Gate authenticates callers, limits them and answers refusals as
	// the REST interface does.
	Gate   *gate.Gate
	Logger *slog.Logger
}

// server holds what every tool needs.
type server struct {
	market *market.Market
	gate   *gate.Gate
	log    *slog.Logger
	// waiting are the calls waiting for their runs, for cancellation.
	waiting *waiting
}

// New returns the handler of /mcp.
func New(m *market.Market, opts Options) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &server{market: m, gate: opts.Gate, log: opts.Logger, waiting: &waiting{calls: map[waitingCall][]*context.CancelFunc{}}}
	m.OnSignal(cancelSignal, s.waiting.cancelSignalled)
	srv := sdk.NewServer(&sdk.Implementation{Name: "crtx", Title: "crtx agent marketplace", Version: crtx.Version()},
		&sdk.ServerOptions{Logger: opts.Logger, Instructions: instructions, Capabilities: &sdk.ServerCapabilities{
			Logging: &sdk.LoggingCapabilities{}, Extensions: map[string]any{tasksExtension: map[string]any{}}}})
	srv.AddReceivingMiddleware(carryCaller, textOnly, s.limitCalls)
	s.addTools(srv)
	s.addTasks(srv)
	srv.AddReceivingMiddleware(recovered(opts.Logger)) // added last: the outermost
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		// The SDK's DNS-rebinding guard refuses a request that reached a
		// loopback socket with another Host, which is every request behind
		// a reverse proxy on the same machine. It guards ambient
		// credentials; here every request carries its key.
		//
		// Stateless: the server keeps nothing between requests, as
		// protocol 2026-07-28 expects and 2025 clients accept (they get no
		// Mcp-Session-Id and send none), so any replica answers any
		// request and no key can pile up sessions. What a run leaves is its
		// execution's row.
		&sdk.StreamableHTTPOptions{Stateless: true, Logger: opts.Logger, DisableLocalhostProtection: true})
	bound := auth.RequireBearerToken(func(ctx context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		c := r.Context().Value(callerKey{}).(caller)
		return &auth.TokenInfo{UserID: c.p.Key.ID, Extra: map[string]any{extraCaller: c}}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	return checkOrigin(m.Config().PublicURL, opts.Gate, s.authenticate(s.liftTask(bound)))
}

const instructions = `crtx is a marketplace of paid AI agents. search_agents finds agents (price per call, success rate);
get_agent shows one with the parameters it takes; run_agent runs one, charging its price from the API key's wallet
through an escrow that is refunded if the run fails; get_execution and verify_execution read and check a run.
A devnet key (crtx_test_…) spends devnet test USDC; a mainnet key (crtx_live_…) spends real USDC.`

// caller is who a request acts for: the API key's principal.
type caller struct {
	p     crtx.Principal
	calls *calls
	// request is the HTTP request's context: a stateless server answers
	// each call within its request, so a call whose request ended (the
	// client went away, or cancelled) is cancelled with it.
	request context.Context
}

type callerKey struct{}

const extraCaller = "crtx.caller"

// authenticate lets through requests with a valid API key within its rate
// limit. Anything else is answered before the SDK sees it, with the REST
// error body (and, on a 401, the challenge MCP clients look for).
func (s *server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.gate.Caller(r)
		if err != nil {
			if code := crtx.ErrorCode(err); code == crtx.CodeAuthenticationRequired || code == crtx.CodeInvalidAPIKey {
				w.Header().Set("WWW-Authenticate", s.gate.Challenge(r))
			}
			s.gate.Refuse(w, r, err)
			return
		}
		c := caller{p: p, calls: &calls{}, request: r.Context()}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, c)))
	})
}

// carryCaller puts the caller the SDK carried from the HTTP request into
// the context of every handler, tools and task methods alike (the latter
// are given no request to read it from), and ends that context with the
// HTTP request, on every protocol version (the SDK's
// PropagateRequestCancellation does so for 2026-07-28 only): a stateless
// server answers each call within its request, so a client that goes away,
// or closes the request to cancel (the Go SDK does), cancels the call.
func carryCaller(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
			if c, ok := extra.TokenInfo.Extra[extraCaller].(caller); ok {
				ctx = context.WithValue(ctx, callerKey{}, c)
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
				defer context.AfterFunc(c.request, cancel)()
			}
		}
		return next(ctx, method, req)
	}
}

// callerOf is the caller a handler acts for.
func callerOf(ctx context.Context) (caller, error) {
	if c, ok := ctx.Value(callerKey{}).(caller); ok {
		return c, nil
	}
	return caller{}, crtx.Errorf(crtx.CodeInvalidAPIKey, "this call needs an API key (Bearer crtx_live_… or crtx_test_…)")
}
