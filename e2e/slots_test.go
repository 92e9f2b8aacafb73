package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/daemon"
)

// hanging is a creator service that answers no call until released —
// all at once, or those of one task (open) — or until the marketplace gives
// up on it, and counts the requests it gets by task (the creator SDK
// answers a repeated execution id itself, so they are counted before it).
type hanging struct {
	service
	release func()
	mu      sync.Mutex
	calls   map[string]int
	gates   map[string]chan struct{}
}

func newHanging(t *testing.T) *hanging {
	h := &hanging{calls: map[string]int{}, gates: map[string]chan struct{}{}}
	released := make(chan struct{})
	h.release = sync.OnceFunc(func() { close(released) })
	key := agentKey()
	sdk := creator.NewHandler(key, func(ctx context.Context, r creator.Request) (string, int, error) {
		if r.Test {
			return "ok", 0, nil
		}
		select {
		case <-released:
		case <-h.gate(r.Task):
		case <-ctx.Done():
		}
		return "late " + r.Task, 0, nil
	}, creator.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req crtx.CreatorRequest
		json.Unmarshal(body, &req)
		h.mu.Lock()
		h.calls[req.Task]++
		h.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		sdk.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	// Released before its server closes, which waits for the calls.
	t.Cleanup(h.release)
	h.service = service{URL: srv.URL, Key: key, PubKey: sdk.PublicKey()}
	return h
}

func (h *hanging) gate(task string) chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	g, ok := h.gates[task]
	if !ok {
		g = make(chan struct{})
		h.gates[task] = g
	}
	return g
}

// open answers the calls of task, those to come too.
func (h *hanging) open(task string) { close(h.gate(task)) }

// count is how many calls of task the service got; of every task but the
// reachability test, for "".
func (h *hanging) count(task string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if task != "" {
		return h.calls[task]
	}
	n := 0
	for t, c := range h.calls {
		if t != "crtx reachability test" {
			n += c
		}
	}
	return n
}

// until waits, within the test's bound, for cond to hold.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s", what)
		}
	}
}

// otherCaller is a new wallet holding funds USDC on each environment, and
// an API key of it for each.
func (m *marketplace) otherCaller(funds string) (devnet, mainnet *client.Client) {
	m.t.Helper()
	w := newWallet(m.t)
	if _, err := m.anon.Airdrop(ctx, w.address, usdc(funds)); err != nil {
		m.t.Fatal(err)
	}
	if _, err := m.admin.Deposit(ctx, crtx.Mainnet, w.address, usdc(funds)); err != nil {
		m.t.Fatal(err)
	}
	s := m.signIn(w)
	for _, env := range crtx.Environments {
		k, err := s.CreateKey(ctx, client.KeyParams{Name: string(env), Environment: env})
		if err != nil {
			m.t.Fatal(err)
		}
		runLogs.secret(k.Key, w.address)
		if env == crtx.Devnet {
			devnet = m.anon.WithToken(k.Key)
		} else {
			mainnet = m.anon.WithToken(k.Key)
		}
	}
	return devnet, mainnet
}

