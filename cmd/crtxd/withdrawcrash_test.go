package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mr-tron/base58"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/chain"
	"github.com/crtx-market/crtx/chain/chaintest"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/keyfile"
	"github.com/crtx-market/crtx/store/storetest"
)

// killer holds crtxd's next withdrawal transfer, once armed, while the
// test kills crtxd with SIGKILL: before passing it on (killed between
// storing the signed bytes and their reaching the chain) or after (killed
// before it could record that they left). It answers the proxy's sends.
type killer struct {
	mu    sync.Mutex
	armed chan<- chan struct{} // receives, at the transfer, a channel closed once crtxd is dead
	after bool
	sent  []string // signatures of the transfers crtxd sent, each once
}

func (k *killer) sends() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.sent)
}

// arm makes the next transfer wait, at the moment after says, until the
// test has killed crtxd: the test reads the channel to kill it, then closes
// what it read.
func (k *killer) arm(after bool) <-chan chan struct{} {
	ch := make(chan chan struct{}, 1)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.armed, k.after = ch, after
	return ch
}

func (k *killer) send(c chaintest.Call, forward func() []byte) ([]byte, int) {
	k.mu.Lock()
	armed, after := k.armed, k.after
	if isTransfer(chaintest.Transaction(c)) {
		if sig := chaintest.Signature(c); !slices.Contains(k.sent, sig) {
			k.sent = append(k.sent, sig)
		}
		k.armed = nil
	} else {
		armed = nil
	}
	k.mu.Unlock()
	killed := func() {
		dead := make(chan struct{})
		armed <- dead
		<-dead
	}
	if armed != nil && !after {
		killed()
		return []byte("gone"), http.StatusBadGateway
	}
	out := forward()
	if armed != nil {
		killed()
	}
	return out, 0
}

// isTransfer reports whether a transaction carries both the Memo and the
// Token programs: a withdrawal's transfer, which names its withdrawal in a
// memo. The test lets the others pass: anchors (a memo alone) and the
// treasury's token account's creation (no memo).
func isTransfer(tx []byte) bool {
	memo, _ := base58.Decode("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr")
	token, _ := base58.Decode("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
	return bytes.Contains(tx, memo) && bytes.Contains(tx, token)
}

// crtxd killed with SIGKILL while it sends a withdrawal, before or after the
// bytes reach the chain, pays it exactly once after a restart, with the
// bytes it stored: signed on a durable nonce, they still land after a
// blockhash would have expired, and nothing is signed twice.
func TestWithdrawalKilledPaysOnce(t *testing.T) {
	for name, db := range engines(t) {
		t.Run(name, func(t *testing.T) { testWithdrawalKilled(t, db(t)) })
	}
}

// engines are the stores the withdrawal tests run crtxd on: SQLite, and
// PostgreSQL where the tests have it.
func engines(t *testing.T) map[string]func(t *testing.T) []string {
	out := map[string]func(t *testing.T) []string{"sqlite": func(*testing.T) []string { return nil }}
	if os.Getenv("CRTX_TEST_POSTGRES") != "" || os.Getenv("CRTX_REQUIRE_POSTGRES") != "" {
		out["postgres"] = func(t *testing.T) []string { return []string{"--db", storetest.SchemaDSN(t)} }
	}
	return out
}

// rig is crtxd on a local Solana network, through a JSON-RPC proxy, with a
// wallet that deposited 10 USDC.
type rig struct {
	net      *chaintest.Net
	mint     string
	treasury ed25519.PrivateKey
	proxy    *chaintest.Proxy
	args     []string
	data     string
	p        *proc
	key      ed25519.PrivateKey
}

// chainOf is a local Solana network with a USDC mint of its own and a
// treasury holding SOL, whose key file is in dir.
func chainOf(t *testing.T) (net *chaintest.Net, mint string, mintAuth, treasury ed25519.PrivateKey, keyFile, dir string) {
	net = chaintest.Start(t)
	mint, mintAuth = net.NewMint(t)
	treasury = chaintest.NewKey(t)
	net.Airdrop(t, chaintest.Address(treasury), 10_000_000_000)
	dir = t.TempDir()
	keyFile = filepath.Join(dir, "treasury.json")
	if err := keyfile.Write(keyFile, treasury); err != nil {
		t.Fatal(err)
	}
	return net, mint, mintAuth, treasury, keyFile, dir
}

func newRig(t *testing.T, db []string) *rig {
	ctx := context.Background()
	net, mint, mintAuth, treasury, keyFile, dir := chainOf(t)
	r := &rig{net: net, mint: mint, treasury: treasury, proxy: chaintest.NewProxy(t, net.RPC), data: filepath.Join(dir, "data")}
	r.args = append([]string{"--addr", freePort(t), "--data", r.data, "--solana-rpc-devnet", r.proxy.URL,
		"--usdc-mint-devnet", mint, "--treasury-keypair", keyFile, "--chain-poll", "50ms", "--anchor-interval", "1s",
		"--rate-limit-ip", "0", "--block-interval", "100ms", "--lease", "2s"}, db...)
	r.p = startProc(t, r.args...)
	t.Cleanup(func() { r.p.kill() })

	pub, key, _ := ed25519.GenerateKey(nil)
	r.key = key
	net.Airdrop(t, crtx.Address(pub), 1_000_000_000)
	net.MintTo(t, mint, mintAuth, crtx.Address(pub), 10*crtx.MicroPerUSDC)
	c := r.session(t)
	d, err := c.NewDeposit(ctx, crtx.Devnet, 10*crtx.MicroPerUSDC)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chain.Pay(ctx, net.RPC, key, crtx.TransferRequest{Recipient: d.Recipient, Amount: d.Amount, SPLToken: d.Mint,
		References: []string{d.Reference}, Memo: d.Memo}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		got, err := c.GetDeposit(ctx, d.DepositID)
		return err == nil && got.Status == crtx.DepositCredited
	})
	return r
}

