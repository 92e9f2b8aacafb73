// Package creator is the Go SDK for a creator's execution service: an
// http.Handler for POST /execute that runs your function, hashes and signs
// its result exactly as the marketplace verifies it, answers "failed" before
// the marketplace's deadline, answers a repeated execution_id with its first
// answer, and can refuse requests the marketplace did not sign.
//
//	key, _ := keyfile.LoadOrCreate("agent-key.json")
//	h := creator.NewHandler(key, func(ctx context.Context, r creator.Request) (string, int, error) {
//		return strings.ToUpper(r.Task), 0, nil
//	}, creator.Options{})
//	http.Handle("POST /execute", h)
//
// A language model's words can go out as it writes them: NewStreamHandler
// runs a function that yields pieces, sends each as it comes, and signs
// them joined (docs/creators.md, "Streaming").
package creator

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/crtx-market/crtx"
)

// Request is one task from the marketplace.
type Request struct {
	ExecutionID    string
	Task           string
	Parameters     json.RawMessage
	UserPubkey     string
	TimeoutSeconds int
	// AgentID is the listing the request is for (X-Crtx-Agent-Id); "" for
	// the reachability test of a new listing and the Test Execution tool.
	AgentID string
	// Environment is "mainnet" or "devnet" (X-Crtx-Environment).
	Environment string
	// Test is true for the marketplace's reachability and test requests
	// (X-Crtx-Test: true), which no caller pays for.
	Test bool
	// MaxTokens is, for a metered listing's call, the most tokens the
	// caller's hold pays for (usage above it is not charged); 0 for a
	// price per call.
	MaxTokens int64
}

// Func does the work. A nil error means completed with result; an error
// means failed, with the error's text as the description (one that wraps
// ErrInvalidInput says the caller's input was at fault). tokens is
// reported to the caller, and signed, when it is above zero (or always,
// with Options.Metered).
type Func func(ctx context.Context, req Request) (result string, tokens int, err error)

// ErrInvalidInput, matched by a Func's error, says the call failed for its
// input rather than the agent: the caller gets a 400 invalid_input, and
// the failure is counted apart from the agent's. InvalidInput makes one.
var ErrInvalidInput = errors.New("invalid input")

// InvalidInput is an error that says, in words, what was wrong with the
// call's input, and matches ErrInvalidInput:
//
//	return "", 0, creator.InvalidInput("delimiter must be one character")
func InvalidInput(words string) error {
	if words == "" {
		words = "invalid input"
	}
	return invalidInput(words)
}

type invalidInput string

func (e invalidInput) Error() string        { return string(e) }
func (e invalidInput) Is(target error) bool { return target == ErrInvalidInput }

// StreamFunc does the work as a stream: each piece given to yield goes to
// the marketplace as it is written, and the result is the pieces joined. A
// nil error means completed; an error means failed, with its text as the
// description (the pieces already sent are then no result). tokens is
// reported when it is above zero.
type StreamFunc func(ctx context.Context, req Request, yield func(piece string)) (tokens int, err error)

// Options tune a Handler; the zero value works.
type Options struct {
	// MarketplaceKey, when set, makes the handler refuse (401) requests
	// whose X-Crtx-Signature does not verify against it, and (403) requests
	// signed for another signing key or, with AgentIDs, another agent.
	// FetchMarketplaceKey reads it from the marketplace.
	MarketplaceKey ed25519.PublicKey
	// Marketplace, set instead of MarketplaceKey, is the marketplace's URL:
	// its keys are read from its /.well-known/crtx.json at the first
	// request, and read again, at most once a minute, when a signature
	// verifies against none of them. The next key a marketplace publishes
	// before rotating its own is accepted beside the current one, so a
	// rotation passes without a refused call.
	Marketplace string
	// AgentIDs, when set, are the listings this service serves: a signed
	// request for any other agent is refused (403). A test request that
	// names no agent (a new listing's reachability test, the Test Execution
	// tool) is still served when it is for this handler's key.
	AgentIDs []string
	// MaxSkew is how far X-Crtx-Timestamp may be from now when signatures
	// are checked; 0 means 5 minutes.
	MaxSkew time.Duration
	// Margin is how long before timeout_seconds runs out the handler gives
	// up and answers failed; 0 means a tenth of the timeout, between 200 ms
	// and 2 s.
	Margin time.Duration
	// Remember is how many answers are kept to answer repeated execution
	// ids; 0 means 10,000.
	Remember int
	// Metered is for a metered listing (docs/creators.md, "Metered
	// listings"): every completed reply reports its tokens, 0 too, and
	// signs them (usage_signature), which the marketplace charges from.
	// Without it, a reply that reports tokens signs them all the same.
	Metered bool
	Now     func() time.Time
}