// A wallet that fills the dispatch slots with asynchronous calls to its own
// agent, which never answers, holds only its share of them: every other
// wallet's calls, on devnet and on mainnet, still run. Its own next
// synchronous call is refused at once, charged nothing, instead of waiting
// past its timeout for a slot.
func TestDispatchSlotsAreShared(t *testing.T) {
	// 8 slots: a quarter of them kept for each environment, a quarter the
	// most one creator or one wallet holds in one.
	m := newMarket(t, "10", func(c *daemon.Config) { c.MaxDispatches = 8 })
	trap := newHanging(t)
	trapAgent := m.list(trap.service, "0.0001", map[string]any{"timeout_seconds": 300})
	var held []string
	for i := range 10 {
		acc, err := m.key.Execute(ctx, trapAgent, crtx.ExecuteParams{Task: "hold " + strconv.Itoa(i), Async: true, TimeoutSeconds: ptr(300)}, client.ExecuteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, acc.ExecutionID)
	}
	until(t, "the attacker's calls to hold their share of the slots", func() bool {
		n := 0
		for i := range 10 {
			n += trap.count("hold " + strconv.Itoa(i))
		}
		return n >= 2
	})
	// Given the time to take more, it holds no more than its share.
	time.Sleep(100 * time.Millisecond)
	if n := trap.count(""); n != 2 {
		t.Errorf("the attacker's calls hold %d slots, want their share, 2", n)
	}

	_, otherCreator := m.creatorOf("10000")
	honest, err := list(otherCreator, params(newService(t, echo), "0.1"))
	if err != nil {
		t.Fatal(err)
	}
	devnet, mainnet := m.otherCaller("10")
	for _, key := range []*client.Client{devnet, mainnet} {
		rec, err := key.Execute(ctx, honest.AgentID, crtx.ExecuteParams{Task: "mine", TimeoutSeconds: ptr(5)}, client.ExecuteOptions{})
		if err != nil || rec.Status != crtx.ExecCompleted {
			t.Fatalf("another wallet's call while the attacker holds its share: %+v, %v", rec, err)
		}
	}

	before := m.balance(m.callerW, crtx.Devnet)
	_, err = m.key.Execute(ctx, trapAgent, crtx.ExecuteParams{Task: "one more"}, client.ExecuteOptions{})
	if ce := wantCode(t, err, 503, "unavailable"); ce.RetryAfter == "" || ce.ExecutionID != nil {
		t.Errorf("refused synchronous call: Retry-After %q, execution %v", ce.RetryAfter, ce.ExecutionID)
	}
	if after := m.balance(m.callerW, crtx.Devnet); after != before {
		t.Errorf("a refused call moved money: %+v, was %+v", after, before)
	}
	if n := trap.count("one more"); n != 0 {
		t.Errorf("the refused call reached the creator %d times", n)
	}
	// Once the agent answers, those that waited run, each once.
	trap.release()
	for i, id := range held {
		if rec, err := m.key.Wait(bounded(t), id, 20*time.Millisecond); err != nil || rec.Status != crtx.ExecCompleted {
			t.Fatalf("execution %s: %+v, %v", id, rec, err)
		}
		if n := trap.count("hold " + strconv.Itoa(i)); n != 1 {
			t.Errorf("hold %d reached the creator %d times", i, n)
		}
	}
}

// Asynchronous executions count against their key's and their wallet's
// in-flight limits until they end, not only while their request is
// answered, on REST as on MCP.
func TestAsyncExecutionsCountInFlight(t *testing.T) {
	m := newMarket(t, "10", func(c *daemon.Config) { c.MaxInFlightPerKey, c.MaxInFlightPerWallet = 2, 3 })
	h := newHanging(t)
	agent := m.list(h.service, "0.1")
	async := func(key *client.Client, task string) (string, error) {
		acc, err := key.Execute(ctx, agent, crtx.ExecuteParams{Task: task, Async: true}, client.ExecuteOptions{})
		return acc.ExecutionID, err
	}
	var ids []string
	for _, task := range []string{"a", "b"} {
		id, err := async(m.key, task)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	_, err := async(m.key, "c")
	refused := wantCode(t, err, 429, "rate_limited")
	if !strings.Contains(refused.Message, "key") {
		t.Errorf("over the key's limit: %s", refused.Message)
	}
	if n, err := strconv.Atoi(refused.RetryAfter); err != nil || n < 1 {
		t.Errorf("Retry-After = %q", refused.RetryAfter)
	}
	cs := mcpSession(t, m.env, m.key, nil)
	if msg := call(t, cs, "run_agent", map[string]any{"agent_id": agent, "task": "mcp"}, nil); !strings.HasPrefix(msg, "rate_limited: ") {
		t.Errorf("an MCP call over the key's limit: %q", msg)
	}

	// Another key of the wallet has its own limit, within the wallet's.
	k, err := m.callerC.CreateKey(ctx, client.KeyParams{Name: "second", Environment: crtx.Devnet})
	if err != nil {
		t.Fatal(err)
	}
	runLogs.secret(k.Key)
	second := m.anon.WithToken(k.Key)
	id, err := async(second, "d")
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, id)
	_, err = async(second, "e")
	if ce := wantCode(t, err, 429, "rate_limited"); !strings.Contains(ce.Message, "wallet") {
		t.Errorf("over the wallet's limit: %s", ce.Message)
	}
	// The other environment counts its own.
	if _, err := m.liveKey.Execute(ctx, agent, crtx.ExecuteParams{Task: "live", Async: true}, client.ExecuteOptions{}); err != nil {
		t.Errorf("mainnet, while devnet is at its limit: %v", err)
	}
	if b := m.balance(m.callerW, crtx.Devnet); b.Escrowed != 3*usdc("0.1") || b.Available != usdc("10")-3*usdc("0.1") {
		t.Errorf("balance %+v: refused executions took money", b)
	}

	h.release()
	for _, id := range ids {
		if rec, err := m.key.Wait(bounded(t), id, 20*time.Millisecond); err != nil || rec.Status != crtx.ExecCompleted {
			t.Fatalf("execution %s: %+v, %v", id, rec, err)
		}
	}
	if _, err := async(m.key, "after"); err != nil {
		t.Errorf("once they ended: %v", err)
	}
}

