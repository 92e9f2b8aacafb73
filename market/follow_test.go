package market_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/payment"
	"github.com/crtx-market/crtx/payment/exact"
	"github.com/crtx-market/crtx/payment/ledger"
	"github.com/crtx-market/crtx/store/postgres"
	"github.com/crtx-market/crtx/store/storetest"
	"github.com/crtx-market/crtx/store/testdb"
)

// heldCaller is a creator that answers each call, failed, only once
// released; called receives each execution id it is sent.
type heldCaller struct {
	called  chan string
	release chan struct{}
}

func newHeldCaller() *heldCaller {
	return &heldCaller{called: make(chan string, 16), release: make(chan struct{})}
}

func (c *heldCaller) CheckURL(context.Context, string, string) error { return nil }

func (c *heldCaller) Deliver(context.Context, string, string, crtx.Environment, []byte, [][]byte, map[string]string) (int, error) {
	return 200, nil
}

func (c *heldCaller) Fetch(context.Context, string, int64) ([]byte, error) {
	return nil, errors.New("no fetch here")
}

func (c *heldCaller) Trace(ctx context.Context, url string, s crtx.RequestScope, req crtx.CreatorRequest) (crtx.CreatorReply, crtx.Exchange, error) {
	reply, err := c.Call(ctx, url, s, req, nil)
	return reply, crtx.Exchange{}, err
}

func (c *heldCaller) Call(ctx context.Context, _ string, _ crtx.RequestScope, req crtx.CreatorRequest, _ func(string)) (crtx.CreatorReply, error) {
	c.called <- req.ExecutionID
	select {
	case <-c.release:
	case <-ctx.Done():
		return crtx.CreatorReply{}, ctx.Err()
	}
	msg := "held, then let go"
	return crtx.CreatorReply{ExecutionID: req.ExecutionID, Status: "failed", Error: &msg}, nil
}

