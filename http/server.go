// Package http serves the crtx REST interface and the operational
// endpoints, and answers errors for the pages mounted beside them. Handlers
// return errors; writeError alone turns them into the seed's error body.
package http

import (
	"log/slog"
	"net/http"
	"net/url"
	"slices"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/gate"
	"github.com/crtx-market/crtx/market"
	"github.com/prometheus/client_golang/prometheus"
)

// Options configure a Server.
type Options struct {
	// AdminToken enables the admin API; nil or empty turns it off. It may
	// be replaced while the server runs (SIGHUP).
	AdminToken *gate.Secret
	Logger     *slog.Logger
	// Gate authenticates and limits requests and writes errors; the
	// protocols mounted beside the REST interface share it. Without one,
	// New makes one with no limits.
	Gate *gate.Gate
	// Collectors are more metrics for GET /metrics: the store's, say.
	Collectors []prometheus.Collector
	// MetricsElsewhere leaves GET /metrics out of the public routes: the
	// daemon serves Server.Metrics on a listener of its own.
	MetricsElsewhere bool
	// Proxies are the load balancers whose X-Forwarded-For, Forwarded
	// and X-Request-Id are believed.
	Proxies gate.Proxies
}

// Server is the http.Handler of crtxd.
type Server struct {
	market     *market.Market
	log        *slog.Logger
	proxies    gate.Proxies
	adminToken *gate.Secret
	guard      *adminGuard
	mux        *http.ServeMux
	metrics    *metrics
	routes     []Route
	gate       *gate.Gate
	cop        *http.CrossOriginProtection // for mounted pages' forms
	nonces     *gate.Limiter               // listing nonces issued per wallet
	// notFoundPage answers wrong addresses of pages (NotFoundPage).
	notFoundPage http.HandlerFunc
}

// Route is one endpoint: the method and path pattern it is registered under.
type Route struct {
	Method, Path string
	handle       func(w http.ResponseWriter, r *http.Request) error
}

