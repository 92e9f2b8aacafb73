package a2a

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/gate"
)

// pollInterval is how often a message waits to be sent again while its
// first sending still runs.
const pollInterval = 100 * time.Millisecond

// SendMessage runs the agent on the message. By default it answers when
// the task is final, as a synchronous REST execute does; with
// configuration.returnImmediately it answers the task as soon as it is
// paid for and queued. A message sent again (same messageId, same content)
// is answered with its first task, never charged twice.
func (t *tasks) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	c, err := callFrom(ctx)
	if err != nil {
		return nil, err
	}
	async := req.Config != nil && req.Config.ReturnImmediately
	e, result, err := t.send(ctx, c, req, async, nil)
	if err == nil && !async && !e.Status.Final() {
		// A replay of a message first sent without waiting: wait now, as
		// a stream does.
		e, result, err = t.wait(ctx, c, e)
	}
	if err != nil {
		return nil, t.protocolError(ctx, c, err)
	}
	return t.task(e, result, req.Message.ContextID, true), nil
}

// SendStreamingMessage runs the agent on the message in the background and
// streams its task: the task first, then each change of state, the result
// as an artifact just before the final completed state.
func (t *tasks) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		c, err := callFrom(ctx)
		if err != nil {
			yield(nil, err)
			return
		}
		// Refused before the message is paid for, not after.
		release, err := t.gate.AdmitStream(c.principal.Key.ID)
		if err != nil {
			yield(nil, t.protocolError(ctx, c, err))
			return
		}
		defer release()
		// A streaming creator's pieces come from the goroutine that runs
		// the call, which never waits on this client, while this one
		// yields: they meet in a relay.
		pieces := gate.NewRelay()
		e, result, err := t.send(ctx, c, req, true, pieces.Add)
		if err != nil {
			yield(nil, t.protocolError(ctx, c, err))
			return
		}
		if !yield(t.task(e, result, req.Message.ContextID, true), nil) {
			return
		}
		t.follow(ctx, c, e, req.Message.ContextID, yield, pieces)
	}
}

// wait follows e until it is final, within the key's streams.
func (t *tasks) wait(ctx context.Context, c call, e crtx.Execution) (crtx.Execution, string, error) {
	release, err := t.gate.AdmitStream(c.principal.Key.ID)
	if err != nil {
		return e, "", err
	}
	defer release()
	return t.m.Executions.Follow(ctx, e, nil)
}

// send opens the execution a message asks for, or finds the one it opened
// when first sent, and returns it with its result if it has one.
func (t *tasks) send(ctx context.Context, c call, req *a2a.SendMessageRequest, async bool, deltas func(executionID, text string)) (crtx.Execution, string, error) {
	var push *crtx.PushConfig
	if req.Config != nil {
		if req.Config.PushConfig != nil {
			// Checked before anything is paid; set once the task exists.
			p := fromPushConfig(req.Config.PushConfig)
			if err := t.m.Connectors.CheckPushConfig(ctx, p); err != nil {
				return crtx.Execution{}, "", err
			}
			push = &p
		}
		if !acceptable(req.Config.AcceptedOutputModes) {
			return crtx.Execution{}, "", a2a.NewError(a2a.ErrUnsupportedContentType,
				"this agent answers text/plain and application/json, which acceptedOutputModes leaves out")
		}
	}
	o, err := readMessage(c.agentID, req.Message)
	if err != nil {
		return crtx.Execution{}, "", err
	}
	o.params.Async, o.params.Deltas = async, deltas
	e, result, opened, err := t.open(ctx, c, o)
	if err == nil && opened && push != nil {
		// The message's own config, set once: a message sent again (the
		// same messageId answers the same task) leaves it as the first send
		// set it, delivered or not. It is set even when the client has gone,
		// which is when a push is wanted, and its failure (it was checked
		// already) leaves the paid task to be read as ever.
		push.TaskID = e.ID
		if _, perr := t.m.Connectors.SetPushConfig(context.WithoutCancel(ctx), c.principal, *push); perr != nil {
			t.log.WarnContext(ctx, "a2a push config of a message", "execution_id", e.ID, "err", perr)
		}
	}
	return e, result, err
}

// open opens the execution o asks for, or finds the one it opened when
// first sent, and says whether it opened it now (false for a message sent
// again).
func (t *tasks) open(ctx context.Context, c call, o order) (_ crtx.Execution, _ string, opened bool, _ error) {
	for {
		e, err := t.m.Executions.Execute(ctx, c.principal, c.agentID, o.params, o.key, o.hash)
		var replay *crtx.Replay
		switch {
		case errors.As(err, &replay):
			e, result, err := t.m.Executions.GetExecution(ctx, c.principal, replay.Execution.ID)
			return e, result, false, err
		case crtx.ErrorCode(err) == crtx.CodeIdempotencyInProgress:
			// The first send of this message still runs synchronously and
			// its execution id is not known here: wait for it to end.
			select {
			case <-ctx.Done():
				return crtx.Execution{}, "", false, err
			case <-time.After(pollInterval):
			}
			continue
		case err != nil:
			return crtx.Execution{}, "", false, err
		case e.ResultCID != "" && e.Result == "":
			// Settled by another path than this call's: read the result.
			e, result, err := t.m.Executions.GetExecution(ctx, c.principal, e.ID)
			return e, result, true, err
		}
		return e, e.Result, true, nil
	}
}

// acceptable reports whether a client's accepted output modes (none means
// any) admit one of the two this agent answers in.
func acceptable(modes []string) bool {
	if len(modes) == 0 {
		return true
	}
	return slices.ContainsFunc(modes, func(m string) bool {
		m, _, _ = strings.Cut(strings.ToLower(strings.TrimSpace(m)), ";")
		switch strings.TrimSpace(m) {
		case "text/plain", "application/json", "text/*", "application/*", "*/*", "*":
			return true
		}
		return false
	})
}