// listAgent writes an active agent beneath the service, as a listing
// would leave it, and returns its id.
func listAgent(t *testing.T, store crtx.Store) string {
	t.Helper()
	ctx := context.Background()
	creator := address(t)
	now := time.Now().UTC().Truncate(time.Microsecond)
	a := crtx.Agent{ID: crtx.NewUUID(), Creator: creator, Name: "held", Tags: []string{}, InputSchema: json.RawMessage(`{}`),
		OutputSchema: json.RawMessage(`{}`), PricingModel: "pay_per_use", Price: 1000, EndpointURL: "https://example.com/x",
		SigningPublicKey: creator, TimeoutSeconds: 300, Status: crtx.AgentActive, CreatedAt: now, UpdatedAt: now}
	err := store.Update(ctx, func(tx crtx.Tx) error {
		if err := tx.Catalog.EnsureCreator(ctx, creator, now); err != nil {
			return err
		}
		return tx.Catalog.InsertAgent(ctx, a)
	})
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// payer returns the principal of a new devnet key of a wallet funded with
// 1 USDC.
func payer(t *testing.T, m *market.Market) crtx.Principal {
	t.Helper()
	ctx := context.Background()
	w := address(t)
	if _, err := m.Funds.OperatorDeposit(ctx, crtx.Devnet, w, crtx.MicroPerUSDC); err != nil {
		t.Fatal(err)
	}
	_, secret, err := m.Accounts.CreateKey(ctx, w, "streams", crtx.Devnet, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Accounts.Authenticate(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Fifty streams follow one running execution for a minute, then see it
// fail. They read it once per recheck between them, and once for the
// change, which they hear of at once: not each on its own timer (fifty
// reads every 100 ms, 30,000 in the minute), nor each once per recheck.
// The minute passes on the bubble's clock (testing/synctest), so the test
// waits for nothing.
func TestStreamsShareTheirReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		store := &countingStore{Store: testdb.SQLite(t)}
		caller := newHeldCaller()
		_, authority, _ := ed25519.GenerateKey(nil)
		_, signer, _ := ed25519.GenerateKey(nil)
		recheck := 5 * time.Second
		m, err := market.New(store, market.Config{Schemes: []payment.New{ledger.New, exact.New}, PublicURL: "http://127.0.0.1:8080", Authority: authority, Signer: signer,
			Caller: caller, StreamRecheck: recheck})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Stop()
		agent, p := listAgent(t, store), payer(t, m)
		opened, err := m.Executions.Execute(ctx, p, agent, crtx.ExecuteParams{Task: "hold", Async: true}, "", "")
		if err != nil {
			t.Fatal(err)
		}
		<-caller.called
		e, _, err := m.Executions.GetExecution(ctx, p, opened.ID)
		if err != nil || e.Status != crtx.ExecRunning {
			t.Fatalf("execution %s, %v; want running", e.Status, err)
		}

		const streams = 50
		seen := make([][]crtx.ExecStatus, streams)
		var wg sync.WaitGroup
		for i := range streams {
			wg.Go(func() {
				_, _, err := m.Executions.Follow(ctx, e, func(e crtx.Execution, _ string) bool {
					seen[i] = append(seen[i], e.Status)
					return true
				})
				if err != nil {
					t.Error(err)
				}
			})
		}
		synctest.Wait() // every stream waits
		before := store.views.Load()
		const idle = time.Minute
		time.Sleep(idle)
		synctest.Wait()
		if n, most := store.views.Load()-before, int64(idle/recheck)+1; n > most {
			t.Errorf("%d streams idle for %s read the execution %d times; want at most %d (one per recheck)", streams, idle, n, most)
		}
		before = store.views.Load()
		released := time.Now()
		close(caller.release)
		wg.Wait()
		if waited := time.Since(released); waited >= recheck {
			t.Errorf("the streams heard of the change %s after it, at a recheck; want them told at once", waited)
		}
		// The execution's own final read (finish) may add one.
		if n := store.views.Load() - before; n > 2 {
			t.Errorf("%d streams read one change %d times; want once between them", streams, n)
		}
		for i, s := range seen {
			if len(s) != 1 || s[0] != crtx.ExecFailed {
				t.Errorf("stream %d saw %v; want [failed]", i, s)
			}
		}
	})
}

// viewCountingPG counts the read transactions of a PostgreSQL store and
// keeps its Notifier.
type viewCountingPG struct {
	*postgres.DB
	views atomic.Int64
}

func (s *viewCountingPG) View(ctx context.Context, fn func(crtx.Tx) error) error {
	s.views.Add(1)
	return s.DB.View(ctx, fn)
}

// Two replicas on one PostgreSQL database: a stream served by B hears at
// once of the change A makes, through the notification A sends. Streams
// recheck only hourly here, so nothing else could tell it.
func TestStreamsHearOtherReplicas(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	schema := storetest.Schema(t, dsn)
	caller := newHeldCaller()
	_, authority, _ := ed25519.GenerateKey(nil)
	_, signer, _ := ed25519.GenerateKey(nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	replica := func(store crtx.Store) *market.Market {
		m, err := market.New(store, market.Config{Schemes: []payment.New{ledger.New, exact.New}, PublicURL: "http://127.0.0.1:8080", Authority: authority, Signer: signer,
			Caller: caller, StreamRecheck: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		listening := make(chan struct{})
		var once sync.Once
		wg.Go(func() { m.RunNotifications(ctx, func() { once.Do(func() { close(listening) }) }) })
		<-listening
		return m
	}
	storeB := &viewCountingPG{DB: testdb.Postgres(t, dsn, schema)}
	a, b := replica(testdb.Postgres(t, dsn, schema)), replica(storeB)
	defer a.Stop()

	agent, p := listAgent(t, storeB), payer(t, a)
	opened, err := a.Executions.Execute(ctx, p, agent, crtx.ExecuteParams{Task: "hold", Async: true}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	<-caller.called
	e, _, err := b.Executions.GetExecution(ctx, p, opened.ID)
	if err != nil || e.Status != crtx.ExecRunning {
		t.Fatalf("execution %s, %v; want running", e.Status, err)
	}
	f := b.Executions.Watch(e)
	defer f.Close()
	before := storeB.views.Load()
	type next struct {
		e   crtx.Execution
		err error
	}
	got := make(chan next, 1)
	go func() {
		wait, stop := context.WithTimeout(ctx, 30*time.Second)
		defer stop()
		e, _, err := f.Next(wait)
		got <- next{e, err}
	}()
	// Let A finish once B's stream has read the execution running and
	// waits: from then on only word from A can move it.
	for storeB.views.Load() == before {
		time.Sleep(time.Millisecond)
	}
	close(caller.release)
	if n := <-got; n.err != nil || n.e.Status != crtx.ExecFailed {
		t.Errorf("B's stream got %s, %v; want failed, told by A", n.e.Status, n.err)
	}
}