// New returns the handler for market.
func New(market *market.Market, opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Gate == nil {
		opts.Gate = gate.New(market, gate.Limits{}, opts.Logger)
	}
	s := &Server{market: market, log: opts.Logger, proxies: opts.Proxies, adminToken: opts.AdminToken, guard: newAdminGuard(opts.AdminToken), mux: http.NewServeMux(),
		gate: opts.Gate, nonces: gate.NewLimiter(1/listingNonceEvery.Seconds(), listingNonceBurst)}
	s.metrics = newMetrics(prometheus.NewRegistry(), append(opts.Collectors, append(append(reserveGauges(market), paidFirstCounters(market)...), newRPCCalls(market), newX402Stages(market), newBusiness(market))...)...)
	s.routes = []Route{
		{"GET", "/healthz", s.healthz},
		{"GET", "/readyz", s.readyz},
		{"GET", "/metrics", s.serveMetrics},
		{"GET", "/.well-known/crtx.json", s.wellKnown},
		{"GET", gate.ResourceMetadataPath, oauthCORS(s.resourceMetadata)},
		{"GET", "/.well-known/oauth-authorization-server", oauthCORS(s.serverMetadata)},
		{"POST", oauthRegisterPath, oauthCORS(s.limitIP(s.registerClient))},
		{"POST", oauthTokenPath, oauthCORS(s.limitIP(s.token))},
		{"POST", oauthRevokePath, oauthCORS(s.limitIP(s.revoke))},
		{"OPTIONS", "/.well-known/", oauthCORS(nil)},
		{"OPTIONS", "/oauth/", oauthCORS(nil)},
		{"GET", "/v1/openapi.json", s.openAPI},

		{"POST", "/v1/auth/challenge", s.limitIP(s.challenge)},
		{"POST", "/v1/auth/session", s.limitIP(s.createSession)},
		{"DELETE", "/v1/auth/session", s.deleteSession},

		{"POST", "/v1/keys", s.createKey},
		{"GET", "/v1/keys", s.listKeys},
		{"DELETE", "/v1/keys/{key_id}", s.revokeKey},

		{"GET", "/v1/agents", s.listAgents},
		{"GET", "/discovery/resources", s.discoveryResources},
		{"GET", "/v1/agents/{agent_id}", s.getAgent},
		{"POST", "/v1/agents/{agent_id}/execute", s.execute},
		{"GET", "/v1/executions", s.listExecutions},
		{"GET", "/v1/executions/{execution_id}", s.getExecution},
		{"GET", "/v1/x402/sign-in-with-x", s.signInWithX},
		{"POST", "/v1/executions/{execution_id}/cancel", s.cancel},
		{"GET", "/v1/executions/{execution_id}/events", s.events},
		{"GET", "/v1/executions/{execution_id}/stream", s.resumeStream},
		{"GET", "/v1/executions/{execution_id}/receipt", s.receipt},
		{"GET", "/v1/executions/{execution_id}/ruling", s.ruling},
		{"POST", "/v1/executions/{execution_id}/disputes", s.openDispute},
		{"GET", "/ipfs/{cid}", s.ipfs},

		{"PUT", "/v1/creator/profile", s.setProfile},
		{"POST", "/v1/creator/listing-nonces", s.listingNonce},
		{"POST", "/v1/creator/agents", s.createListing},
		{"GET", "/v1/creator/agents", s.creatorAgents},
		{"PATCH", "/v1/creator/agents/{agent_id}", s.updateListing},
		{"DELETE", "/v1/creator/agents/{agent_id}", s.delist},
		{"POST", "/v1/creator/test-execution", s.testExecution},
		{"GET", "/v1/creator/disputes", s.creatorDisputes},
		{"GET", "/v1/creator/earnings", s.creatorEarnings},
		{"GET", "/v1/creator/executions", s.creatorExecutions},
		{"POST", "/v1/creator/disputes/{dispute_id}/response", s.respondToDispute},

		{"GET", "/v1/wallet", s.wallet},
		{"GET", "/v1/webhooks/default/secret", s.webhookSecret},
		{"POST", "/v1/webhooks/default/secret", s.rotateWebhookSecret},
		{"POST", "/v1/devnet/airdrop", s.limitIP(s.airdrop)},
		{"POST", "/v1/wallet/deposits", s.limitIP(s.createDeposit)},
		{"GET", "/v1/wallet/deposits", s.listDeposits},
		{"GET", "/v1/wallet/deposits/{deposit_id}", s.getDeposit},
		{"GET", "/v1/solana-pay/deposits/{deposit_id}", anyOrigin(s.solanaPayLabel)},
		{"POST", "/v1/solana-pay/deposits/{deposit_id}", anyOrigin(s.limitIP(s.solanaPayTransaction))},
		{"OPTIONS", "/v1/solana-pay/deposits/{deposit_id}", anyOrigin(s.solanaPayPreflight)},
		{"POST", "/v1/wallet/withdrawals", s.createWithdrawal},
		{"GET", "/v1/wallet/withdrawals", s.listWithdrawals},
		{"GET", "/v1/wallet/withdrawals/{withdrawal_id}", s.getWithdrawal},
		{"GET", "/v1/reserves", s.limitIP(s.reserves)},
		{"GET", "/v1/admin/deposits/unattributed", s.admin(s.unattributed)},
		{"POST", "/v1/admin/deposits", s.admin(s.adminDeposit)},
		{"POST", "/v1/admin/withdrawals", s.admin(s.adminWithdraw)},
		{"GET", "/v1/admin/disputes", s.admin(s.adminDisputes)},
		{"POST", "/v1/admin/disputes/{dispute_id}/resolve", s.admin(s.resolveDispute)},
		{"POST", "/v1/admin/creators/{wallet}/verify", s.admin(s.verifyCreator(true))},
		{"POST", "/v1/admin/creators/{wallet}/unverify", s.admin(s.verifyCreator(false))},
		{"POST", "/v1/admin/agents/{agent_id}/suspend", s.admin(s.suspendAgent(true))},
		{"POST", "/v1/admin/agents/{agent_id}/unsuspend", s.admin(s.suspendAgent(false))},

		{"GET", "/v1/ledger/{environment}/accounts/{address}", ledgerRead("address", s.account)},
		{"GET", "/v1/ledger/{environment}/transactions/{transaction_id}", ledgerRead("transaction_id", s.market.Ledger.Transaction)},
		{"GET", "/v1/ledger/{environment}/transactions/{transaction_id}/proof", ledgerRead("transaction_id", s.market.Ledger.Proof)},
		{"GET", "/v1/ledger/{environment}/blocks/{height}", s.ledgerBlock},
	}
	if opts.MetricsElsewhere {
		s.routes = slices.DeleteFunc(s.routes, func(rt Route) bool { return rt.Path == "/metrics" })
	}
	for _, rt := range s.routes {
		s.handle(rt.Method+" "+rt.Path, rt.handle)
	}
	s.cop = http.NewCrossOriginProtection()
	// Behind a proxy that rewrites Host, the public URL is the origin
	// browsers send.
	if u, err := url.Parse(market.Config().PublicURL); err == nil && u.Host != "" {
		s.cop.AddTrustedOrigin(u.Scheme + "://" + u.Host)
	}
	return s
}

