package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type runIn struct {
	AgentID        string          `json:"agent_id" jsonschema:"the agent's id, as search_agents gives it"`
	Task           string          `json:"task" jsonschema:"what the agent is to do, in words"`
	Parameters     json.RawMessage `json:"parameters,omitempty" jsonschema:"an object matching the agent's input_schema (see get_agent)"`
	MaxCost        *crtx.USDC      `json:"max_cost_usdc,omitempty" jsonschema:"the most to pay: if the price is above it, nothing runs and nothing is charged"`
	MaxPrice       *crtx.USDC      `json:"max_price_usdc,omitempty" jsonschema:"for an agent priced per token: the most this run may cost, held while it runs (at least its base price); the unused part returns"`
	TimeoutSeconds *int            `json:"timeout_seconds,omitempty" jsonschema:"give up after this many seconds, at most the agent's own timeout"`
	IdempotencyKey string          `json:"idempotency_key,omitempty" jsonschema:"a key of your choosing: the same key with the same arguments returns the first run instead of paying again (24 hours)"`
	Private        bool            `json:"private,omitempty" jsonschema:"keep the result to this wallet: not published by content id (ipfs_url is null) and its CID not on the ledger, which still commits its hash"`
}

// runOut is run_agent's structured answer: where the result is and what
// it cost; the result text is the answer's first content.
type runOut struct {
	ExecutionID   string          `json:"execution_id"`
	Status        crtx.ExecStatus `json:"status"`
	Cost          crtx.USDC       `json:"cost_usdc"`
	ResultHash    *string         `json:"result_hash"`
	IPFSURL       *string         `json:"ipfs_url"`
	OnChainRecord string          `json:"on_chain_record"`
	// TokensUsed and Metered say what an agent priced per token was
	// charged for: the usage its creator signed.
	TokensUsed *int64           `json:"tokens_used,omitempty"`
	Metered    *api.MeteredView `json:"metered,omitempty"`
}

func runTool() *sdk.Tool {
	in := schemaFor[runIn]()
	property(in, "parameters").Type = "object"
	property(in, "task").MinLength, property(in, "task").MaxLength = ptr(1), ptr(crtx.MaxTaskBytes)
	property(in, "idempotency_key").MaxLength = ptr(255)
	property(in, "timeout_seconds").Minimum = ptr(1.0)
	property(in, "max_cost_usdc").Minimum = ptr(0.0)
	property(in, "max_price_usdc").Minimum = ptr(0.0)
	return &sdk.Tool{Name: "run_agent", Title: "Run an agent",
		Description: "Run an agent on a task, paying its price per call from this API key's wallet. The price is held in escrow and paid to the creator only when the agent returns a result whose hash and signature check out; a failed run is refunded. Answers the result text, and the execution's id, cost, result hash, IPFS URL and ledger record. As POST /v1/agents/{agent_id}/execute.",
		InputSchema: in, OutputSchema: schemaFor[runOut](),
		Annotations: &sdk.ToolAnnotations{Title: "Run an agent (paid)", DestructiveHint: ptr(false), OpenWorldHint: ptr(true)}}
}

// run executes an agent. It opens the execution as an asynchronous one and
// waits for it here, so that the call can report progress, be cancelled
// while the execution is still pending, and become an MCP task.
func (s *server) run(ctx context.Context, req *sdk.CallToolRequest, in runIn) (*sdk.CallToolResult, runOut, error) {
	c, err := callerOf(ctx)
	if err != nil {
		return nil, runOut{}, s.toolError(err)
	}
	params := crtx.ExecuteParams{Task: in.Task, Parameters: in.Parameters, Async: true, TimeoutSeconds: in.TimeoutSeconds, MaxCost: in.MaxCost,
		MaxPrice: in.MaxPrice, Private: in.Private}
	idem, hash := "", ""
	if in.IdempotencyKey != "" {
		if idem, hash, err = callKeys(in); err != nil {
			return nil, runOut{}, s.toolError(err)
		}
	}
	opened, asTask := ctx.Value(asTaskKey{}).(*crtx.Execution)
	var tell *progress
	if !asTask {
		// A call that waits for its run tells its progress, pieces
		// included, when asked.
		tell = s.progress(ctx, req)
		defer tell.stop()
		if tell != nil {
			params.Deltas = tell.deltas
		}
		// A call that waits for its run holds its request open: it takes
		// one of the key's stream slots, as a REST stream does, so that no
		// key holds requests open by the thousand (a stateless server
		// has no sessions to cap). It is taken before any money moves.
		release, err := s.gate.AdmitStream(c.p.Key.ID)
		if err != nil {
			return nil, runOut{}, s.toolError(err)
		}
		defer release()
	}
	e, err := s.market.Executions.Execute(ctx, c.p, in.AgentID, params, idem, hash)
	var replay *crtx.Replay
	if errors.As(err, &replay) {
		e, err = replay.Execution, nil
	}
	if err != nil {
		return nil, runOut{}, s.toolError(err)
	}
	if asTask {
		*opened = e
		return nil, s.out(e), nil
	}
	id := e.ID
	var callID string
	if req.Extra != nil {
		callID = req.Extra.Header.Get(callIDHeader)
	}
	ctx, stop := s.waiting.track(ctx, c.p.Key.ID, callID)
	defer stop()
	e, result, err := s.wait(ctx, c, e, tell)
	if err != nil {
		// Money is held for this execution: whatever went wrong, the
		// caller learns its id, to read it rather than pay again.
		return nil, runOut{}, s.held(err, id)
	}
	return s.answer(e, result)
}

