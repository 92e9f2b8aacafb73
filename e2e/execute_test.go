package e2e_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/ipfs"
)

// marketplace is a marketplace with one creator and one caller, and helpers to
// list agents and read balances.
type marketplace struct {
	*env
	creatorW wallet
	creatorC *client.Client
	callerW  wallet
	callerC  *client.Client // session
	key      *client.Client // devnet API key of the caller
	liveKey  *client.Client // mainnet API key of the caller
}

func newMarket(t *testing.T, funds string, adjust ...func(*daemon.Config)) *marketplace {
	e := start(t, append([]func(*daemon.Config){private}, adjust...)...)
	m := &marketplace{env: e}
	m.creatorW, m.creatorC = e.creatorOf("10000")
	m.callerW = newWallet(t)
	if funds != "0" {
		if _, err := e.anon.Airdrop(ctx, m.callerW.address, usdc(funds)); err != nil {
			t.Fatal(err)
		}
		if _, err := e.admin.Deposit(ctx, crtx.Mainnet, m.callerW.address, usdc(funds)); err != nil {
			t.Fatal(err)
		}
	}
	m.callerC = e.signIn(m.callerW)
	for _, env := range crtx.Environments {
		k, err := m.callerC.CreateKey(ctx, client.KeyParams{Name: string(env), Environment: env})
		if err != nil {
			t.Fatal(err)
		}
		runLogs.secret(k.Key, m.callerW.address)
		if env == crtx.Devnet {
			m.key = e.anon.WithToken(k.Key)
		} else {
			m.liveKey = e.anon.WithToken(k.Key)
		}
	}
	return m
}

func (m *marketplace) listAt(url, pub, price string, extra ...map[string]any) string {
	m.t.Helper()
	p := listingReq{}
	for k, v := range params(service{URL: url, PubKey: pub}, price) {
		p[k] = v
	}
	for _, x := range extra {
		for k, v := range x {
			p[k] = v
		}
	}
	a, err := list(m.creatorC, p)
	if err != nil {
		m.t.Fatalf("list: %v", err)
	}
	return a.AgentID
}

func (m *marketplace) list(s service, price string, extra ...map[string]any) string {
	return m.listAt(s.URL, s.PubKey, price, extra...)
}

func (m *marketplace) balance(w wallet, env crtx.Environment) crtx.Balance {
	m.t.Helper()
	b, err := m.d.Market.Funds.Balances(ctx, w.address, env)
	if err != nil {
		m.t.Fatal(err)
	}
	return b[env]
}

func (m *marketplace) treasury(env crtx.Environment) crtx.USDC {
	v, err := m.anon.Account(ctx, env, crtx.AccountAddress(crtx.AccountTreasury, crtx.TreasuryID))
	if err != nil {
		return 0
	}
	return v.Account.Balance
}

func run(task string) crtx.ExecuteParams { return crtx.ExecuteParams{Task: task} }