func (s *Server) handle(pattern string, h func(http.ResponseWriter, *http.Request) error) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// Mount serves a page or form beside the REST interface, behind the same
// middleware and error writer. Pages are not part of the REST interface
// (nor of openapi.json). A form posted from another site is refused before
// it runs: sign-in forms have no session (nor CSRF value) yet to check. A
// form's fields are held to the rule of text (crtx.IsText), as REST bodies
// are, and one that cannot be parsed is refused. (A multipart body is
// never read: parsing the form here leaves the page's form values set,
// empty, so Go does not parse it when the page reads a field.)
func (s *Server) Mount(method, path string, h func(http.ResponseWriter, *http.Request) error) {
	if method == http.MethodPost {
		page := h
		h = func(w http.ResponseWriter, r *http.Request) error {
			if err := s.cop.Check(r); err != nil {
				return crtx.Errorf(crtx.CodeInvalidSession, "this form was posted from another site; open the page on this site and send it from there")
			}
			// A body that fails to parse may still have filled some fields,
			// which the page would read unchecked.
			if err := r.ParseForm(); err != nil {
				if err := tooLarge(err); err != nil {
					return err
				}
				return invalid("the form could not be read (%v); send it from its page", err)
			}
			for k, vs := range r.PostForm {
				if !crtx.IsText(k) || slices.ContainsFunc(vs, func(v string) bool { return !crtx.IsText(v) }) {
					return invalid("the form holds a NUL character or bytes that are not UTF-8, which no field accepts")
				}
			}
			return page(w, r)
		}
	}
	s.handle(method+" "+path, h)
}

// OpenAPI returns the REST interface's OpenAPI document, which the server
// serves at /v1/openapi.json. The bytes are shared: do not change them.
func OpenAPI() []byte { return openAPIDoc }

// Routes lists every endpoint of the REST interface.
func (s *Server) Routes() []Route { return s.routes }

// ServeHTTP runs the middleware and dispatches to the route.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.serve(w, r)
}

// limitIP guards sign-in and the airdrop per client address.
func (s *Server) limitIP(h func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := s.gate.LimitAddress(r); err != nil {
			return err
		}
		return h(w, r)
	}
}

// admin serves h to the operator alone: a request must carry the operator's
// token. With no token configured the admin API does not exist. The route
// table wraps every admin route in it, so none can forget the check.
func (s *Server) admin(h func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := s.operator(r); err != nil {
			return err
		}
		return h(w, r)
	}
}

// operator checks the operator's token.
func (s *Server) operator(r *http.Request) error {
	if s.adminToken.Get() != "" && gate.Bearer(r) == "" {
		return crtx.Errorf(crtx.CodeAuthenticationRequired, "send Authorization: Bearer <admin token>")
	}
	return s.CheckAdminToken(r, gate.Bearer(r))
}