// An execution waiting for a dispatch slot renews its lease: however long
// it waits (the clock passes the lease here), recovery never takes it over,
// so it reaches the creator once, when a slot frees.
func TestWaitingExecutionDispatchedOnce(t *testing.T) {
	const lease = 700 * time.Millisecond
	m := newMarket(t, "10", func(c *daemon.Config) {
		c.MaxDispatches, c.MaxDispatchShare = 2, 1
		c.Lease, c.RecoveryInterval = lease, 20*time.Millisecond
	})
	h := newHanging(t)
	agent := m.list(h.service, "0.1")
	var busy []string
	for _, task := range []string{"busy 1", "busy 2"} {
		acc, err := m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: task, Async: true}, client.ExecuteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		busy = append(busy, acc.ExecutionID)
	}
	until(t, "both slots to be taken", func() bool { return h.count("busy 1")+h.count("busy 2") == 2 })
	waiting, err := m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: "waiting", Async: true}, client.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The clock passes the lease while the execution waits, in steps
	// shorter than the lease, with time for recovery to look between them.
	for range 6 {
		m.clock.Advance(200 * time.Millisecond)
		time.Sleep(300 * time.Millisecond)
	}
	if n := h.count("waiting"); n != 0 {
		t.Fatalf("the waiting execution reached the creator %d times before a slot freed", n)
	}
	h.open("busy 1")
	h.open("busy 2")
	for _, id := range busy {
		if rec, err := m.key.Wait(bounded(t), id, 20*time.Millisecond); err != nil || rec.Status != crtx.ExecCompleted {
			t.Fatalf("execution %s: %+v, %v", id, rec, err)
		}
	}
	until(t, "the waiting execution to be dispatched", func() bool { return h.count("waiting") > 0 })
	// Both slots are free now, and the creator holds the call: a second
	// copy of the execution, had recovery started one, would be dispatched
	// beside the first.
	time.Sleep(200 * time.Millisecond)
	if n := h.count("waiting"); n != 1 {
		t.Errorf("the waiting execution reached the creator %d times", n)
	}
	h.open("waiting")
	if rec, err := m.key.Wait(bounded(t), waiting.ExecutionID, 20*time.Millisecond); err != nil || rec.Status != crtx.ExecCompleted {
		t.Fatalf("the waiting execution: %+v, %v", rec, err)
	}
	if b := m.balance(m.callerW, crtx.Devnet); b.Escrowed != 0 || b.Available != usdc("10")-3*usdc("0.1") {
		t.Errorf("balance %+v, want three calls paid once each", b)
	}
}