// ran runs agent once, with the task "x", through key, and fails the test
// if the call does.
func (m *marketplace) ran(t *testing.T, key *client.Client, agent string) api.ExecutionRecord {
	t.Helper()
	rec, err := key.Execute(ctx, agent, run("x"), client.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// occupy takes a daemon's only dispatch slot (MaxDispatches 1) with an
// execution of agent, so that the next one waits, pending and cancellable.
func (m *marketplace) occupy(agent string) api.ExecutionRecord {
	m.t.Helper()
	busy, err := m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: "busy", Async: true}, client.ExecuteOptions{})
	if err != nil {
		m.t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // for the dispatch to take the slot
	return busy
}

func TestExecuteSync(t *testing.T) {
	m := newMarket(t, "10")
	svc := newService(t, func(_ context.Context, r creator.Request) (string, int, error) {
		return "Größe: " + r.Task + " ✓ 🚀", 42, nil
	})
	agent := m.list(svc, "0.123457")
	before := m.balance(m.callerW, crtx.Devnet)
	creatorBefore := m.balance(m.creatorW, crtx.Devnet)

	rec, err := m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: "naïve", Parameters: json.RawMessage(`{"lang":"de"}`)}, client.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "Größe: naïve ✓ 🚀"
	if rec.Status != "completed" || rec.Result == nil || *rec.Result != want || *rec.ResultHash != crtx.ResultHash(want) ||
		rec.Cost != usdc("0.123457") || *rec.TokensUsed != 42 || rec.ExecutionTimeMS == nil || rec.CompletedAt == nil ||
		rec.Environment != crtx.Devnet || rec.AgentName != "Word counter" || rec.Error != nil || rec.Dispute != nil {
		t.Fatalf("record = %+v", rec)
	}
	// 1% of 0.123457 is 0.00123457, floored to 0.001234; the creator gets the rest.
	if rec.PlatformAmount != 1234 || rec.CreatorAmount != 122_223 {
		t.Errorf("split = %s + %s", rec.CreatorAmount, rec.PlatformAmount)
	}
	if got := m.balance(m.callerW, crtx.Devnet); got.Available != before.Available-rec.Cost || got.Escrowed != 0 {
		t.Errorf("caller balance %+v, was %+v", got, before)
	}
	// The creator's share is pending until the roll-up posts it.
	if got := m.balance(m.creatorW, crtx.Devnet); got.Available != creatorBefore.Available || got.Pending != rec.CreatorAmount {
		t.Errorf("creator balance before the roll-up: %+v, want %s pending", got, rec.CreatorAmount)
	}
	if got := m.treasury(crtx.Devnet); got != 0 {
		t.Errorf("treasury before the roll-up: %s", got)
	}
	m.checkLedger() // with credits pending
	m.rollup()
	if got := m.balance(m.creatorW, crtx.Devnet); got.Available != creatorBefore.Available+rec.CreatorAmount || got.Pending != 0 {
		t.Errorf("creator balance %+v", got)
	}
	if got := m.treasury(crtx.Devnet); got != rec.PlatformAmount {
		t.Errorf("treasury %s", got)
	}
	if got := m.balance(m.callerW, crtx.Mainnet); got.Available != usdc("10") {
		t.Errorf("a devnet execution moved mainnet money: %s", got.Available)
	}

	// The published result verifies by the seed's procedure, byte for byte.
	cid := ipfs.CID(want)
	if *rec.IPFSURL != m.d.URL+"/ipfs/"+cid {
		t.Errorf("ipfs_url = %s", *rec.IPFSURL)
	}
	content, err := m.anon.Content(ctx, *rec.IPFSURL)
	if err != nil || string(content) != want || crtx.ResultHash(string(content)) != *rec.ResultHash {
		t.Errorf("content = %q, %v", content, err)
	}
	resp, _ := m.http.Get(*rec.IPFSURL)
	resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("content type %q", resp.Header.Get("Content-Type"))
	}
	wantCode(t, m.anon.Do(ctx, "GET", "/ipfs/bafkreinotacid", "", nil, nil), 404, "not_found")

	// The record reads the same by id, and its ledger account holds the
	// escrow and its settlement.
	got, err := m.key.Execution(ctx, rec.ExecutionID)
	if err != nil || mustJSON(got) != mustJSON(rec) {
		t.Errorf("GET differs:\n%s\n%s", mustJSON(got), mustJSON(rec))
	}
	addr := crtx.AccountAddress(crtx.AccountEscrow, rec.ExecutionID)
	if rec.OnChainRecord != m.d.URL+"/explorer/account/"+addr+"?cluster=devnet" {
		t.Errorf("on_chain_record = %s", rec.OnChainRecord)
	}
	v, err := m.anon.Account(ctx, crtx.Devnet, addr)
	if err != nil || len(v.Transactions) != 2 || v.Transactions[0].Kind != crtx.TxExecutionRecord ||
		v.Transactions[0].Data["result_hash"] != *rec.ResultHash {
		t.Errorf("record account = %+v, %v", v, err)
	}
	// Agent statistics moved on devnet only.
	a, _ := m.anon.Agent(ctx, agent, crtx.Devnet)
	if a.TotalExecutions != 1 || a.SuccessfulExecutions != 1 || a.SuccessRate != 1 {
		t.Errorf("devnet stats = %+v", a)
	}
	if a, _ := m.anon.Agent(ctx, agent, crtx.Mainnet); a.TotalExecutions != 0 {
		t.Errorf("mainnet stats moved")
	}
	// Key counters.
	keys, _ := m.callerC.Keys(ctx)
	for _, k := range keys {
		if k.Environment == crtx.Devnet && (k.ExecutionCount != 1 || k.TotalSpent != rec.Cost) {
			t.Errorf("devnet key counters = %d, %s", k.ExecutionCount, k.TotalSpent)
		}
	}
}

