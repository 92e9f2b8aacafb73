package http

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/gate"
)

// query reads query parameters strictly: each at most once, none unknown.
type query struct {
	v url.Values
}

func newQuery(r *http.Request, known ...string) (query, error) {
	v, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return query{}, invalid("the query string is malformed")
	}
	for k, vals := range v {
		if !slices.Contains(known, k) {
			return query{}, invalid("unknown parameter: %s", k)
		}
		if len(vals) > 1 {
			return query{}, invalid("%s: give it once", k)
		}
	}
	return query{v}, nil
}

func (q query) has(k string) bool { return q.v.Has(k) }

func (q query) int(k string, def, min, max int) (int, error) {
	if !q.has(k) {
		return def, nil
	}
	n, err := strconv.Atoi(q.v.Get(k))
	if err != nil || n < min || n > max {
		return 0, invalid("%s must be a whole number from %d to %d", k, min, max)
	}
	return n, nil
}

// queryEnv reads a request whose only query parameter is environment.
func queryEnv(r *http.Request) (crtx.Environment, error) {
	q, err := newQuery(r, "environment")
	if err != nil {
		return "", err
	}
	return q.env()
}

func (q query) env() (crtx.Environment, error) {
	if !q.has("environment") {
		return crtx.Mainnet, nil
	}
	return crtx.ParseEnvironment("environment", q.v.Get("environment"))
}

var sorts = []string{crtx.SortTotalExecutions, crtx.SortSuccessRate, crtx.SortPriceAsc, crtx.SortPriceDesc, crtx.SortCreatedAt}

// catalogParams are the query parameters of a catalog query.
var catalogParams = []string{"limit", "offset", "tags", "min_success_rate", "min_executions", "verified_only", "sort", "q", "environment"}

// agentQuery reads a catalog query (CONTRACT §7), naming the first bad
// parameter.
func (q query) agentQuery() (crtx.AgentQuery, error) {
	var err error
	aq := crtx.AgentQuery{}
	if aq.Limit, err = q.int("limit", 20, 1, 100); err != nil {
		return aq, err
	}
	if aq.Offset, err = q.int("offset", 0, 0, 1<<30); err != nil {
		return aq, err
	}
	if aq.Environment, err = q.env(); err != nil {
		return aq, err
	}
	if q.has("tags") {
		for _, t := range strings.Split(q.v.Get("tags"), ",") {
			t = strings.TrimSpace(t)
			if t == "" || len(t) > 32 {
				return aq, invalid("tags must be a comma-separated list of tags")
			}
			if !slices.Contains(aq.Tags, t) {
				aq.Tags = append(aq.Tags, t)
			}
		}
		if len(aq.Tags) > 10 {
			return aq, invalid("tags: at most 10")
		}
	}
	if q.has("min_success_rate") {
		f, err := strconv.ParseFloat(q.v.Get("min_success_rate"), 64)
		if err != nil || !(f >= 0 && f <= 1) {
			return aq, invalid("min_success_rate must be a number from 0.0 to 1.0")
		}
		aq.MinSuccessRate = &f
	}
	if q.has("min_executions") {
		n, err := strconv.ParseInt(q.v.Get("min_executions"), 10, 64)
		if err != nil || n < 0 {
			return aq, invalid("min_executions must be a whole number of at least 0")
		}
		aq.MinExecutions = &n
	}
	if q.has("verified_only") {
		switch q.v.Get("verified_only") {
		case "true":
			aq.VerifiedOnly = true
		case "false":
		default:
			return aq, invalid("verified_only must be true or false")
		}
	}
	if q.has("sort") {
		aq.Sort = q.v.Get("sort")
		if !slices.Contains(sorts, aq.Sort) {
			return aq, invalid("sort must be one of %s", strings.Join(sorts, ", "))
		}
	}
	if q.has("q") {
		aq.Q = q.v.Get("q")
		if len(aq.Q) > 200 {
			return aq, invalid("q: at most 200 characters")
		}
	}
	return aq, nil
}

func (s *Server) listAgents(w http.ResponseWriter, r *http.Request) error {
	q, err := newQuery(r, catalogParams...)
	if err != nil {
		return err
	}
	aq, err := q.agentQuery()
	if err != nil {
		return err
	}
	page, err := s.market.Catalog.Agents(r.Context(), aq)
	if err != nil {
		return err
	}
	v := api.NewAgentPage(page)
	b, err := v.JSON()
	if err != nil {
		return err
	}
	return writeKept(w, r, b, v.CompressedJSON)
}

func (s *Server) getAgent(w http.ResponseWriter, r *http.Request) error {
	env, err := queryEnv(r)
	if err != nil {
		return err
	}
	a, err := s.market.Catalog.Agent(r.Context(), r.PathValue("agent_id"), env)
	return reply(w, http.StatusOK, api.NewAgentListing(a, env, s.market.Links()), err)
}