// callKeys are a run_agent call's idempotency key, in MCP's namespace (""
// without idempotency_key), and the hash of the call it stands for: its
// arguments less the key, in their canonical form, so that a client that
// sends them again in another key order is replayed, not refused.
func callKeys(in runIn) (idem, hash string, err error) {
	args := in
	args.IdempotencyKey = ""
	b, err := crtx.Canonical(args)
	if err != nil {
		return "", "", fmt.Errorf("canonical arguments: %w", err)
	}
	if in.IdempotencyKey != "" {
		idem = crtx.MCPKeys + in.IdempotencyKey
	}
	return idem, crtx.RequestHash(in.AgentID, b), nil
}

// wait follows the execution until it is final, telling the client of each
// change of state when it asked for progress (tell). If the client cancels
// the call, an execution still pending is cancelled and refunded; one
// already sent to the creator runs on, and stays charged, as on REST.
func (s *server) wait(ctx context.Context, c caller, e crtx.Execution, tell *progress) (crtx.Execution, string, error) {
	notify := func(e crtx.Execution, _ string) bool {
		tell.state(e)
		return true
	}
	notify(e, "")
	// A replay of a finished run is read once, for its result.
	e, result, err := s.market.Executions.Follow(ctx, e, notify)
	if err != nil && ctx.Err() != nil {
		if _, err := s.market.Executions.Cancel(context.WithoutCancel(ctx), c.p, e.ID); err != nil {
			s.log.Info("mcp call cancelled; its execution runs on", "execution_id", e.ID, "err", err)
		}
	}
	return e, result, err
}

func (s *server) out(e crtx.Execution) runOut {
	r := api.NewExecutionRecord(e, "", s.market.Links())
	return runOut{ExecutionID: e.ID, Status: e.Status, Cost: e.Cost, ResultHash: r.ResultHash, IPFSURL: r.IPFSURL, OnChainRecord: r.OnChainRecord,
		TokensUsed: e.TokensUsed, Metered: r.Metered}
}

// answer is run_agent's answer for a final execution: the result text and
// the structured part, or the execution's error as a tool error.
func (s *server) answer(e crtx.Execution, result string) (*sdk.CallToolResult, runOut, error) {
	if e.Status == crtx.ExecFailed {
		return nil, runOut{}, s.toolError(&crtx.Error{Code: e.ErrorCode, Message: e.ErrorMessage, ExecutionID: e.ID})
	}
	out := s.out(e)
	b, err := json.Marshal(out)
	if err != nil {
		return nil, runOut{}, s.toolError(err)
	}
	// The structured part also as text, for clients that read only text.
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: result}, &sdk.TextContent{Text: string(b)}}}, out, nil
}

// held is an error that came after the execution opened, with its id, so
// that the caller reads the execution rather than pays for another.
func (s *server) held(err error, id string) error {
	var e *crtx.Error
	if !errors.As(err, &e) {
		s.toolError(err) // logged there
		e = crtx.Errorf(crtx.CodeInternal, "internal error while following the execution; read it with get_execution")
	}
	c := *e
	c.ExecutionID = id
	return s.toolError(&c)
}
