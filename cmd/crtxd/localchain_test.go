package main

import (
	"bytes"
	"html"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain/chaintest"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/internal/nodetest"
	"github.com/crtx-market/crtx/keyfile"
)

// crtxd dev --local-chain is the whole chain in one command: the lines its
// banner prints pay a deposit in and a call by x402, an API-key call is paid
// from the deposit, a withdrawal lands on the chain, the reserves are what
// the treasury holds; a restart starts a new chain and a new ledger with it,
// never the old ledger on the new chain.
func TestDevLocalChain(t *testing.T) {
	chaintest.Require(t)
	data := filepath.Join(t.TempDir(), "crtx-dev-local")
	banner, stop := startDev(t, data, "--local-chain", "--local-chain-slot", "50ms")
	field := func(re string) string {
		t.Helper()
		m := regexp.MustCompile(re).FindStringSubmatch(banner)
		if m == nil {
			t.Fatalf("the banner lacks %s:\n%s", re, banner)
		}
		return m[1]
	}
	url, apiKey := field(`at (http://127\.0\.0\.1:\d+)`), field(`API key:\s+(\S+)`)
	rpcURL, mint := field(`local Solana network at (http://\S+)`), field(`test USDC mint (\w+)`)
	key, err := keyfile.Load(filepath.Join(data, "demo-wallet.json"))
	if err != nil {
		t.Fatal(err)
	}
	wallet := chaintest.Address(key)
	held := func(owner string) crtx.USDC {
		t.Helper()
		account, _, _ := solana.FindAssociatedTokenAddress(solana.MustPublicKeyFromBase58(owner), solana.MustPublicKeyFromBase58(mint))
		b, err := rpc.New(rpcURL).GetTokenAccountBalance(ctx, account, rpc.CommitmentConfirmed)
		if err != nil {
			t.Fatalf("token balance of %s: %v", owner, err)
		}
		v, _ := strconv.ParseInt(b.Value.Amount, 10, 64)
		return crtx.USDC(v)
	}
	if got := held(wallet); got != 100*crtx.MicroPerUSDC {
		t.Fatalf("the demo wallet holds %s test USDC on the chain, want 100", got)
	}

	// The deposit line, as printed.
	out := runPrinted(t, banner, "deposit 10 ")
	if !strings.Contains(out, "credited 10 USDC to devnet") {
		t.Fatalf("the banner's deposit line:\n%s", out)
	}
	c := client.New(url, apiKey)
	agentID := field(`agent:\s+(agt_\S+)`)
	if rec, err := c.Execute(ctx, agentID, crtx.ExecuteParams{Task: "The quick brown fox. It barked."}, client.ExecuteOptions{}); err != nil || rec.Status != crtx.ExecCompleted {
		t.Fatalf("a call paid from the deposit: %+v %v", rec, err)
	}
	// The x402 line, as printed: a call paid on the chain, no account.
	if out := runPrinted(t, banner, "run --x402 "); !strings.Contains(out, `"words"`) {
		t.Fatalf("the banner's x402 line:\n%s", out)
	}
	payWithAnyWallet(t, url, rpcURL, agentID, held)

	// A withdrawal to the demo wallet's token account lands.
	s, _, err := client.New(url, "").SignIn(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	before := held(wallet)
	w, err := s.NewWithdrawal(ctx, crtx.Devnet, 5*crtx.MicroPerUSDC)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); w.Status != crtx.WithdrawalConfirmed; time.Sleep(50 * time.Millisecond) {
		if w.Status == crtx.WithdrawalFailed || time.Now().After(deadline) {
			t.Fatalf("withdrawal: %+v", w)
		}
		if w, err = s.GetWithdrawal(ctx, w.WithdrawalID); err != nil {
			t.Fatal(err)
		}
	}
	if got := held(wallet); got != before+5*crtx.MicroPerUSDC {
		t.Errorf("after a withdrawal of 5 the demo wallet holds %s, had %s", got, before)
	}
	rs, err := c.Reserves(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.Reserves) != 1 || rs.Reserves[0].Environment != crtx.Devnet {
		t.Fatalf("reserves: %+v, want devnet's alone", rs.Reserves)
	}
	if r := rs.Reserves[0]; r.OnChain != held(r.Treasury) || r.Surplus < 0 || r.Surplus != r.OnChain-r.Liabilities {
		t.Errorf("reserves %+v; the treasury holds %s on the chain", r, held(r.Treasury))
	}
	// A stand-in for devnet to x402's clients, the network is still named
	// by its own genesis hash wherever proof is read: a custom cluster.
	if r := rs.Reserves[0]; r.Cluster != "custom" {
		t.Errorf("the reserves name the local network %q, want custom", r.Cluster)
	}
	if pr, err := client.New(url, "").PaymentRequired(ctx, agentID, crtx.ExecuteParams{Task: "x"}); err != nil || len(pr.Accepts) != 1 ||
		pr.Accepts[0].Network != daemon.NetworkDevnet || pr.Accepts[0].Asset != daemon.USDCDevnet {
		t.Errorf("the local network's x402 requirements: %+v, %v; want devnet's id and USDC address", pr, err)
	}
	stop()
	// The network stopped with crtxd.
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := rpc.New(rpcURL).GetHealth(ctx); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the local chain still answers after crtxd stopped")
		}
	}
	if out, err := exec.Command(crtxdBinary(t), "ledger", "verify", "--data", data).CombinedOutput(); err != nil {
		t.Fatalf("ledger verify: %v\n%s", err, out)
	}

	// Started again: a new chain, and a ledger that starts with it; the
	// folder's keys stay.
	again, _ := startDev(t, data, "--local-chain", "--local-chain-slot", "50ms")
	rpc2 := regexp.MustCompile(`local Solana network at (http://\S+)`).FindStringSubmatch(again)
	if rpc2 == nil || rpc2[1] == rpcURL || !strings.Contains(again, "demo wallet:  "+wallet+", 0 USDC on devnet") ||
		!strings.Contains(again, "a second run starts a new chain, and a new ledger with it") {
		t.Fatalf("the second start's banner:\n%s", again)
	}
	c2 := client.New(regexp.MustCompile(`at (http://127\.0\.0\.1:\d+)`).FindStringSubmatch(again)[1],
		regexp.MustCompile(`API key:\s+(\S+)`).FindStringSubmatch(again)[1])
	if d, err := c2.Deposits(ctx, crtx.Devnet, 10, 0); err != nil || len(d.Deposits) != 0 {
		t.Errorf("deposits after a restart: %+v %v, want none: their chain is gone", d, err)
	}
}

