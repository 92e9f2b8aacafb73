package mcp

import (
	"context"
	"log/slog"
	"sync"

	"github.com/crtx-market/crtx"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// progress tells a client that asked for progress (a progress token) how
// its run goes: 1 of 3 pending, 2 of 3 running, then, if the creator
// streams, each piece of the result as the message of progress 3, 4, …
// (the total unknown, as a stream's length is), and the final state last,
// its progress the total. A notification that would not move progress on
// (a state seen after pieces came) is not sent: MCP's progress only
// increases (specification, "Progress").
type progress struct {
	ctx   context.Context
	req   *sdk.CallToolRequest
	token any
	log   *slog.Logger

	mu     sync.Mutex
	last   float64
	pieces int
}

// progress is nil for a call that asked for none.
func (s *server) progress(ctx context.Context, req *sdk.CallToolRequest) *progress {
	token := req.Params.GetProgressToken()
	if token == nil {
		return nil
	}
	return &progress{ctx: ctx, req: req, token: token, log: s.log}
}

var states = map[crtx.ExecStatus]float64{crtx.ExecPending: 1, crtx.ExecRunning: 2}

// state tells the execution's state.
func (p *progress) state(e crtx.Execution) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := states[e.Status]
	total := 3.0
	if !ok {
		v = 3 + float64(p.pieces)
		total = v
	}
	p.send(v, total, "execution "+e.ID+" is "+string(e.Status))
}

// piece tells a piece of the result; it is ExecuteParams.Deltas.
func (p *progress) piece(_, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pieces++
	p.send(2+float64(p.pieces), 0, text)
}

// send sends one notification, under p.mu, if it moves progress on.
func (p *progress) send(v, total float64, msg string) {
	if v <= p.last || p.ctx.Err() != nil {
		return
	}
	p.last = v
	if err := p.req.Session.NotifyProgress(p.ctx, &sdk.ProgressNotificationParams{ProgressToken: p.token, Progress: v, Total: total, Message: msg}); err != nil {
		p.log.Debug("mcp progress", "err", err)
	}
}
