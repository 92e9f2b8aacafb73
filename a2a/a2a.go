// Package a2a makes every listed agent an A2A agent (protocol 1.0, the
// a2a-go SDK): a card signed by the marketplace at
// /a2a/{agent_id}/.well-known/agent-card.json, and at /a2a/{agent_id} an
// endpoint speaking the JSON-RPC binding (and HTTP+JSON below it) whose
// tasks are the agent's executions. Nothing is kept beside the execution
// rows: a task's id is its execution's id and its state is read from the
// execution each time, so any replica answers for any task and a sent
// message is charged, escrowed and settled exactly as a REST execute is.
package a2a

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/gate"
	"github.com/crtx-market/crtx/market"
)

// Options configure the A2A handler.
type Options struct {
	// Gate authenticates callers, limits them and answers refusals as
	// the REST interface does.
	Gate   *gate.Gate
	Logger *slog.Logger
}

// server holds what the card, the key set and the endpoint share.
type server struct {
	m         *market.Market
	gate      *gate.Gate
	log       *slog.Logger
	publicURL string
	signer    *signer
	latency   *memo[market.Latency]
}

// streamKeepAlive is how often an idle stream says it is alive, so that
// proxies keep a long call's connection open.
const streamKeepAlive = 15 * time.Second

// New returns the handler of /a2a/ and /.well-known/jwks.json.
func New(m *market.Market, opts Options) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	cfg := m.Config()
	s := &server{m: m, gate: opts.Gate, log: opts.Logger, publicURL: cfg.PublicURL,
		signer: newSigner(cfg.Signer, cfg.PublicURL, cfg.NextSigner, cfg.PreviousSigner), latency: newMemo[market.Latency](latencyTTL, 4096)}
	t := &tasks{server: s}
	transport := []a2asrv.TransportOption{
		a2asrv.WithTransportKeepAlive(streamKeepAlive),
		// The SDK runs a stream's events on a goroutine of its own, out of
		// reach of the daemon's panic guard.
		a2asrv.WithTransportPanicHandler(func(p any) error {
			s.log.Error("a2a panic", "panic", p)
			return a2a.NewError(a2a.ErrInternalError, "internal error")
		}),
	}
	rpc := a2asrv.NewJSONRPCHandler(t, transport...)
	rest := a2asrv.NewRESTHandler(t, transport...)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/jwks.json", s.jwks)
	mux.HandleFunc("GET /a2a/{agent_id}/.well-known/agent-card.json", s.card)
	// What a client asks for when it resolves the card path relative to
	// an agent's URL written without its trailing slash (the JavaScript
	// SDK does): no agent's card, and no key would make it one.
	mux.HandleFunc("GET /a2a/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		s.gate.Refuse(w, r, crtx.Errorf(crtx.CodeNotFound,
			"no agent card here: an agent's card is at /a2a/{agent_id}/.well-known/agent-card.json; "+
				"a client that resolves it relative to the agent's URL needs that URL with a trailing slash (/a2a/{agent_id}/)"))
	})
	mux.Handle("POST /a2a/{agent_id}", s.authenticated(rpc))
	mux.HandleFunc("/a2a/{agent_id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", "POST")
		s.gate.Refuse(w, r, crtx.Errorf(crtx.CodeMethodNotAllowed,
			"%s is not allowed on %s: A2A JSON-RPC calls are POSTed; the card is at %s/.well-known/agent-card.json",
			r.Method, r.URL.Path, r.URL.Path))
	})
	// The HTTP+JSON binding's paths hang below the same URL.
	mux.Handle("/a2a/{agent_id}/", s.authenticated(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prefix := "/a2a/" + r.PathValue("agent_id")
		r2 := r.Clone(r.Context())
		r2.URL.Path, r2.URL.RawPath = strings.TrimPrefix(r.URL.Path, prefix), ""
		rest.ServeHTTP(w, r2)
	})))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.gate.Refuse(w, r, crtx.Errorf(crtx.CodeNotFound, "no route %s %s; an agent's A2A card is at /a2a/{agent_id}/.well-known/agent-card.json", r.Method, r.URL.Path))
	})
	return mux
}