// A folder that holds a marketplace of crtxd dev without --local-chain is
// refused, and so is a folder of --local-chain that ran without it since:
// their money would mix with the new chain's, and is never emptied.
func TestDevLocalChainRefusesAnotherFolder(t *testing.T) {
	chaintest.Require(t)
	refused := func(data string) {
		t.Helper()
		var out, errs bytes.Buffer
		code := run(ctx, []string{"dev", "--data", data, "--addr", "127.0.0.1:0", "--local-chain", "--local-chain-slot", "50ms"}, &out, &errs)
		if code == 0 || !strings.Contains(errs.String(), "holds a marketplace that did not run on --local-chain, or ran without it since") ||
			!strings.Contains(errs.String(), "--data ./crtx-dev-local") {
			t.Fatalf("exit %d: %s%s", code, out.String(), errs.String())
		}
		if _, err := os.Stat(filepath.Join(data, "crtx.db")); err != nil {
			t.Errorf("the refused folder's store: %v", err)
		}
	}
	plain := filepath.Join(t.TempDir(), "crtx-dev")
	_, stop := startDev(t, plain)
	stop()
	refused(plain)

	local := filepath.Join(t.TempDir(), "crtx-dev-local")
	_, stop = startDev(t, local, "--local-chain", "--local-chain-slot", "50ms")
	stop()
	_, stop = startDev(t, local)
	stop()
	refused(local)
}

