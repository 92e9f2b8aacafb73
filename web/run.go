package web

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// pageKeyName names the devnet API key that an agent page's runs are
// charged to when the person picks no key of their own: made at the first
// such run and listed on the keys page like any other, where its spending
// shows and where it can be revoked (the next run then makes another).
const pageKeyName = "Agent pages (devnet)"

// runView is one of the visitor's runs as an agent page shows it below the
// try-it form: waiting, with the agent, or its outcome inline.
type runView struct {
	Rec api.ExecutionRecord
	// Cancellable: still waiting for a dispatch slot, so it can be
	// cancelled and refunded (CONTRACT §8); once sent, it runs to its end.
	Cancellable bool
	Timeout     int
	// Charged is what the run cost in the end (Execution.Charge).
	Charged crtx.USDC
}

// Final says the run has ended: the page stops reading it again.
func (r runView) Final() bool {
	return r.Rec.Status != crtx.ExecPending && r.Rec.Status != crtx.ExecRunning
}

// Since is when the run began, in Unix milliseconds, for the page's clock.
func (r runView) Since() int64 { return r.Rec.InitiatedAt.UnixMilli() }

// Elapsed is how long the run has taken so far, by the market's clock.
func (r runView) Elapsed(now time.Time) int { return int(now.Sub(r.Rec.InitiatedAt).Seconds()) }

// ownExecution finds one of the wallet's executions in whichever
// environment it ran, with its result.
func (h *Handler) ownExecution(ctx context.Context, wallet, id string) (crtx.Execution, string, error) {
	for _, env := range crtx.Environments {
		e, result, err := h.market.Executions.GetExecution(ctx, crtx.Principal{Wallet: wallet, Key: &crtx.APIKey{Environment: env}}, id)
		if crtx.ErrorCode(err) != crtx.CodeExecutionNotFound {
			return e, result, err
		}
	}
	return crtx.Execution{}, "", &guided{crtx.Errorf(crtx.CodeExecutionNotFound, "no execution %q of this wallet", id),
		"", []link{{"/dashboard/", "Your executions"}}}
}

// runOf is the run id, when it is one of the wallet's runs of agent.
func (h *Handler) runOf(ctx context.Context, wallet, agent, id string) (*runView, error) {
	e, result, err := h.ownExecution(ctx, wallet, id)
	if crtx.ErrorCode(err) == crtx.CodeExecutionNotFound || (err == nil && e.AgentID != agent) {
		return nil, nil // an address from elsewhere: the page without it
	}
	if err != nil {
		return nil, err
	}
	_, charged := e.Charge()
	return &runView{Rec: api.NewExecutionRecord(e, result, h.market.Links()), Cancellable: e.Status == crtx.ExecPending && e.DispatchedAt == nil && !e.PaidByX402(),
		Timeout: e.TimeoutSeconds, Charged: charged}, nil
}

// runPanel is the part of an agent page that shows a run, read again by
// the page's script until the run ends.
func (h *Handler) runPanel(w http.ResponseWriter, r *http.Request, v visit) error {
	e, _, err := h.ownExecution(r.Context(), v.Wallet, r.PathValue("id"))
	if err != nil {
		return err
	}
	run, err := h.runOf(r.Context(), v.Wallet, e.AgentID, e.ID)
	if err != nil {
		return err
	}
	a, err := h.market.Catalog.Agent(r.Context(), e.AgentID, crtx.Mainnet)
	if err != nil {
		return err
	}
	return h.fragment(w, "agent", "run", v.page("", agentData{Agent: api.NewAgentListing(a, crtx.Mainnet, h.market.Links()), Run: run, Now: v.at}))
}

// cancelRun cancels a run still waiting for a dispatch slot, refunded, and
// goes back to its agent's page.
func (h *Handler) cancelRun(w http.ResponseWriter, r *http.Request, v visit) (outcome, error) {
	e, _, err := h.ownExecution(r.Context(), v.Wallet, r.PathValue("id"))
	if err != nil {
		return outcome{}, err
	}
	landing := runLanding(e.AgentID, e.ID)
	x402 := e.PaidByX402()
	e, err = h.market.Executions.Cancel(r.Context(), crtx.Principal{Wallet: v.Wallet, Key: &crtx.APIKey{Environment: e.Environment}}, e.ID)
	if crtx.ErrorCode(err) == crtx.CodeNotCancellable {
		why := "It was sent to the agent already, so it runs to its end: within its timeout, and a failure is refunded."
		if x402 {
			why = sentence(message(err))
		}
		return outcome{Error: why, Landing: landing}, nil
	}
	if err != nil {
		return outcome{}, err
	}
	return outcome{Notice: "Cancelled — " + e.Cost.String() + " USDC refunded.", Landing: landing}, nil
}

// runLanding is the agent page showing one run.
func runLanding(agent, run string) string {
	return "/agents/" + url.PathEscape(agent) + "?run=" + url.QueryEscape(run) + "#try"
}

// pageKey is the key an agent page's run is charged to: the visitor's own
// key id, or "" for the devnet key of the agent pages, made if need be.
func (h *Handler) pageKey(ctx context.Context, wallet, id string) (*crtx.APIKey, error) {
	keys, err := h.market.Accounts.Keys(ctx, wallet)
	if err != nil {
		return nil, err
	}
	usable := func(k crtx.APIKey) bool { return k.RevokedAt == nil && k.Client == "" }
	if id != "" {
		i := slices.IndexFunc(keys, func(k crtx.APIKey) bool { return k.ID == id && usable(k) })
		if i < 0 {
			return nil, crtx.InvalidField("key_id", "choose one of your API keys")
		}
		return &keys[i], nil
	}
	if i := slices.IndexFunc(keys, func(k crtx.APIKey) bool {
		return usable(k) && k.Name == pageKeyName && k.Environment == crtx.Devnet
	}); i >= 0 {
		return &keys[i], nil
	}
	// Its secret is never shown: the pages charge it by the session.
	k, _, err := h.market.Accounts.CreateKey(ctx, wallet, pageKeyName, crtx.Devnet, nil)
	return &k, err
}