// Handler serves POST /execute.
type Handler struct {
	key  ed25519.PrivateKey
	fn   StreamFunc
	opts Options
	// streams is true for NewStreamHandler's: it answers a request that
	// accepts text/event-stream with its pieces as they come.
	streams bool
	market  *marketKeys // nil: requests are not checked

	mu      sync.Mutex
	answers map[string]*answer
	order   []string
}

type answer struct {
	done chan struct{}
	body []byte
}

// NewHandler returns the handler that runs fn and signs with key.
func NewHandler(key ed25519.PrivateKey, fn Func, opts Options) *Handler {
	return newHandler(key, func(ctx context.Context, req Request, yield func(string)) (int, error) {
		result, tokens, err := fn(ctx, req)
		if err == nil {
			yield(result)
		}
		return tokens, err
	}, false, opts)
}

// NewStreamHandler returns the handler that runs fn, streams its pieces to
// a marketplace that accepts a stream (and answers one JSON reply to one
// that does not), and signs them joined with key.
func NewStreamHandler(key ed25519.PrivateKey, fn StreamFunc, opts Options) *Handler {
	return newHandler(key, fn, true, opts)
}

func newHandler(key ed25519.PrivateKey, fn StreamFunc, streams bool, opts Options) *Handler {
	if opts.MaxSkew == 0 {
		opts.MaxSkew = 5 * time.Minute
	}
	if opts.Remember == 0 {
		opts.Remember = 10_000
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	h := &Handler{key: key, fn: fn, streams: streams, opts: opts, answers: map[string]*answer{}}
	switch {
	case opts.MarketplaceKey != nil:
		h.market = &marketKeys{keys: []ed25519.PublicKey{opts.MarketplaceKey}}
	case opts.Marketplace != "":
		h.market = &marketKeys{url: strings.TrimRight(opts.Marketplace, "/"), now: opts.Now}
	}
	return h
}

// PublicKey is the base58 signing public key to register in the listing.
func (h *Handler) PublicKey() string { return crtx.Address(h.key.Public().(ed25519.PublicKey)) }

const maxBody = 1 << 20

func refuse(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		refuse(w, http.StatusMethodNotAllowed, "use POST")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		refuse(w, http.StatusRequestEntityTooLarge, "the request is too large")
		return
	}
	if h.market != nil {
		if status, err := h.checkSignature(r, body); err != nil {
			refuse(w, status, err.Error())
			return
		}
	}
	var in crtx.CreatorRequest
	if err := json.Unmarshal(body, &in); err != nil || in.ExecutionID == "" {
		refuse(w, http.StatusBadRequest, "the body is not a creator execution request")
		return
	}
	a, first := h.claim(in.ExecutionID)
	if first && h.streams && accepts(r, "text/event-stream") {
		h.stream(w, r, in, a)
		return
	}
	if first {
		a.body = h.run(r.Context(), in, r.Header, nil)
		close(a.done)
	} else {
		select {
		case <-a.done:
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(a.body)
}

// checkSignature checks that the marketplace signed the request, for this
// handler's key and one of its agents, with the environment and test flag
// it carries (docs/creators.md, "Requests from the marketplace").
func (h *Handler) checkSignature(r *http.Request, body []byte) (int, error) {
	ts := r.Header.Get(crtx.HeaderTimestamp)
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return http.StatusUnauthorized, errors.New("missing or malformed " + crtx.HeaderTimestamp)
	}
	if d := h.opts.Now().Sub(time.Unix(sec, 0)); d > h.opts.MaxSkew || d < -h.opts.MaxSkew {
		return http.StatusUnauthorized, errors.New(crtx.HeaderTimestamp + " is too far from now")
	}
	s := scope(r.Header)
	ok, err := h.market.verify(r.Context(), func(k ed25519.PublicKey) bool {
		return crtx.VerifyRequestSignature(k, s, ts, body, r.Header.Get(crtx.HeaderSignature))
	})
	if err != nil {
		return http.StatusServiceUnavailable, fmt.Errorf("the marketplace key is unavailable: %w", err)
	}
	if !ok {
		return http.StatusUnauthorized, errors.New(crtx.HeaderSignature + " does not verify against the marketplace key")
	}
	if s.SigningKey != h.PublicKey() {
		return http.StatusForbidden, errors.New("the request is for another signing key (" + crtx.HeaderSigningKey + ")")
	}
	if s.Environment != crtx.Mainnet && s.Environment != crtx.Devnet {
		return http.StatusForbidden, errors.New(crtx.HeaderEnvironment + " is neither mainnet nor devnet")
	}
	if s.AgentID == "" {
		if !s.Test {
			return http.StatusForbidden, errors.New("a request that names no agent (" + crtx.HeaderAgentID + ") must be a test")
		}
		return 0, nil
	}
	if len(h.opts.AgentIDs) > 0 && !slices.Contains(h.opts.AgentIDs, s.AgentID) {
		return http.StatusForbidden, errors.New("the request is for another agent (" + crtx.HeaderAgentID + ")")
	}
	return 0, nil
}

// scope reads what a request says it is for from its headers.
func scope(h http.Header) crtx.RequestScope {
	return crtx.RequestScope{AgentID: h.Get(crtx.HeaderAgentID), SigningKey: h.Get(crtx.HeaderSigningKey),
		Environment: crtx.Environment(h.Get(crtx.HeaderEnvironment)), Test: h.Get(crtx.HeaderTest) == "true"}
}

// claim returns the answer slot of an execution id and whether this
// request is the first to ask, forgetting the oldest answers past Remember.
func (h *Handler) claim(id string) (*answer, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if a, ok := h.answers[id]; ok {
		return a, false
	}
	a := &answer{done: make(chan struct{})}
	h.answers[id] = a
	h.order = append(h.order, id)
	for len(h.order) > h.opts.Remember {
		delete(h.answers, h.order[0])
		h.order = h.order[1:]
	}
	return a, true
}

func (h *Handler) margin(timeout time.Duration) time.Duration {
	if h.opts.Margin > 0 {
		return h.opts.Margin
	}
	return min(max(timeout/10, 200*time.Millisecond), 2*time.Second)
}

// run calls fn with a deadline just short of the marketplace's and builds
// the signed reply; each piece fn yields is given to sent (when not nil),
// in this goroutine, until fn returns or the deadline passes.
func (h *Handler) run(ctx context.Context, in crtx.CreatorRequest, hdr http.Header, sent func(string)) []byte {
	timeout := time.Duration(in.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	// The work outlives this request if the marketplace hangs up, so that a
	// retry with the same execution id finds the answer.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout-h.margin(timeout))
	defer cancel()
	s := scope(hdr)
	req := Request{ExecutionID: in.ExecutionID, Task: in.Task, Parameters: in.Parameters, UserPubkey: in.UserPubkey,
		TimeoutSeconds: in.TimeoutSeconds, AgentID: s.AgentID, Environment: string(s.Environment), Test: s.Test}
	if in.MaxTokens != nil {
		req.MaxTokens = *in.MaxTokens
	}
	type outcome struct {
		tokens int
		err    error
	}
	done := make(chan outcome, 1)
	p := &pieces{more: make(chan struct{}, 1)}
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- outcome{err: fmt.Errorf("the agent crashed: %v", r)}
			}
		}()
		tokens, err := h.fn(ctx, req, p.add)
		done <- outcome{tokens, err}
	}()
	var o outcome
	give := func() {
		for _, s := range p.since() {
			if sent != nil {
				sent(s)
			}
		}
	}
wait:
	for {
		select {
		case <-p.more:
			give()
		case o = <-done:
			break wait
		case <-ctx.Done():
			o.err = fmt.Errorf("the agent did not finish within %s", timeout-h.margin(timeout))
			break wait
		}
	}
	// The pieces end here: the result is those yielded before, each of
	// them sent, so that what is signed is what the marketplace got.
	result := p.end()
	give()
	reply := crtx.CreatorReply{ExecutionID: in.ExecutionID}
	if o.err != nil {
		msg := o.err.Error()
		reply.Status, reply.Error = "failed", &msg
		if errors.Is(o.err, ErrInvalidInput) {
			code := crtx.CodeInvalidInput
			reply.ErrorCode = &code
		}
	} else {
		hash := crtx.ResultHash(result)
		sig := crtx.SignResult(h.key, hash)
		reply.Status, reply.Result, reply.ResultHash, reply.Signature = "completed", &result, &hash, &sig
		if o.tokens > 0 || h.opts.Metered {
			t := int64(max(o.tokens, 0))
			usage := crtx.SignUsage(h.key, in.ExecutionID, hash, t)
			reply.TokensUsed, reply.UsageSignature = &t, &usage
		}
	}
	b, _ := json.Marshal(reply)
	return b
}