// runPrinted runs, with the crtx command line, the line of banner that
// holds marker ("CRTX_URL=… CRTX_KEYPAIR=… go run ./cmd/crtx ARGS"), in a
// home of its own, and returns what it printed; it must succeed.
func runPrinted(t *testing.T, banner, marker string) string {
	t.Helper()
	var line string
	for _, l := range strings.Split(banner, "\n") {
		if strings.Contains(l, "go run ./cmd/crtx "+marker) {
			line = strings.TrimSpace(l)
		}
	}
	env, args, ok := strings.Cut(line, " go run ./cmd/crtx ")
	if !ok {
		t.Fatalf("the banner has no line with %q:\n%s", marker, banner)
	}
	cmd := exec.Command(crtxBinary(t), shellWords(args)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir(), "CRTX_API_KEY=")
	cmd.Env = append(cmd.Env, strings.Fields(env)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	return string(out)
}

// shellWords splits a printed command line's arguments as a shell does
// for the quoting the banner uses: words, and 'single-quoted' ones.
func shellWords(s string) []string {
	var words []string
	for len(s) > 0 {
		s = strings.TrimLeft(s, " ")
		if strings.HasPrefix(s, "'") {
			end := strings.Index(s[1:], "'")
			words, s = append(words, s[1:end+1]), s[end+2:]
			continue
		}
		w, rest, _ := strings.Cut(s, " ")
		if w != "" {
			words = append(words, w)
		}
		s = rest
	}
	return words
}

// crtxBinary is the crtx command line, built once per test run.
func crtxBinary(t *testing.T) string { return binaryOf(t, "../crtx", "crtx") }

// payWithAnyWallet: a new wallet gets test USDC and SOL on the local chain
// from the faucet (crtx airdrop), then pays calls with the agent page's
// snippets as pasted: x402's own client (@x402/fetch and @x402/svm, set
// up as their READMEs show, default spend controls included) and the
// command line.
func payWithAnyWallet(t *testing.T, url, rpcURL, agentID string, held func(string) crtx.USDC) {
	t.Helper()
	dir := t.TempDir()
	try := func(args ...string) (string, error) {
		cmd := exec.Command(crtxBinary(t), args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir(), "CRTX_API_KEY=", "CRTX_URL="+url,
			"CRTX_KEYPAIR=payer.json")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	cli := func(args ...string) string {
		t.Helper()
		out, err := try(args...)
		if err != nil {
			t.Fatalf("crtx %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	cli("wallet", "new")
	// Before the faucet: refused in words that name the faucet.
	if out, err := try("run", agentID, "Hello there.", "--x402", "--rpc", rpcURL); err == nil ||
		!strings.Contains(out, "no USDC token account") || !strings.Contains(out, "crtx airdrop") {
		t.Errorf("an x402 call from a wallet without USDC: %v\n%s", err, out)
	}
	key, err := keyfile.Load(filepath.Join(dir, "payer.json"))
	if err != nil {
		t.Fatal(err)
	}
	payer := chaintest.Address(key)
	if out := cli("airdrop", "5"); !strings.Contains(out, "sent 5 test USDC to "+payer) || !strings.Contains(out, "SOL for its fees") {
		t.Fatalf("the faucet: %s", out)
	}
	if got := held(payer); got != 5*crtx.MicroPerUSDC {
		t.Fatalf("after the faucet the new wallet holds %s test USDC on the chain, want 5", got)
	}

	page := getPage(t, url+"/agents/"+agentID)
	snippet := func(id string) string {
		t.Helper()
		m := regexp.MustCompile(`(?s)<pre tabindex="0" id="` + id + `">(.*?)</pre>`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("the agent page has no %s snippet", id)
		}
		return html.UnescapeString(m[1])
	}
	fetch := snippet("x402-fetch")
	if !strings.Contains(fetch, rpcURL) {
		t.Errorf("the fetch snippet does not name the local chain's RPC URL %s:\n%s", rpcURL, fetch)
	}
	if err := os.WriteFile(filepath.Join(dir, "pay.mjs"), []byte(fetch), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(nodetest.Modules(t, "CRTX_X402", "@x402/fetch"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "pay.mjs")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "200 ") {
		t.Fatalf("the agent page's fetch snippet, as pasted: %v\n%s", err, out)
	}
	// The command line's snippet, as pasted.
	line, ok := strings.CutPrefix(snippet("x402-cli"), "crtx ")
	if !ok {
		t.Fatalf("the command line snippet: %q", snippet("x402-cli"))
	}
	cli(shellWords(line)...)
	if a, err := client.New(url, "").Agent(ctx, agentID, crtx.Devnet); err != nil || held(payer) != 5*crtx.MicroPerUSDC-2*a.Price {
		t.Errorf("after two calls the new wallet holds %s on the chain (agent %+v, %v)", held(payer), a, err)
	}
}

// getPage reads a page that must answer 200.
func getPage(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d\n%s", url, resp.StatusCode, b)
	}
	return string(b)
}