func (s *Server) createListing(w http.ResponseWriter, r *http.Request) error {
	p, req, err := withBody[crtx.ListingParams](r, s.gate.Session)
	if err != nil {
		return err
	}
	a, err := s.market.Listings.CreateListing(r.Context(), p.Wallet, req)
	return reply(w, http.StatusCreated, api.NewCreatorAgent(a, s.market.Links()), err)
}

func (s *Server) listingNonce(w http.ResponseWriter, r *http.Request) error {
	p, err := s.gate.Session(r)
	if err != nil {
		return err
	}
	n, err := s.ListingNonce(r.Context(), p.Wallet)
	return reply(w, http.StatusCreated, api.NewListingNonce(n), err)
}

// Each nonce is a row kept a day past its hour, so one wallet is issued
// listingNonceBurst of them, then one per listingNonceEvery: enough for
// a creator's dashboard, which takes one on every view of a listing
// form, and at most about 3,000 rows a wallet.
const (
	listingNonceBurst = 30
	listingNonceEvery = 30 * time.Second
)

// ListingNonce issues wallet a one-time nonce for a listing statement, or
// refuses with rate_limited when the wallet was issued too many lately;
// the creator's pages take theirs here too, so both share one budget.
func (s *Server) ListingNonce(ctx context.Context, wallet string) (crtx.ListingNonce, error) {
	if ok, retry := s.nonces.Allow(wallet, time.Now()); !ok {
		return crtx.ListingNonce{}, gate.RateLimited(retry, "this wallet was issued too many listing nonces; use one it holds, or try again in %d seconds", retry)
	}
	return s.market.Listings.ListingNonce(ctx, wallet)
}

func (s *Server) creatorAgents(w http.ResponseWriter, r *http.Request) error {
	p, err := s.gate.Session(r)
	if err != nil {
		return err
	}
	env, err := queryEnv(r)
	if err != nil {
		return err
	}
	agents, err := s.market.Listings.CreatorAgents(r.Context(), p.Wallet, env)
	return reply(w, http.StatusOK, api.NewCreatorAgentList(agents, s.market.Links()), err)
}

func (s *Server) updateListing(w http.ResponseWriter, r *http.Request) error {
	p, req, err := withBody[crtx.ListingParams](r, s.gate.Session)
	if err != nil {
		return err
	}
	a, err := s.market.Listings.UpdateListing(r.Context(), p.Wallet, r.PathValue("agent_id"), req)
	return reply(w, http.StatusOK, api.NewCreatorAgent(a, s.market.Links()), err)
}

func (s *Server) delist(w http.ResponseWriter, r *http.Request) error {
	p, err := s.gate.Session(r)
	if err != nil {
		return err
	}
	a, err := s.market.Listings.Delist(r.Context(), p.Wallet, r.PathValue("agent_id"))
	return reply(w, http.StatusOK, api.NewCreatorAgent(a, s.market.Links()), err)
}

type profileRequest struct {
	DisplayName *string `json:"display_name"`
}

func (s *Server) setProfile(w http.ResponseWriter, r *http.Request) error {
	p, req, err := withBody[profileRequest](r, s.gate.Session)
	if err != nil {
		return err
	}
	if req.DisplayName == nil {
		return invalid("display_name is required")
	}
	prof, err := s.market.Listings.SetDisplayName(r.Context(), p.Wallet, *req.DisplayName)
	return reply(w, http.StatusOK, api.NewCreatorProfile(prof), err)
}

type testExecutionRequest struct {
	EndpointURL      string `json:"endpoint_url"`
	SigningPublicKey string `json:"signing_public_key"`
	TimeoutSeconds   *int   `json:"timeout_seconds"`
	// PricingModel "metered" checks the usage signature too.
	PricingModel string `json:"pricing_model"`
	// ExampleTask and ExampleParameters test the listing's example
	// instead of the reachability task: it must complete.
	ExampleTask       string          `json:"example_task"`
	ExampleParameters json.RawMessage `json:"example_parameters"`
}

func (s *Server) testExecution(w http.ResponseWriter, r *http.Request) error {
	p, req, err := withBody[testExecutionRequest](r, s.gate.Session)
	if err != nil {
		return err
	}
	if req.EndpointURL == "" || req.SigningPublicKey == "" {
		return invalid("endpoint_url and signing_public_key are required")
	}
	timeout := 30
	if req.TimeoutSeconds != nil {
		if *req.TimeoutSeconds < 1 || *req.TimeoutSeconds > 300 {
			return invalid("timeout_seconds must be 1 to 300")
		}
		timeout = *req.TimeoutSeconds
	}
	writeJSON(w, http.StatusOK, api.NewTestReport(s.market.Listings.TestEndpoint(r.Context(), p.Wallet, req.EndpointURL, req.SigningPublicKey, timeout,
		req.PricingModel == crtx.PricingMetered, crtx.Example{Task: strings.TrimSpace(req.ExampleTask), Parameters: req.ExampleParameters})))
	return nil
}
