package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sync"

	"github.com/crtx-market/crtx"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessions caps the MCP sessions one API key, and one wallet, keeps open.
// Each session holds goroutines and memory for its idle timeout; without a
// cap one key could open them by the thousand. When a new session would pass
// a cap, the session of that key (or wallet) idle the longest is ended; when
// every one is busy with a request, the new one is refused (429).
//
// The SDK keeps sessions but offers no hook to count or end them, so this
// sits in front of it: it sees each POST that opens a session (an
// initialize, without Mcp-Session-Id), learns the session from the
// initialize, and sees each later request by the session's id. A session
// ended here answers 404, as one the SDK ended does. Idle means no POST in
// flight, as for the SDK's idle timeout; an open GET stream does not count.
type sessions struct {
	perKey, perWallet int

	mu       sync.Mutex
	byKey    map[string][]*slot
	byWallet map[string][]*slot
	byID     map[string]*slot
	tick     uint64 // orders the ends of requests, for idleness
}

// slot is one session, from the POST that opens it until it ends.
type slot struct {
	key, wallet string
	session     *sdk.ServerSession // nil until its initialize succeeds
	busy        int                // POSTs in flight, the opening one included
	last        uint64             // tick of its last request's end
}

func newSessions(perKey, perWallet int) *sessions {
	return &sessions{perKey: perKey, perWallet: perWallet,
		byKey: map[string][]*slot{}, byWallet: map[string][]*slot{}, byID: map[string]*slot{}}
}

// guard takes a slot for a POST that opens a session, or refuses it, and
// counts the requests of open sessions.
func (s *server) guard(next http.Handler) http.Handler {
	t, api := s.sessions, s.api
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := r.Context().Value(callerKey{}).(caller)
		id, post := r.Header.Get("Mcp-Session-Id"), r.Method == http.MethodPost
		var sl *slot
		switch {
		case id != "":
			if sl = t.use(id, post); sl == nil {
				api.WriteError(w, r, crtx.Errorf(crtx.CodeNotFound,
					"no such MCP session: it ended (closed, idle too long, or the one idle the longest past its key's or wallet's cap); initialize a new one"))
				return
			}
		case post && initializes(r):
			var ended []*slot
			var err error
			if sl, ended, err = t.reserve(c.p.Key.ID, c.p.Wallet); err != nil {
				api.WriteError(w, r, err)
				return
			}
			for _, e := range ended {
				// Close waits for the session's calls in flight, which an
				// idle session may still have when its client went away.
				go e.session.Close()
			}
			c.open = sl
			r = r.WithContext(context.WithValue(r.Context(), callerKey{}, c))
		default:
			// No session outlives it: the SDK ends, with the request, a
			// session that no initialize opened.
			next.ServeHTTP(w, r)
			return
		}
		defer t.done(sl, post)
		next.ServeHTTP(w, r)
	})
}

// initializes reports whether a POST's body holds an initialize, alone or
// in a batch; the body is left to be read again.
func initializes(r *http.Request) bool {
	b, err := io.ReadAll(r.Body) // bounded by the server's body limit
	r.Body = io.NopCloser(bytes.NewReader(b))
	if err != nil {
		return false
	}
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '{' {
		b = append(append([]byte{'['}, b...), ']')
	}
	var msgs []struct {
		Method string `json:"method"`
	}
	json.Unmarshal(b, &msgs) // a body that is no JSON-RPC initializes nothing
	for _, m := range msgs {
		if m.Method == "initialize" {
			return true
		}
	}
	return false
}

// reserve takes a busy slot for a new session of key and wallet, ending
// the oldest idle session of each that is at its cap.
func (t *sessions) reserve(key, wallet string) (*slot, []*slot, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var ended []*slot
	for _, c := range []struct {
		of   []*slot
		max  int
		what string
	}{{t.byKey[key], t.perKey, "this API key"}, {t.byWallet[wallet], t.perWallet, "this API key's wallet"}} {
		open := slices.DeleteFunc(slices.Clone(c.of), func(s *slot) bool { return slices.Contains(ended, s) })
		if c.max <= 0 || len(open) < c.max {
			continue
		}
		var oldest *slot
		for _, s := range open {
			if s.busy == 0 && s.session != nil && (oldest == nil || s.last < oldest.last) {
				oldest = s
			}
		}
		if oldest == nil {
			e := crtx.Errorf(crtx.CodeRateLimited, "%s has %d MCP sessions open, its limit, and every one is busy with a request; end one (DELETE /mcp with its Mcp-Session-Id) or try again when one is done", c.what, c.max)
			e.RetryAfter = 1
			return nil, nil, e
		}
		ended = append(ended, oldest)
	}
	for _, s := range ended {
		t.remove(s)
	}
	s := &slot{key: key, wallet: wallet, busy: 1}
	t.byKey[key] = append(t.byKey[key], s)
	t.byWallet[wallet] = append(t.byWallet[wallet], s)
	return s, ended, nil
}

// open records the session a slot's initialize opened; the slot is let go
// when the session ends, however it ends.
func (t *sessions) open(s *slot, ss *sdk.ServerSession) {
	t.mu.Lock()
	s.session = ss
	t.byID[ss.ID()] = s
	t.mu.Unlock()
	go func() {
		ss.Wait()
		t.mu.Lock()
		defer t.mu.Unlock()
		t.remove(s)
	}()
}

// use finds an open session's slot, counting a POST as busy.
func (t *sessions) use(id string, post bool) *slot {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.byID[id]
	if s != nil && post {
		s.busy++
	}
	return s
}

// done ends a request; a slot whose opening POST opened no session is let go.
func (t *sessions) done(s *slot, post bool) {
	if !post {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tick++
	s.busy--
	s.last = t.tick
	if s.session == nil {
		t.remove(s)
	}
}

// remove lets a slot go; removing one twice is harmless.
func (t *sessions) remove(s *slot) {
	drop := func(m map[string][]*slot, k string) {
		if rest := slices.DeleteFunc(m[k], func(x *slot) bool { return x == s }); len(rest) > 0 {
			m[k] = rest
		} else {
			delete(m, k)
		}
	}
	drop(t.byKey, s.key)
	drop(t.byWallet, s.wallet)
	if s.session != nil && t.byID[s.session.ID()] == s {
		delete(t.byID, s.session.ID())
	}
}

// opened is receiving middleware: an initialize that succeeds on a POST
// that took a slot gives the slot its session. An initialize without a
// slot (one guard did not read as such) opens nothing: every session is
// counted.
func (t *sessions) opened(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method != "initialize" {
			return next(ctx, method, req)
		}
		c, err := callerOf(ctx)
		ss, ok := req.GetSession().(*sdk.ServerSession)
		if err != nil || !ok || c.open == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "initialize opens a session: send it in a POST of its own, without Mcp-Session-Id"}
		}
		res, err := next(ctx, method, req)
		if err == nil {
			t.open(c.open, ss)
		}
		return res, err
	}
}
