package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"sync"
)

// A 2025 client cancels a call with notifications/cancelled, sent in a
// request of its own, naming the call's JSON-RPC id; the official
// TypeScript SDK leaves the call's own request open. A stateless server
// has no session to find the call in, so this process keeps the calls that
// wait for a run by their API key and id, and the notification cancels the
// one it names: a run still pending is cancelled and refunded, as the call's
// request ending would. The key scopes the ids, which each client numbers
// from zero: a notification reaches only its own key's calls. A
// notification that reaches another replica than the call's is passed on
// to the others as a signal (market.Signal, over PostgreSQL's
// LISTEN/NOTIFY), and the replica holding the call cancels it. Like a
// change of state, a signal is best effort: one lost (a publisher far
// behind, a call id too long to send) leaves the run to go on, charged
// once, as a cancellation that arrives too late does.

// cancelSignal is the kind of signal that carries a cancellation: the
// key's id and the call's id, base64url, separated by a slash.
const cancelSignal = "mcpcancel"

// cancelSignalled cancels the call a signal names.
func (w *waiting) cancelSignalled(payload string) {
	key, enc, ok := strings.Cut(payload, "/")
	id, err := base64.RawURLEncoding.DecodeString(enc)
	if ok && err == nil {
		w.cancel(key, string(id))
	}
}

// waiting holds this process's calls waiting for their runs.
type waiting struct {
	mu    sync.Mutex
	calls map[waitingCall][]*context.CancelFunc
}

type waitingCall struct{ key, id string }

// callID is a JSON-RPC id in one form whatever its JSON spelling (a number
// or a string); false for none.
func callID(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	b, _ := json.Marshal(v)
	return string(b), true
}

// track makes ctx cancellable by a notification naming key's call id,
// until stop.
func (w *waiting) track(ctx context.Context, key, id string) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	if id == "" {
		return ctx, cancel
	}
	c, entry := waitingCall{key, id}, &cancel
	w.mu.Lock()
	w.calls[c] = append(w.calls[c], entry)
	w.mu.Unlock()
	return ctx, func() {
		cancel()
		w.mu.Lock()
		defer w.mu.Unlock()
		if rest := slices.DeleteFunc(w.calls[c], func(e *context.CancelFunc) bool { return e == entry }); len(rest) > 0 {
			w.calls[c] = rest
		} else {
			delete(w.calls, c)
		}
	}
}

// cancel cancels key's calls of id, and says whether it found any. The SDK handles notifications/cancelled
// itself, before any middleware, matching only calls of the request's own
// (ephemeral) session, so liftTask calls this from the HTTP request.
func (w *waiting) cancel(key, id string) (found bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, cancel := range w.calls[waitingCall{key, id}] {
		(*cancel)()
		found = true
	}
	return found
}
