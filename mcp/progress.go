package mcp

import (
	"context"
	"log/slog"
	"sync"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/gate"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// progress tells a client that asked for progress (a progress token) how
// its run goes: 1 of 3 pending, 2 of 3 running, then, if the creator
// streams, each piece of the result as the message of progress 3, 4, …
// (the total unknown, as a stream's length is), and the final state last,
// its progress the total. A notification that would not move progress on
// (a state seen after pieces came) is not sent: MCP's progress only
// increases (specification, "Progress"). The pieces come through a relay
// (Deltas): the goroutine that runs the call never waits on this client.
type progress struct {
	ctx    context.Context
	req    *sdk.CallToolRequest
	token  any
	log    *slog.Logger
	relay  *gate.Relay
	finish func()

	mu     sync.Mutex
	last   float64
	pieces int
}

// progress is nil for a call that asked for none; stop ends its relay.
func (s *server) progress(ctx context.Context, req *sdk.CallToolRequest) *progress {
	token := req.Params.GetProgressToken()
	if token == nil {
		return nil
	}
	p := &progress{ctx: ctx, req: req, token: token, log: s.log, relay: gate.NewRelay()}
	p.finish = p.relay.Start(ctx, p.piece)
	return p
}

// deltas is ExecuteParams.Deltas.
func (p *progress) deltas(executionID, text string) { p.relay.Add(executionID, text) }

// stop ends the relay once every piece it holds is told.
func (p *progress) stop() {
	if p != nil {
		p.finish()
	}
}

// stateProgress is where a state not final stands.
func stateProgress(s crtx.ExecStatus) (float64, bool) {
	switch s {
	case crtx.ExecPending:
		return 1, true
	case crtx.ExecRunning:
		return 2, true
	}
	return 0, false
}

// state tells the execution's state; a final one after every piece.
func (p *progress) state(e crtx.Execution) {
	if p == nil {
		return
	}
	v, ok := stateProgress(e.Status)
	if !ok {
		// The call sent its pieces before it closed: they are all in the
		// relay, and go first.
		p.stop()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	total := 3.0
	if !ok {
		v = 3 + float64(p.pieces)
		total = v
	}
	p.send(v, total, "execution "+e.ID+" is "+string(e.Status))
}

// piece tells a piece of the result.
func (p *progress) piece(piece gate.Piece) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pieces++
	p.send(2+float64(p.pieces), 0, piece.Text)
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