func TestFeeSplit(t *testing.T) {
	for _, tc := range []struct {
		bps                     int
		price, creator, platfrm string
	}{{100, "1", "0.99", "0.01"}, {250, "0.333333", "0.325", "0.008333"}, {0, "0.5", "0.5", "0"}, {10000, "0.2", "0", "0.2"}, {100, "0.0001", "0.000099", "0.000001"}, {100, "0.000199", "0.000198", "0.000001"}} {
		m := newMarket(t, "10", func(c *daemon.Config) { c.PlatformFeeBps = tc.bps })
		agent := m.list(newService(t, echo), tc.price)
		rec := m.ran(t, m.liveKey, agent)
		if rec.CreatorAmount != usdc(tc.creator) || rec.PlatformAmount != usdc(tc.platfrm) || rec.CreatorAmount+rec.PlatformAmount != rec.Cost {
			t.Errorf("%d bps of %s: %s + %s", tc.bps, tc.price, rec.CreatorAmount, rec.PlatformAmount)
		}
		m.rollup()
		if got := m.treasury(crtx.Mainnet); got != usdc(tc.platfrm) {
			t.Errorf("%d bps: treasury %s", tc.bps, got)
		}
		if got := m.balance(m.callerW, crtx.Mainnet).Available; got != usdc("10")-usdc(tc.price) {
			t.Errorf("%d bps: caller %s", tc.bps, got)
		}
	}
}

// fault serves the listing's reachability test correctly and then fails
// real executions in one way.
func fault(t *testing.T, bad func(w http.ResponseWriter, req crtx.CreatorRequest, key ed25519.PrivateKey)) service {
	key := agentKey()
	good := creator.NewHandler(key, echo, creator.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(crtx.HeaderTest) == "true" {
			good.ServeHTTP(w, r)
			return
		}
		var req crtx.CreatorRequest
		json.NewDecoder(r.Body).Decode(&req)
		bad(w, req, key)
	}))
	t.Cleanup(srv.Close)
	return service{URL: srv.URL + "/execute", Key: key, PubKey: crtx.Address(key.Public().(ed25519.PublicKey))}
}

func replyJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func signed(req crtx.CreatorRequest, result string, key ed25519.PrivateKey) crtx.CreatorReply {
	h := crtx.ResultHash(result)
	sig := crtx.SignResult(key, h)
	return crtx.CreatorReply{ExecutionID: req.ExecutionID, Status: "completed", Result: &result, ResultHash: &h, Signature: &sig}
}

