package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/chain"
	"github.com/crtx-market/crtx/chain/chaintest"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/store/storetest"
	"github.com/crtx-market/crtx/x402"
)

// An asynchronous x402 call is settled into the escrow before its
// dispatch; crtxd killed with SIGKILL after the settlement (while the
// agent works) or while the payment is being sent, and restarted, refunds
// the failed call on the chain exactly once: the payer ends with what it
// started with, and the ledger verifies.
func TestX402KilledRefundsOnce(t *testing.T) {
	for name, db := range engines(t) {
		t.Run(name, func(t *testing.T) { testX402Killed(t, db(t)) })
	}
}

func testX402Killed(t *testing.T, db []string) {
	ctx := context.Background()
	// An agent that works a second, then fails.
	r := newX402Rig(t, db, 30, func(ctx context.Context, r creator.Request) (string, int, error) {
		time.Sleep(time.Second)
		return "", 0, errors.New("the model is down")
	})
	p, args, a, net, payer, mint, tpub, data, held, price := r.p, r.args, r.agent, r.net, r.payer, r.mint, r.treasury, r.data, r.held, r.price
	defer func() { r.p = p }()
	kill := &killer{}
	r.proxy.Set("sendTransaction", kill.send)
	for i, tc := range []struct {
		name string
		// whileSending kills crtxd as the payment's bytes reach the chain,
		// before it could record that they landed; otherwise it is killed
		// once the call is accepted, settled, while the agent works.
		whileSending bool
	}{
		{"killed after the settlement", false},
		{"killed while the payment is sent", true},
	} {
		var armed <-chan chan struct{}
		if tc.whileSending {
			armed = kill.arm(true)
		}
		header := x402Header(t, p.url, a, net, payer, mint, tpub)
		status := make(chan int, 1)
		go func() {
			req, _ := http.NewRequest("POST", p.url+"/v1/agents/"+a+"/execute", bytes.NewReader([]byte(`{"task":"t","async":true}`)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(x402.HeaderPaymentSignature, header)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				status <- 0
				return
			}
			resp.Body.Close()
			status <- resp.StatusCode
		}()
		if tc.whileSending {
			select {
			case dead := <-armed:
				p.kill()
				close(dead)
			case <-time.After(60 * time.Second):
				t.Fatalf("%s: crtxd sent no payment", tc.name)
			}
		} else {
			if got := <-status; got != 202 {
				t.Fatalf("%s: the call answered %d", tc.name, got)
			}
			p.kill()
		}
		p = startProc(t, args...)
		// The payer signs in with its Solana key to follow its refund.
		ps, _, err := client.New(p.url, "").SignIn(ctx, payer)
		if err != nil {
			t.Fatal(err)
		}
		var refund api.Withdrawal
		waitFor(t, func() bool {
			ws, err := ps.Withdrawals(ctx, crtx.Devnet, 10, 0)
			if err != nil || len(ws.Withdrawals) != i+1 {
				return false
			}
			refund = ws.Withdrawals[0]
			return refund.Status.Final()
		})
		if refund.Status != crtx.WithdrawalConfirmed || refund.Amount != price {
			t.Fatalf("%s: refund %+v", tc.name, refund)
		}
		if got := held(); got != crtx.MicroPerUSDC {
			t.Fatalf("%s: the payer holds %s on the chain, want the 1 USDC it started with", tc.name, got)
		}
		if code, out := crtxd(t, append([]string{"ledger", "verify", "--data", data}, db...)...); code != 0 {
			t.Fatalf("%s: ledger verify:\n%s", tc.name, out)
		}
	}
	if rs, err := client.New(p.url, "").Reserves(ctx); err != nil || len(rs.Reserves) != 1 || rs.Reserves[0].Surplus < 0 {
		t.Fatalf("reserves %+v, %v", rs, err)
	}
}

// A synchronous x402 call is settled after its result: crtxd killed with
// SIGKILL as the payment's bytes reach the chain, and restarted after the
// call's deadline, settles the payment that landed with the result it
// kept, once: the call ends completed, charged exactly its price, and the
// ledger verifies.
func TestX402KilledAfterTheResultSettlesOnce(t *testing.T) {
	for name, db := range engines(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db := db(t)
			r := newX402Rig(t, db, 2, func(_ context.Context, req creator.Request) (string, int, error) { return "done: " + req.Task, 0, nil })
			kill := &killer{}
			r.proxy.Set("sendTransaction", kill.send)
			armed := kill.arm(true)
			header := x402Header(t, r.p.url, r.agent, r.net, r.payer, r.mint, r.treasury)
			go func() {
				req, _ := http.NewRequest("POST", r.p.url+"/v1/agents/"+r.agent+"/execute", bytes.NewReader([]byte(`{"task":"kept"}`)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set(x402.HeaderPaymentSignature, header)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}()
			select {
			case dead := <-armed:
				r.p.kill()
				close(dead)
			case <-time.After(60 * time.Second):
				t.Fatal("crtxd sent no payment")
			}
			time.Sleep(3 * time.Second) // past the call's 2 s deadline
			r.p = startProc(t, r.args...)
			network, err := chain.NetworkOf(ctx, r.net.RPC)
			if err != nil {
				t.Fatal(err)
			}
			signed, err := client.New(r.p.url, "").SignInWithX(ctx, r.payer, network)
			if err != nil {
				t.Fatal(err)
			}
			var rec api.ExecutionRecord
			waitFor(t, func() bool {
				page, err := signed.Executions(ctx, nil)
				if err != nil || len(page.Executions) != 1 {
					return false
				}
				rec, err = signed.Execution(ctx, page.Executions[0].ExecutionID)
				return err == nil && rec.Status.Final()
			})
			if rec.Status != crtx.ExecCompleted || rec.Result == nil || *rec.Result != "done: kept" || rec.Payment == nil ||
				rec.Payment.Status != crtx.PaymentSettled {
				t.Fatalf("the call after the restart: %+v", rec)
			}
			if got := r.held(); got != crtx.MicroPerUSDC-r.price {
				t.Fatalf("the payer holds %s on the chain, want 1 USDC less the price, once", got)
			}
			if rs, err := client.New(r.p.url, "").Reserves(ctx); err != nil || len(rs.Reserves) != 1 || rs.Reserves[0].Surplus < 0 {
				t.Fatalf("reserves %+v, %v", rs, err)
			}
			if code, out := crtxd(t, append([]string{"ledger", "verify", "--data", r.data}, db...)...); code != 0 {
				t.Fatalf("ledger verify:\n%s", out)
			}
		})
	}
}

// x402Rig is crtxd on a local Solana network, through a JSON-RPC proxy,
// with one agent listed (timeout seconds, answering with fn) and a payer
// holding 1 USDC and no SOL.
type x402Rig struct {
	p              *proc
	args           []string
	proxy          *chaintest.Proxy
	net            *chaintest.Net
	agent          string
	payer          ed25519.PrivateKey
	mint, treasury string
	data           string
	price          crtx.USDC
	held           func() crtx.USDC
}

func newX402Rig(t *testing.T, db []string, timeout int, fn creator.Func) *x402Rig {
	ctx := context.Background()
	net, mint, mintAuth, treasury, keyFile, dir := chainOf(t)
	token := filepath.Join(dir, "admin-token")
	os.WriteFile(token, []byte("x402-crash-admin-token-0123456789"), 0o600)
	r := &x402Rig{proxy: chaintest.NewProxy(t, net.RPC), net: net, mint: mint, treasury: chaintest.Address(treasury), data: filepath.Join(dir, "data"), price: 20_000}
	r.args = append([]string{"--addr", freePort(t), "--data", r.data, "--solana-rpc-devnet", r.proxy.URL,
		"--usdc-mint-devnet", mint, "--treasury-keypair", keyFile, "--chain-poll", "50ms", "--anchor-interval", "1s",
		"--rate-limit-ip", "0", "--block-interval", "100ms", "--lease", "2s", "--recovery-interval", "100ms",
		"--admin-token-file", token, "--allow-private-endpoints"}, db...)
	r.p = startProc(t, r.args...)
	t.Cleanup(func() { r.p.kill() })

	svcKey := agentKey()
	h := creator.NewHandler(svcKey, func(ctx context.Context, req creator.Request) (string, int, error) {
		if req.Test {
			return "ok", 0, nil
		}
		return fn(ctx, req)
	}, creator.Options{})
	svc := httptest.NewServer(h)
	t.Cleanup(svc.Close)
	_, creatorKey, _ := ed25519.GenerateKey(nil)
	admin := client.New(r.p.url, "x402-crash-admin-token-0123456789")
	if _, err := admin.Deposit(ctx, crtx.Mainnet, crtx.Address(creatorKey.Public().(ed25519.PublicKey)), 100*crtx.MicroPerUSDC); err != nil {
		t.Fatal(err)
	}
	cs, _, err := client.New(r.p.url, "").SignIn(ctx, creatorKey)
	if err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	raw := func(s string) *json.RawMessage { r := json.RawMessage(s); return &r }
	tags := []string{"data"}
	a, err := holding(cs, h.PublicKey()).CreateListing(ctx, crtx.ListingParams{Name: str("Down"), Tagline: str("Down."), Description: str("Down."),
		Tags: &tags, InputSchema: raw(`{"type":"object"}`), OutputSchema: raw(`{"type":"string"}`), PricingModel: str("pay_per_use"),
		Price: &r.price, EndpointURL: str(svc.URL + "/execute"), SigningPublicKey: str(h.PublicKey()), TimeoutSeconds: &timeout})
	if err != nil {
		t.Fatal(err)
	}
	r.agent = a.AgentID
	payerPub, payer, _ := ed25519.GenerateKey(nil)
	r.payer = payer
	net.MintTo(t, mint, mintAuth, crtx.Address(payerPub), crtx.MicroPerUSDC) // no SOL: the treasury pays the fees
	account, _, _ := solana.FindAssociatedTokenAddress(solana.PublicKeyFromBytes(payerPub), solana.MustPublicKeyFromBase58(mint))
	r.held = func() crtx.USDC { return net.TokenBalance(t, account.String()) }
	return r
}

// x402Header is a PAYMENT-SIGNATURE header paying agent's call from payer,
// built as the exact scheme's client builds it, for the requirements the
// 402 names.
func x402Header(t *testing.T, base, agent string, net *chaintest.Net, payer ed25519.PrivateKey, mint, treasury string) string {
	t.Helper()
	resp, err := http.Post(base+"/v1/agents/"+agent+"/execute", "application/json", bytes.NewReader([]byte(`{"task":"t"}`)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	raw, err := base64.StdEncoding.DecodeString(resp.Header.Get(x402.HeaderPaymentRequired))
	if err != nil {
		t.Fatalf("402 %d without PAYMENT-REQUIRED: %v", resp.StatusCode, err)
	}
	var pr x402.PaymentRequired
	if err := json.Unmarshal(raw, &pr); err != nil || len(pr.Accepts) != 1 {
		t.Fatalf("PAYMENT-REQUIRED %s: %v", raw, err)
	}
	amount, err := strconv.ParseUint(pr.Accepts[0].Amount, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	pay := chaintest.NewPayment(t, treasury, payer, mint, treasury, amount)
	payload := x402.PaymentPayload{X402Version: 2, Resource: &pr.Resource, Accepted: pr.Accepts[0]}
	payload.Payload.Transaction = pay.Encode(t, net.Blockhash(t))
	return x402.EncodeHeader(payload)
}

// One payment sent to two crtxd replicas of one PostgreSQL database at
// once, ten times to each: one call runs and the payer is charged once;
// every other send is told the payment's call is in progress or was
// settled already (never that nothing was charged), and the ledger
// verifies.
func TestX402OnePaymentTwoReplicas(t *testing.T) {
	r := newX402Rig(t, []string{"--db", storetest.SchemaDSN(t)}, 5, func(_ context.Context, req creator.Request) (string, int, error) {
		time.Sleep(time.Second) // long enough for the other sends to find it running
		return "done: " + req.Task, 0, nil
	})
	args := slices.Clone(r.args)
	args[slices.Index(args, "--addr")+1] = freePort(t)
	b := startProc(t, args...)
	t.Cleanup(b.kill)
	header := x402Header(t, r.p.url, r.agent, r.net, r.payer, r.mint, r.treasury)
	type answer struct {
		status int
		body   string
	}
	answers := make(chan answer, 20)
	var start sync.WaitGroup
	start.Add(1)
	for i := range 20 {
		base := r.p.url
		if i%2 == 1 {
			base = b.url
		}
		go func() {
			start.Wait()
			req, _ := http.NewRequest("POST", base+"/v1/agents/"+r.agent+"/execute", bytes.NewReader([]byte(`{"task":"once"}`)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(x402.HeaderPaymentSignature, header)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				answers <- answer{0, err.Error()}
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			answers <- answer{resp.StatusCode, string(body)}
		}()
	}
	start.Done()
	ran, running := 0, 0
	for range 20 {
		a := <-answers
		switch {
		case a.status == 200 && strings.Contains(a.body, "done: once"):
			ran++
		case strings.Contains(a.body, "nothing was charged"):
			t.Errorf("a send of a payment that was charged says nothing was: %d %s", a.status, a.body)
		case a.status == 409 && strings.Contains(a.body, crtx.CodeIdempotencyInProgress):
			running++
		case a.status == 402 && strings.Contains(a.body, "duplicate_settlement"):
		default:
			t.Errorf("a send of one payment to two replicas: %d %s", a.status, a.body)
		}
	}
	if ran != 1 || running == 0 {
		t.Errorf("one payment sent twenty times to two replicas ran %d calls, %d sends told it was in progress", ran, running)
	}
	waitFor(t, func() bool { return r.held() == crtx.MicroPerUSDC-r.price })
	if rs, err := client.New(b.url, "").Reserves(context.Background()); err != nil || len(rs.Reserves) != 1 || rs.Reserves[0].Surplus < 0 {
		t.Fatalf("reserves %+v, %v", rs, err)
	}
	if code, out := crtxd(t, "ledger", "verify", "--data", r.data, "--db", args[slices.Index(args, "--db")+1]); code != 0 {
		t.Fatalf("ledger verify:\n%s", out)
	}
}
