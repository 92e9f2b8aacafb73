package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	crtxpkg "github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/examples/agents"
	"github.com/crtx-market/crtx/keyfile"
)

var bins string // folder of the built crtx and crtxd

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "crtx-bin")
	if err != nil {
		panic(err)
	}
	bins = dir
	for _, b := range [][2]string{{"crtx", "."}, {"crtxd", "../crtxd"}} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, b[0]), b[1]).CombinedOutput(); err != nil {
			os.Stderr.Write(out)
			panic(err)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// bin runs the built crtx with env and returns exit code, stdout, stderr.
func bin(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	return binIn(t, env, "", args...)
}

// binIn is bin with stdin as the command's standard input.
func binIn(t *testing.T, env []string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(bins, "crtx"), args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

func mustJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, s)
	}
}

func TestBinaryCallerAndCreator(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, _ := startMarket(t, 50*time.Millisecond)
	base := []string{"CRTX_URL=" + d.URL, "CRTX_CONFIG=" + filepath.Join(dir, "none.json"), "CRTX_API_KEY="}
	as := func(who string) []string {
		return append(base[:len(base):len(base)], "CRTX_KEYPAIR="+filepath.Join(dir, who+".json"))
	}
	ok := func(env []string, args ...string) string {
		t.Helper()
		code, out, errOut := bin(t, env, args...)
		if code != 0 {
			t.Fatalf("crtx %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
		return out
	}

	// The creator: a wallet, mainnet funds for collateral, a signing key, a service.
	ok(as("creator"), "wallet", "new")
	if code, _, errOut := bin(t, as("creator"), "wallet", "new"); code != 1 || !strings.Contains(errOut, "already holds wallet") {
		t.Errorf("a second wallet new: %d %q", code, errOut)
	}
	var w struct{ Wallet string }
	mustJSON(t, ok(as("creator"), "--json", "wallet", "show"), &w)
	if _, err := d.Market.Funds.OperatorDeposit(ctx, crtxpkg.Mainnet, w.Wallet, 100*crtxpkg.MicroPerUSDC); err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(dir, "agent-key.json")
	var kg struct {
		SigningPublicKey string `json:"signing_public_key"`
	}
	mustJSON(t, ok(as("creator"), "--json", "creator", "keygen", "--out", keyPath), &kg)
	key, err := keyfile.Load(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	h := creator.NewHandler(key, func(_ context.Context, r creator.Request) (string, int, error) {
		return "hello, " + r.Task + " " + string(r.Parameters), 5, nil
	}, creator.Options{})
	svc := httptest.NewServer(h)
	defer svc.Close()
	if h.PublicKey() != kg.SigningPublicKey {
		t.Fatal("keygen printed another key than it wrote")
	}
	ok(as("creator"), "creator", "test", "--endpoint", svc.URL, "--public-key", kg.SigningPublicKey)
	listing := map[string]any{"name": "Greeter", "tagline": "Greets.", "description": "Greets whoever you name.",
		"tags": []string{"writing"}, "input_schema": map[string]any{"type": "object"}, "output_schema": map[string]any{"type": "string"},
		"pricing_model": "pay_per_use", "price_per_call_usdc": 0.25, "endpoint_url": svc.URL, "signing_public_key": kg.SigningPublicKey}
	b, _ := json.Marshal(listing)
	os.WriteFile(filepath.Join(dir, "listing.json"), b, 0o600)
	if code, _, errOut := bin(t, as("creator"), "creator", "create", "--file", filepath.Join(dir, "listing.json")); code == 0 || !strings.Contains(errOut, "--key is required") {
		t.Errorf("creator create without the agent's key file: %d %q", code, errOut)
	}
	var agent api.CreatorAgent
	mustJSON(t, ok(as("creator"), "--json", "creator", "create", "--file", filepath.Join(dir, "listing.json"), "--key", keyPath), &agent)
	if agent.Status != "active" || agent.Collateral != 50*crtxpkg.MicroPerUSDC {
		t.Fatalf("created = %+v", agent)
	}
	if out := ok(as("creator"), "creator", "pause", agent.AgentID); out != "paused "+agent.AgentID+": paused\n" {
		t.Errorf("pause: %q", out)
	}
	if out := ok(as("creator"), "creator", "resume", agent.AgentID); out != "resumed "+agent.AgentID+": active\n" {
		t.Errorf("resume: %q", out)
	}
	var mine api.CreatorAgentList
	mustJSON(t, ok(as("creator"), "--json", "creator", "list"), &mine)
	if len(mine.Agents) != 1 || mine.Agents[0].Status != "active" {
		t.Errorf("creator list = %+v", mine)
	}
	// The listing was signed with the wallet key file: its AgentListed
	// carries the wallet's signature of the listing statement.
	v, err := client.New(d.URL, "").Account(ctx, crtxpkg.Mainnet, crtxpkg.AccountAddress(crtxpkg.AccountListing, agent.AgentID))
	if err != nil || len(v.Transactions) == 0 || v.Transactions[len(v.Transactions)-1].Kind != crtxpkg.TxAgentListed {
		t.Fatalf("listing account = %+v, %v", v, err)
	}
	listed := v.Transactions[len(v.Transactions)-1]
	stmt, err := crtxpkg.ListingStatement(listed.Kind, listed.Data)
	wpub, perr := crtxpkg.ParseAddress("wallet", w.Wallet)
	if err != nil || perr != nil || listed.Data["creator"] != w.Wallet || !crtxpkg.VerifyBase58(wpub, stmt, listed.Data["creator_signature"]) {
		t.Errorf("AgentListed %v is not signed by the wallet key file (%v)", listed.Data, err)
	}

	// The caller: a wallet, devnet funds, a key, and the agent run three ways.
	ok(as("caller"), "wallet", "new")
	var s api.SessionResponse
	mustJSON(t, ok(as("caller"), "--json", "session"), &s)
	if !strings.HasPrefix(s.SessionToken, "crtx_sess_") {
		t.Errorf("session = %+v", s)
	}
	// The token alone on standard output (for $(crtx session) in a curl
	// header), pasted where standard error says, opens the dashboard.
	code, out, errOut := bin(t, as("caller"), "session")
	token := strings.TrimSuffix(out, "\n")
	if code != 0 || !strings.HasPrefix(token, "crtx_sess_") || strings.Contains(token, "\n") ||
		!strings.Contains(errOut, "Paste it on "+d.URL+"/login, under \"With the crtx CLI\"") {
		t.Errorf("session: %d, standard output %q, standard error:\n%s", code, out, errOut)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.PostForm(d.URL+"/dashboard/login", url.Values{"token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/dashboard/" || len(resp.Cookies()) == 0 || resp.Cookies()[0].Value != token {
		t.Errorf("the pasted token: %d to %q, cookies %v", resp.StatusCode, loc, resp.Cookies())
	}
	ok(as("caller"), "airdrop", "5")
	var k api.CreatedKey
	mustJSON(t, ok(as("caller"), "--json", "keys", "create", "cli", "devnet"), &k)
	var keys api.KeyList
	mustJSON(t, ok(as("caller"), "--json", "keys", "list"), &keys)
	if len(keys.Keys) != 1 || keys.Keys[0].ID != k.ID {
		t.Errorf("keys list = %+v", keys)
	}
	caller := append(as("caller"), "CRTX_API_KEY="+k.Key)
	var page api.AgentPage
	mustJSON(t, ok(caller, "agents", "list", "--tags", "writing", "--sort", "price_asc", "--json"), &page)
	if page.Total != 1 || page.Agents[0].AgentID != agent.AgentID {
		t.Errorf("agents list = %+v", page)
	}
	if out := ok(caller, "agents", "show", agent.AgentID); !strings.Contains(out, "Greets whoever") {
		t.Errorf("agents show: %s", out)
	}
	if out := ok(caller, "run", agent.AgentID, "Ada", "--param", "n=2", "--param", "lang=en"); out != `hello, Ada {"lang":"en","n":2}`+"\n" {
		t.Errorf("run printed %q", out)
	}
	var rec api.ExecutionRecord
	mustJSON(t, ok(caller, "run", "--async", agent.AgentID, "Bob", "--json"), &rec)
	if rec.Status != "completed" || *rec.Result != "hello, Bob {}" {
		t.Errorf("async run = %+v", rec)
	}
	if code, out, errOut := binIn(t, caller, "Eve\n", "run", agent.AgentID, "-"); code != 0 || out != "hello, Eve\n {}\n" {
		t.Errorf("run with the task on stdin: %d %q %q", code, out, errOut)
	}
	// Lists have a header row; the catalog shows the API key's environment,
	// whose runs count once the roll-up has posted them.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		lines := strings.Split(ok(caller, "agents", "list"), "\n")
		f := strings.Fields(lines[1])
		if !strings.HasPrefix(lines[0], "ID ") || len(f) < 4 || f[0] != agent.AgentID || !strings.Contains(lines[2], "statistics on devnet") {
			t.Fatalf("agents list with a devnet key:\n%s", strings.Join(lines, "\n"))
		}
		if f[3] != "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("agents list with a devnet key never counts its devnet runs:\n%s", strings.Join(lines, "\n"))
		}
	}
	var list api.ExecutionPage
	mustJSON(t, ok(caller, "--json", "executions", "list", "--agent", agent.AgentID), &list)
	if list.Total != 3 {
		t.Errorf("executions list = %+v", list)
	}
	if out := ok(caller, "executions", "show", rec.ExecutionID); !strings.Contains(out, "completed") {
		t.Errorf("executions show: %s", out)
	}
	if out := ok(caller, "executions", "watch", rec.ExecutionID); !strings.Contains(out, "completed") {
		t.Errorf("executions watch: %s", out)
	}
	if out := ok(caller, "verify", rec.ExecutionID); strings.Count(out, "ok    ") != 8 {
		t.Errorf("verify: %s", out)
	}
	var dsp api.DisputeInfo
	mustJSON(t, ok(caller, "--json", "dispute", rec.ExecutionID, "--reason", "other", "--description", "testing"), &dsp)
	if dsp.Status != "open" {
		t.Errorf("dispute = %+v", dsp)
	}
	var earned crtxpkg.Earnings
	mustJSON(t, ok(as("creator"), "--json", "creator", "earnings", "--environment", "devnet"), &earned)
	if earned.Executions != 3 || earned.Total != 742_500 {
		t.Errorf("earnings = %+v", earned)
	}
	// With a devnet key, the creator's commands read devnet as the money
	// commands do; --environment says otherwise.
	var ck api.CreatedKey
	mustJSON(t, ok(as("creator"), "--json", "keys", "create", "creator-cli", "devnet"), &ck)
	keyed := append(as("creator"), "CRTX_API_KEY="+ck.Key)
	mustJSON(t, ok(keyed, "--json", "creator", "earnings"), &earned)
	if earned.Environment != crtxpkg.Devnet || earned.Executions != 3 {
		t.Errorf("earnings with a devnet key = %+v", earned)
	}
	// The statistics are the roll-up's, which follows the ledger within
	// its interval: waited for, not assumed.
	var lines []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		lines = strings.Split(ok(keyed, "creator", "list"), "\n")
		if strings.HasSuffix(strings.TrimSpace(lines[1]), " 3") || time.Now().After(deadline) {
			break
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(lines[0]), "DEVNET RUNS") || !strings.HasSuffix(strings.TrimSpace(lines[1]), " 3") {
		t.Errorf("creator list with a devnet key:\n%s", strings.Join(lines, "\n"))
	}
	if lines := strings.Split(ok(keyed, "creator", "list", "--environment", "mainnet"), "\n"); !strings.HasSuffix(strings.TrimSpace(lines[0]), "MAINNET RUNS") ||
		!strings.HasSuffix(strings.TrimSpace(lines[1]), " 0") {
		t.Errorf("creator list --environment mainnet:\n%s", strings.Join(lines, "\n"))
	}
	// Streamed: a creator that answers whole streams as one piece.
	if code, out, errOut := bin(t, caller, "run", "--stream", agent.AgentID, "Zoe"); code != 0 || out != "hello, Zoe {}\n" || !strings.Contains(errOut, "completed") {
		t.Errorf("run --stream: %d %q %q", code, out, errOut)
	}
	ok(as("creator"), "creator", "delist", agent.AgentID)

	// Failures: a non-zero exit and the error code on stderr.
	code, out, errOut = bin(t, caller, "run", agent.AgentID, "again")
	if code == 0 || out != "" || !strings.Contains(errOut, "agent_not_found") {
		t.Errorf("run of a delisted agent: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := bin(t, caller, "frobnicate"); code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Errorf("unknown command: %d %q", code, errOut)
	}

	// crtx login saves a profile (the URL, the wallet and a new devnet key,
	// readable by its owner alone) that later commands use with no flags or
	// variables.
	cfgPath := filepath.Join(dir, "config.json")
	if out := ok(append(as("caller"), "CRTX_CONFIG="+cfgPath), "login", "--profile", "laptop"); !strings.Contains(out, `profile "laptop" saved`) {
		t.Errorf("login: %s", out)
	}
	if st, err := os.Stat(cfgPath); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("config file: %v, %v", st, err)
	}
	var wl api.WalletResponse
	mustJSON(t, ok([]string{"CRTX_CONFIG=" + cfgPath, "CRTX_URL=", "CRTX_API_KEY=", "CRTX_KEYPAIR="}, "balance", "--json"), &wl)
	if len(wl.Balances) != 1 || wl.Balances["devnet"].Available != 4_000_000 {
		t.Errorf("balance through the saved profile = %+v", wl)
	}
	// A key file given in a variable wins over the profile's API key.
	wl = api.WalletResponse{}
	mustJSON(t, ok([]string{"CRTX_CONFIG=" + cfgPath, "CRTX_URL=", "CRTX_API_KEY=", "CRTX_KEYPAIR=" + filepath.Join(dir, "creator.json")}, "balance", "--json"), &wl)
	if wl.Wallet != w.Wallet {
		t.Errorf("balance with CRTX_KEYPAIR over a profile shows wallet %s, want the creator's %s", wl.Wallet, w.Wallet)
	}
	// A hand-written profile works the same, named by --profile.
	prof, _ := json.Marshal(map[string]any{"profiles": map[string]any{
		"local": map[string]string{"url": d.URL, "api_key": k.Key, "keypair": filepath.Join(dir, "caller.json")}}})
	os.WriteFile(cfgPath, prof, 0o600)
	wl = api.WalletResponse{}
	mustJSON(t, ok([]string{"CRTX_CONFIG=" + cfgPath, "CRTX_URL=", "CRTX_API_KEY=", "CRTX_KEYPAIR="}, "--profile", "local", "--json", "balance"), &wl)
	if len(wl.Balances) != 1 || wl.Balances["devnet"].Available != 4_000_000 {
		t.Errorf("balance through the profile = %+v", wl)
	}
	// A metered listing from a file of the same shape: its three prices,
	// signed, and the collateral of its most's tier.
	listing["name"], listing["pricing_model"], listing["price_per_call_usdc"] = "Metered greeter", "metered", 0.001
	listing["price_per_1k_tokens_usdc"], listing["max_price_per_call_usdc"] = 0.0025, 0.5
	b, _ = json.Marshal(listing)
	os.WriteFile(filepath.Join(dir, "metered.json"), b, 0o600)
	var meteredAgent api.CreatorAgent
	mustJSON(t, ok(as("creator"), "--json", "creator", "create", "--file", filepath.Join(dir, "metered.json"), "--key", keyPath), &meteredAgent)
	if meteredAgent.PricingModel != "metered" || meteredAgent.Per1k == nil || *meteredAgent.Per1k != 2_500 ||
		meteredAgent.Cap == nil || *meteredAgent.Cap != 500_000 || meteredAgent.Collateral != 50*crtxpkg.MicroPerUSDC {
		t.Fatalf("the metered listing = %+v", meteredAgent)
	}
	if out := ok(as("creator"), "agents", "show", meteredAgent.AgentID, "--environment", "devnet"); !strings.Contains(out,
		"price        0.001 USDC a call + 0.0025 per 1,000 tokens, at most 0.5 USDC (metered)") {
		t.Errorf("agents show of a metered listing:\n%s", out)
	}
	// Run at most 0.01: 5 tokens cost 0.001 + 0.0000125, the half
	// micro-USDC dropped; the rest of the hold returns.
	if code, out, errOut := bin(t, caller, "run", meteredAgent.AgentID, "x", "--max-price", "0.01"); code != 0 ||
		!strings.Contains(errOut, "completed · 0.001012 USDC (5 tokens; 0.01 held, 0.008988 returned)") {
		t.Errorf("crtx run --max-price of a metered agent: %d %s %s", code, out, errOut)
	}
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startDevBinary starts crtxd dev, as a newcomer does, until the test
// ends, and returns it, the URL, API key and first agent it printed, and
// its data folder.
func startDevBinary(t *testing.T) (cmd *exec.Cmd, url, key, agent, data string) {
	t.Helper()
	data = filepath.Join(t.TempDir(), "dev")
	cmd = exec.Command(filepath.Join(bins, "crtxd"), "dev", "--addr", freeAddr(t), "--data", data, "--block-interval", "100ms")
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = &bytes.Buffer{}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		switch {
		case len(f) > 4 && f[0] == "crtx" && f[1] == "marketplace":
			url = f[4]
		case len(f) > 2 && f[0] == "API" && f[1] == "key:":
			key = f[2]
		case len(f) > 1 && f[0] == "agent:" && agent == "":
			agent = f[1]
		}
		if strings.HasPrefix(lines.Text(), "Ctrl-C") {
			break
		}
	}
	if url == "" || key == "" || agent == "" {
		t.Fatalf("crtxd dev printed no URL, key or agent (stderr: %s)", cmd.Stderr)
	}
	go func() {
		for lines.Scan() {
		}
	}()
	return cmd, url, key, agent, data
}

// crtxd dev, as a newcomer runs it: the printed key runs an example agent
// with crtx run, to a completed execution that verifies.
func TestDevQuickStart(t *testing.T) {
	cmd, url, key, agent, data := startDevBinary(t)
	env := []string{"CRTX_URL=" + url, "CRTX_API_KEY=" + key, "CRTX_CONFIG=" + filepath.Join(data, "none.json")}
	code, out, errOut := bin(t, env, "--json", "run", agent, "The quick brown fox jumps over the lazy dog.")
	if code != 0 {
		t.Fatalf("crtx run: %d %s %s", code, out, errOut)
	}
	var rec api.ExecutionRecord
	mustJSON(t, out, &rec)
	var stats struct{ Words int }
	json.Unmarshal([]byte(*rec.Result), &stats)
	if rec.Status != "completed" || stats.Words != 9 {
		t.Fatalf("execution = %+v", rec)
	}
	if code, out, errOut := bin(t, env, "verify", rec.ExecutionID); code != 0 {
		t.Fatalf("crtx verify: %d\n%s%s", code, out, errOut)
	}

	// The README's crtx run line, on the agent it is written for, and the
	// same with a parameter the agent does not declare.
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	runLine := regexp.MustCompile(`(?m)^crtx run \$AGENT_ID "[^"]*" --param [^#\n]*`).FindString(string(readme))
	words := shellWords(strings.TrimSpace(runLine))
	if len(words) < 5 {
		t.Fatalf("README.md has no crtx run line with a parameter: %q", runLine)
	}
	words[2] = agent
	code, out, errOut = bin(t, env, append([]string{"--json"}, words[1:]...)...)
	rec = api.ExecutionRecord{}
	if code != 0 || json.Unmarshal([]byte(out), &rec) != nil || rec.Status != "completed" {
		t.Errorf("the README's %q: %d %s %s", runLine, code, out, errOut)
	}
	code, _, errOut = bin(t, env, append(words[1:], "--param", "lang=en")...)
	if code == 0 || !strings.Contains(errOut, "invalid_request") || !strings.Contains(errOut, "lang") {
		t.Errorf("an undeclared parameter: %d %q", code, errOut)
	}

	// The creator quick start, as the README writes it, as the demo wallet:
	// a signing key, the example agent, a test request, the sample listing.
	creatorEnv := append(env, "CRTX_KEYPAIR="+filepath.Join(data, "demo-wallet.json"))
	keyPath := filepath.Join(t.TempDir(), "agent-key.json")
	code, out, errOut = bin(t, creatorEnv, "creator", "keygen", "--out", keyPath, "--json")
	var kg struct {
		SigningPublicKey string `json:"signing_public_key"`
	}
	mustJSON(t, out, &kg)
	skey, err := keyfile.Load(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	// A second keygen keeps the key, and names it.
	if code, _, errOut := bin(t, creatorEnv, "creator", "keygen", "--out", keyPath); code == 0 || !strings.Contains(errOut, "already holds the signing key "+kg.SigningPublicKey) {
		t.Errorf("keygen over an existing key: %d %q", code, errOut)
	}
	actx, stopAgent := context.WithCancel(context.Background())
	defer stopAgent()
	ready := make(chan string, 1)
	go agents.Run(actx, "127.0.0.1:0", skey, url, nil, agents.TextStats, func(u, _ string) { ready <- u })
	endpoint := <-ready
	if code, out, errOut := bin(t, creatorEnv, "creator", "test", "--endpoint", endpoint, "--public-key", kg.SigningPublicKey); code != 0 {
		t.Fatalf("crtx creator test: %d\n%s%s", code, out, errOut)
	}
	sample, err := os.ReadFile("../../examples/textstats/listing.json")
	if err != nil {
		t.Fatal(err)
	}
	listing := strings.NewReplacer("YOUR_SIGNING_PUBLIC_KEY", kg.SigningPublicKey, "http://127.0.0.1:9101/execute", endpoint).Replace(string(sample))
	listingPath := filepath.Join(t.TempDir(), "listing.json")
	os.WriteFile(listingPath, []byte(listing), 0o600)
	if code, out, errOut := bin(t, creatorEnv, "creator", "create", "--file", listingPath, "--key", keyPath); code != 0 || !strings.Contains(out, "10 USDC of collateral locked") {
		t.Fatalf("crtx creator create: %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := bin(t, creatorEnv, "creator", "list"); code != 0 || !strings.Contains(out, "Text statistics") {
		t.Errorf("crtx creator list: %d\n%s", code, out)
	}
	if err := client.New(url, "").Do(context.Background(), "GET", "/healthz", "", nil, nil); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("crtxd dev did not stop cleanly: %v (stderr: %s)", err, cmd.Stderr)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("crtxd dev did not stop on Ctrl-C")
	}
}

// The README's callers' quick start runs as pasted, in bash, in a home of
// its own, against crtxd dev (its URL in place of the README's
// http://127.0.0.1:8080): it installs crtx, makes a wallet, funds and logs
// in, runs the example agent four ways and verifies the newest execution.
func TestREADMECallers(t *testing.T) {
	_, url, _, _, _ := startDevBinary(t)
	out := runREADMEBlock(t, "Callers", strings.NewReplacer("http://127.0.0.1:8080", url))
	for _, want := range []string{"Logged in to " + url, `"top_words"`, "completed", "ok     receipt"} {
		if !strings.Contains(out, want) {
			t.Errorf("the callers' block printed no %q:\n%s", want, out)
		}
	}
}

// The README's creators' quick start runs as pasted, as the demo wallet of
// crtxd dev (its URL and data folder in place of the README's): it installs
// crtx and the example agent, makes the agent's key, tests the endpoint,
// lists the sample, restarts the agent for its listing alone, pauses it
// and reads the earnings.
func TestREADMECreators(t *testing.T) {
	_, url, _, _, data := startDevBinary(t)
	out := runREADMEBlock(t, "Creators", strings.NewReplacer("http://127.0.0.1:8080", url, "./crtx-dev/", data+"/"))
	for _, want := range []string{"10 USDC of collateral locked", "Text statistics", "paused"} {
		if !strings.Contains(out, want) {
			t.Errorf("the creators' block printed no %q:\n%s", want, out)
		}
	}
}

// runREADMEBlock runs the first sh block under the README's heading "###
// name", with r's replacements, in bash, in a copy of this checkout's files
// (the block writes files where it runs), as a newcomer's shell: no crtx
// settings, a home and GOPATH of its own (the module and build caches
// shared, to build faster). What the block leaves running in the
// background is stopped with it. It returns what the block printed; the
// block must succeed.
func runREADMEBlock(t *testing.T, name string, r *strings.Replacer) string {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)### " + name + "\n.*?```sh\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatalf("README.md has no sh block under ### %s", name)
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", r.Replace(string(m[1])))
	cmd.Dir = checkoutCopy(t)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	goEnv := func(name string) string {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CRTX_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "GOPATH=") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "HOME="+t.TempDir(), "GOPATH="+t.TempDir(), "GOMODCACHE="+goEnv("GOMODCACHE"), "GOCACHE="+goEnv("GOCACHE"))
	// Into a file, not a pipe: a background job holds its output open past
	// the shell's exit, which is the block's end.
	log, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	out, _ := os.ReadFile(log.Name())
	if err != nil {
		t.Fatalf("the README's %s block: %v\n%s", name, err, out)
	}
	return string(out)
}

// checkoutCopy copies the files of this checkout that git tracks, as they
// are now, into a new folder, and returns it.
func checkoutCopy(t *testing.T) string {
	t.Helper()
	root := "../.."
	list, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	dst := t.TempDir()
	for _, f := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		src := filepath.Join(root, f)
		fi, err := os.Lstat(src)
		if err != nil {
			continue // deleted in the working tree
		}
		to := filepath.Join(dst, f)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			link, _ := os.Readlink(src)
			os.Symlink(link, to)
			continue
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}