func TestCreatorFaults(t *testing.T) {
	_, otherKey, _ := ed25519.GenerateKey(nil)
	cases := []struct {
		name   string
		bad    func(w http.ResponseWriter, req crtx.CreatorRequest, key ed25519.PrivateKey)
		closed bool
		status int
		code   string
	}{
		{"answers failed", func(w http.ResponseWriter, req crtx.CreatorRequest, _ ed25519.PrivateKey) {
			msg := "model overloaded"
			replyJSON(w, crtx.CreatorReply{ExecutionID: req.ExecutionID, Status: "failed", Error: &msg})
		}, false, 500, "execution_failed"},
		{"hangs past the timeout", func(w http.ResponseWriter, req crtx.CreatorRequest, _ ed25519.PrivateKey) {
			time.Sleep(2500 * time.Millisecond)
		}, false, 408, "execution_timeout"},
		{"signs with another key", func(w http.ResponseWriter, req crtx.CreatorRequest, _ ed25519.PrivateKey) {
			replyJSON(w, signed(req, "ok", otherKey))
		}, false, 502, "invalid_signature"},
		{"hash of something else", func(w http.ResponseWriter, req crtx.CreatorRequest, key ed25519.PrivateKey) {
			r := signed(req, "ok", key)
			other := "tampered"
			r.Result = &other
			replyJSON(w, r)
		}, false, 502, "invalid_signature"},
		{"malformed JSON", func(w http.ResponseWriter, req crtx.CreatorRequest, _ ed25519.PrivateKey) {
			w.Write([]byte(`{"execution_id": "` + req.ExecutionID + `", "status": `))
		}, false, 502, "invalid_agent_response"},
		{"wrong execution_id", func(w http.ResponseWriter, req crtx.CreatorRequest, key ed25519.PrivateKey) {
			req.ExecutionID = crtx.NewUUID()
			replyJSON(w, signed(req, "ok", key))
		}, false, 502, "invalid_agent_response"},
		{"unknown status", func(w http.ResponseWriter, req crtx.CreatorRequest, key ed25519.PrivateKey) {
			r := signed(req, "ok", key)
			r.Status = "done"
			replyJSON(w, r)
		}, false, 502, "invalid_agent_response"},
		{"NUL in the result", func(w http.ResponseWriter, req crtx.CreatorRequest, key ed25519.PrivateKey) {
			replyJSON(w, signed(req, "ok\x00", key))
		}, false, 502, "invalid_agent_response"},
		{"NUL in the error", func(w http.ResponseWriter, req crtx.CreatorRequest, _ ed25519.PrivateKey) {
			msg := "overloaded\x00"
			replyJSON(w, crtx.CreatorReply{ExecutionID: req.ExecutionID, Status: "failed", Error: &msg})
		}, false, 502, "invalid_agent_response"},
		{"5 MiB result", func(w http.ResponseWriter, req crtx.CreatorRequest, key ed25519.PrivateKey) {
			replyJSON(w, signed(req, strings.Repeat("a", 5<<20), key))
		}, false, 502, "invalid_agent_response"},
		{"redirect", func(w http.ResponseWriter, req crtx.CreatorRequest, _ ed25519.PrivateKey) {
			w.Header().Set("Location", "http://169.254.169.254/latest/meta-data/")
			w.WriteHeader(http.StatusTemporaryRedirect)
		}, false, 502, "invalid_agent_response"},
		{"HTTP 500", func(w http.ResponseWriter, req crtx.CreatorRequest, _ ed25519.PrivateKey) {
			http.Error(w, "internal", 500)
		}, false, 502, "invalid_agent_response"},
		// Nothing listens: retried briefly, then failed with the cause,
		// long before the agent's 30 s timeout would answer 408.
		{"closed port", nil, true, 502, "agent_unreachable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newMarket(t, "5")
			var svc service
			if tc.closed {
				svc = newService(t, echo)
			} else {
				svc = fault(t, tc.bad)
			}
			timeout := 2
			if tc.closed {
				timeout = 30
			}
			agent := m.list(svc, "0.25", map[string]any{"timeout_seconds": timeout})
			if tc.closed {
				closeService(t, svc)
			}
			before := m.balance(m.callerW, crtx.Devnet)
			_, err := m.key.Execute(ctx, agent, run("x"), client.ExecuteOptions{})
			ce := wantCode(t, err, tc.status, tc.code)
			if ce.ExecutionID == nil {
				t.Fatal("the error body carries no execution_id")
			}
			rec, err := m.key.Execution(ctx, *ce.ExecutionID)
			if err != nil || rec.Status != "failed" || rec.Error == nil || rec.Error.Code != tc.code || rec.Result != nil || rec.IPFSURL != nil {
				t.Fatalf("record = %+v, %v", rec, err)
			}
			// The creator's endpoint is theirs: neither the answer nor the
			// record names it, an address, a redirect or Go's dial text.
			for _, msg := range []string{ce.Message, rec.Error.Message} {
				for _, leak := range []string{strings.TrimSuffix(strings.TrimPrefix(svc.URL, "http://"), "/execute"), "127.0.0.1", "169.254", "dial", "Post "} {
					if strings.Contains(msg, leak) {
						t.Errorf("message %q names %q", msg, leak)
					}
				}
			}
			if tc.closed {
				if !strings.Contains(ce.Message, "could not be reached: the connection was refused") {
					t.Errorf("an unreachable agent's message: %q", ce.Message)
				}
				// An asynchronous call ends the same way.
				acc, err := m.key.Execute(ctx, agent, crtx.ExecuteParams{Task: "later", Async: true}, client.ExecuteOptions{})
				if err != nil {
					t.Fatal(err)
				}
				var later api.ExecutionRecord
				waitUntil(t, func() bool {
					later, err = m.key.Execution(ctx, acc.ExecutionID)
					return err == nil && later.Status.Final()
				})
				if later.Status != crtx.ExecFailed || later.Error == nil || later.Error.Code != crtx.CodeAgentUnreachable {
					t.Errorf("an asynchronous call of an unreachable agent: %+v", later)
				}
			}
			if got := m.balance(m.callerW, crtx.Devnet); got != before {
				t.Errorf("escrow not refunded: %+v, was %+v", got, before)
			}
			m.rollup()
			runs := int64(1)
			if tc.closed {
				runs = 2
			}
			if a, _ := m.anon.Agent(ctx, agent, crtx.Devnet); a.TotalExecutions != runs || a.SuccessRate != 0 {
				t.Errorf("stats = %+v", a)
			}
			if err := m.anon.Do(ctx, "GET", "/healthz", "", nil, nil); err != nil {
				t.Errorf("server stopped serving: %v", err)
			}
		})
	}
}

// An agent may answer an empty result: it is published like any other,
// and the execution reads back with it.
func TestEmptyResult(t *testing.T) {
	m := newMarket(t, "1")
	agent := m.list(newService(t, func(context.Context, creator.Request) (string, int, error) { return "", 0, nil }), "0.1")
	rec, err := m.key.Execute(ctx, agent, run("nothing"), client.ExecuteOptions{})
	if err != nil || rec.Status != crtx.ExecCompleted || rec.Result == nil || *rec.Result != "" {
		t.Fatalf("execute = %+v, %v", rec, err)
	}
	got, err := m.key.Execution(ctx, rec.ExecutionID)
	if err != nil || got.Result == nil || *got.Result != "" || got.ResultHash == nil {
		t.Errorf("read back = %+v, %v; want the empty result", got, err)
	}
}