// session signs the wallet in to the running crtxd.
func (r *rig) session(t *testing.T) *client.Client {
	c, _, err := client.New(r.p.url, "").SignIn(context.Background(), r.key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// restart kills crtxd with SIGKILL and starts it again.
func (r *rig) restart(t *testing.T) {
	r.p.kill()
	r.p = startProc(t, r.args...)
}

// landed is every transfer among sigs that landed and succeeded.
func (r *rig) landed(t *testing.T, sigs []string) map[string]bool {
	look, err := chain.New(chain.Config{RPC: r.net.RPC, Mint: r.mint, Treasury: r.treasury})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, sig := range sigs {
		st, err := look.Status(context.Background(), sig)
		if err != nil {
			t.Fatal(err)
		}
		if st.Found && st.Err == "" {
			out[sig] = true
		}
	}
	return out
}

func testWithdrawalKilled(t *testing.T, db []string) {
	ctx := context.Background()
	r := newRig(t, db)
	kill := &killer{}
	r.proxy.Set("sendTransaction", kill.send)
	net := r.net
	c := r.session(t)
	paid := crtx.USDC(0)
	confirmed := map[string]bool{}
	for _, tc := range []struct {
		name          string
		after, expire bool
		amount        crtx.USDC
	}{
		{"killed before sending", false, false, 2 * crtx.MicroPerUSDC},
		{"killed after sending", true, false, 3 * crtx.MicroPerUSDC},
		{"killed before sending, restarted after a blockhash would expire", false, true, 4 * crtx.MicroPerUSDC},
	} {
		armed := kill.arm(tc.after)
		before := len(kill.sends())
		w, err := c.NewWithdrawal(ctx, crtx.Devnet, tc.amount)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		select {
		case dead := <-armed:
			r.p.kill()
			close(dead)
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: crtxd sent no transfer", tc.name)
		}
		first := kill.sends()[before]
		if tc.expire {
			// A blockhash lives 150 blocks: wait for twice that.
			for h := net.BlockHeight(t) + 300; net.BlockHeight(t) < h; {
				time.Sleep(100 * time.Millisecond)
			}
		}
		r.p = startProc(t, r.args...)
		c = r.session(t)
		var got api.Withdrawal
		waitFor(t, func() bool {
			got, err = c.GetWithdrawal(ctx, w.WithdrawalID)
			return err == nil && got.Status.Final()
		})
		if got.Status != crtx.WithdrawalConfirmed || got.Signature == nil {
			t.Fatalf("%s: %+v", tc.name, got)
		}
		if *got.Signature != first {
			t.Errorf("%s: paid by %s, first signed %s", tc.name, *got.Signature, first)
		}
		paid += tc.amount
		confirmed[*got.Signature] = true
		if held := net.TokenBalance(t, got.Destination); held != paid {
			t.Fatalf("%s: the wallet's token account holds %s, want %s", tc.name, held, paid)
		}
	}
	// Every signature crtxd ever sent (a resend repeats one): only the
	// confirmed ones landed.
	landed := r.landed(t, kill.sends())
	if len(landed) != len(confirmed) {
		t.Errorf("%d transfers landed, want the %d confirmed", len(landed), len(confirmed))
	}
	for sig := range landed {
		if !confirmed[sig] {
			t.Errorf("transfer %s landed and was not confirmed", sig)
		}
	}
}

// crtxd killed with SIGKILL at random moments while it pays a stream of
// withdrawals, through an RPC that hides statuses, refuses and duplicates
// sends at random, pays each exactly once: every transfer that landed is
// one confirmed withdrawal, the wallet's token account holds what was
// confirmed, and the ledger verifies.
func TestWithdrawalsUnderKillsAndFaults(t *testing.T) {
	for name, db := range engines(t) {
		t.Run(name, func(t *testing.T) { testWithdrawalsUnderKills(t, db(t)) })
	}
}

func testWithdrawalsUnderKills(t *testing.T, db []string) {
	ctx := context.Background()
	r := newRig(t, db)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(uint64(seed), 42))
	var mu sync.Mutex
	chance := func(p float64) bool {
		mu.Lock()
		defer mu.Unlock()
		return rnd.Float64() < p
	}
	r.proxy.Set("getSignatureStatuses", chaintest.HideStatuses(func(string) bool { return chance(0.5) }))
	r.proxy.Set("sendTransaction", func(c chaintest.Call, forward func() []byte) ([]byte, int) {
		switch {
		case chance(0.3):
			return []byte("unavailable"), http.StatusServiceUnavailable
		case chance(0.3):
			forward()
		}
		return forward(), 0
	})
	var ids []string
	for range 6 {
		c := r.session(t)
		w, err := c.NewWithdrawal(ctx, crtx.Devnet, crtx.MicroPerUSDC)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, w.WithdrawalID)
		mu.Lock()
		pause := time.Duration(rnd.IntN(1500)) * time.Millisecond
		mu.Unlock()
		time.Sleep(pause)
		r.restart(t)
	}
	r.proxy.Set("getSignatureStatuses", nil)
	r.proxy.Set("sendTransaction", nil)
	c := r.session(t)
	confirmed := map[string]bool{}
	var dest string
	for _, id := range ids {
		var got api.Withdrawal
		waitFor(t, func() bool {
			var err error
			got, err = c.GetWithdrawal(ctx, id)
			return err == nil && got.Status.Final()
		})
		if got.Status != crtx.WithdrawalConfirmed || got.Signature == nil || confirmed[*got.Signature] {
			t.Fatalf("withdrawal %s: %+v", id, got)
		}
		confirmed[*got.Signature], dest = true, got.Destination
	}
	// Each withdrawal is 1 USDC: a second transfer for any of them would
	// show here.
	if held := r.net.TokenBalance(t, dest); held != crtx.USDC(len(ids))*crtx.MicroPerUSDC {
		t.Errorf("the wallet's token account holds %s, want %d", held, len(ids))
	}
	r.p.kill()
	if code, out := crtxd(t, append([]string{"ledger", "verify", "--data", r.data}, db...)...); code != 0 {
		t.Errorf("ledger verify: %d\n%s", code, out)
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
