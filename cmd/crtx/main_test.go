package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"database/sql"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	crtxpkg "github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/daemon"
	"github.com/mr-tron/base58"
	_ "modernc.org/sqlite"
)

// startMarket starts a marketplace on 127.0.0.1 for the command line to
// talk to, sealing blocks every blocks, and the configuration it runs with.
func startMarket(t *testing.T, blocks time.Duration) (*daemon.Daemon, daemon.Config) {
	t.Helper()
	cfg := daemon.Defaults()
	cfg.RateLimitIP = 0 // tests sign in often from one address
	cfg.Addr, cfg.Data, cfg.AllowPrivateEndpoints, cfg.LogOutput = "127.0.0.1:0", t.TempDir(), true, &bytes.Buffer{}
	cfg.BlockInterval = blocks
	d, err := daemon.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, cfg
}

// listAgent lists the agent at endpoint, whose results key signs, for a
// new creator with mainnet funds for the collateral, and returns its id.
func listAgent(t *testing.T, d *daemon.Daemon, endpoint string, key ed25519.PrivateKey) string {
	t.Helper()
	ctx := context.Background()
	_, ck, _ := ed25519.GenerateKey(nil)
	cc, _, err := client.New(d.URL, "").SignIn(ctx, ck)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Market.Funds.OperatorDeposit(ctx, crtxpkg.Mainnet, crtxpkg.Address(ck.Public().(ed25519.PublicKey)), 100*crtxpkg.MicroPerUSDC); err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	raw := func(s string) *json.RawMessage { r := json.RawMessage(s); return &r }
	price, tags := crtxpkg.USDC(10_000), []string{"writing"}
	pub := crtxpkg.Address(key.Public().(ed25519.PublicKey))
	a, err := cc.WithAgentKey(key).CreateListing(ctx, crtxpkg.ListingParams{Name: str("Echo"), Tagline: str("Echoes."), Description: str("Echoes."),
		Tags: &tags, InputSchema: raw(`{"type":"object"}`), OutputSchema: raw(`{"type":"string"}`), PricingModel: str("pay_per_use"),
		Price: &price, EndpointURL: str(endpoint), SigningPublicKey: str(pub)})
	if err != nil {
		t.Fatal(err)
	}
	return a.AgentID
}

func TestWalletAirdropKeys(t *testing.T) {
	ctx := context.Background()
	d, _ := startMarket(t, time.Second)
	t.Setenv("CRTX_URL", d.URL)
	t.Setenv("CRTX_API_KEY", "")
	kp := filepath.Join(t.TempDir(), "id.json")
	crtx := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(ctx, append([]string{"--keypair", kp}, args...), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	if code, _, errOut := crtx("balance"); code == 0 || !strings.Contains(errOut, "crtx wallet new") {
		t.Errorf("balance without a wallet: %d %s", code, errOut)
	}
	if code, out, _ := crtx("wallet", "new"); code != 0 || !strings.Contains(out, "written to") {
		t.Fatalf("wallet new: %d %s", code, out)
	}
	if code, _, _ := crtx("wallet", "new"); code == 0 {
		t.Error("wallet new replaced an existing wallet")
	}
	if code, out, _ := crtx("airdrop", "12.5"); code != 0 || !strings.Contains(out, "available 12.5 USDC") {
		t.Fatalf("airdrop: %d %s", code, out)
	}
	code, out, _ := crtx("--json", "keys", "create", "ci", "devnet", "--spend-limit", "5")
	var k struct {
		ID, Key string
	}
	if code != 0 || json.Unmarshal([]byte(out), &k) != nil || !strings.HasPrefix(k.Key, "crtx_test_") {
		t.Fatalf("keys create: %d %s", code, out)
	}
	t.Setenv("CRTX_API_KEY", k.Key)
	// login with a key checks it and saves it; a bad one saves nothing.
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	t.Setenv("CRTX_CONFIG", cfgPath)
	if code, out, errOut := crtx("login"); code != 0 || !strings.Contains(out, "with a devnet key") {
		t.Fatalf("login with a key: %d %s %s", code, out, errOut)
	}
	if b, _ := os.ReadFile(cfgPath); !strings.Contains(string(b), k.Key) {
		t.Errorf("the saved profile lacks the key:\n%s", b)
	}
	if code, _, errOut := crtx("login", "--api-key", crtxpkg.TestKeyPrefix+"bogus", "--profile", "bad"); code != 1 || !strings.Contains(errOut, "invalid_api_key") {
		t.Errorf("login with a bad key: %d %s", code, errOut)
	}
	if b, _ := os.ReadFile(cfgPath); strings.Contains(string(b), "bogus") {
		t.Errorf("a bad key was saved:\n%s", b)
	}
	t.Setenv("CRTX_CONFIG", filepath.Join(t.TempDir(), "none.json"))
	if code, out, _ := crtx("balance"); code != 0 || !strings.Contains(out, "AVAILABLE") || strings.Join(strings.Fields(strings.Split(out, "\n")[1]), " ") != "devnet 12.5 0" || strings.Contains(out, "mainnet") {
		t.Errorf("balance with a devnet key: %d %q", code, out)
	}
	if code, out, _ := crtx("keys", "revoke", k.ID); code != 0 || !strings.Contains(out, "revoked") {
		t.Errorf("revoke: %d %s", code, out)
	}
	if code, _, errOut := crtx("balance"); code == 0 || !strings.Contains(errOut, "invalid_api_key") {
		t.Errorf("balance with a revoked key: %d %s", code, errOut)
	}
	// A profile whose key went stale (revoked here; a marketplace whose
	// data was replaced is the same) is replaced by login with the wallet,
	// which never needs the old key: with no key given, or an empty one.
	t.Setenv("CRTX_CONFIG", cfgPath)
	t.Setenv("CRTX_API_KEY", "")
	stale := regexp.MustCompile(`"api_key": "[^"]*"`)
	for _, args := range [][]string{{"login"}, {"login", "--api-key", ""}} {
		b, err := os.ReadFile(cfgPath)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfgPath, stale.ReplaceAll(b, []byte(`"api_key": "`+k.Key+`"`)), 0o600); err != nil {
			t.Fatal(err)
		}
		if code, _, errOut := crtx("executions", "list"); code == 0 || !strings.Contains(errOut, "invalid_api_key") {
			t.Fatalf("a command with the stale profile: %d %s", code, errOut)
		}
		if code, out, errOut := crtx(args...); code != 0 || !strings.Contains(out, "with a devnet key") {
			t.Fatalf("%s over a stale profile: %d %s %s", args, code, out, errOut)
		}
		if code, out, errOut := crtx("executions", "list"); code != 0 {
			t.Errorf("a command after %s: %d %s %s", args, code, out, errOut)
		}
	}

	if code, _, errOut := crtx("airdrop", "0.0000001"); code == 0 || !strings.Contains(errOut, "6 decimals") {
		t.Errorf("over-precise airdrop: %d %s", code, errOut)
	}
}

func TestCreatorTest(t *testing.T) {
	ctx := context.Background()
	d, _ := startMarket(t, daemon.Defaults().BlockInterval)
	_, key, _ := ed25519.GenerateKey(nil)
	h := creator.NewHandler(key, func(context.Context, creator.Request) (string, int, error) { return "hi", 0, nil }, creator.Options{})
	srv := httptest.NewServer(h)
	defer srv.Close()
	t.Setenv("CRTX_URL", d.URL)
	kp := filepath.Join(t.TempDir(), "id.json")
	crtx := func(args ...string) (int, string) {
		var out bytes.Buffer
		code := run(ctx, append([]string{"--keypair", kp}, args...), strings.NewReader(""), &out, &out)
		return code, out.String()
	}
	crtx("wallet", "new")
	code, out := crtx("creator", "test", "--endpoint", srv.URL, "--public-key", h.PublicKey())
	if code != 0 || !strings.Contains(out, "signature  ok") || !strings.Contains(out, "status     completed") {
		t.Errorf("good endpoint: %d\n%s", code, out)
	}
	_, other, _ := ed25519.GenerateKey(nil)
	otherPub := base58.Encode(other.Public().(ed25519.PublicKey))
	code, out = crtx("creator", "test", "--endpoint", srv.URL, "--public-key", otherPub)
	// A failure shows the exchange: here a signature the key does not verify.
	if code == 0 || !strings.Contains(out, "signature  FAILED") || !strings.Contains(out, "problem") ||
		!strings.Contains(out, "--- sent\nPOST / HTTP/1.1\n") || !strings.Contains(out, "X-Crtx-Signing-Key: "+otherPub) ||
		!strings.Contains(out, "--- received\nHTTP/1.1 200 OK\n") || !strings.Contains(out, `"signature":"ed25519:`) {
		t.Errorf("another key: %d\n%s", code, out)
	}
	code, out = crtx("--json", "creator", "test", "--endpoint", "http://127.0.0.1:1/execute", "--public-key", h.PublicKey())
	var rep struct {
		Reachable bool
		Problems  []string
		Exchange  struct{ Request, Response string }
	}
	if code == 0 || json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &rep) != nil || rep.Reachable ||
		!strings.Contains(strings.Join(rep.Problems, ";"), "the connection was refused") ||
		!strings.HasPrefix(rep.Exchange.Request, "POST /execute HTTP/1.1\n") || rep.Exchange.Response != "" {
		t.Errorf("closed port: %d\n%s", code, out)
	}
	code, out = crtx("creator", "test", "--endpoint", "http://127.0.0.1:1/execute", "--public-key", h.PublicKey())
	if code == 0 || !strings.Contains(out, "--- received\n(nothing came back)\n") || !strings.Contains(out, "signature  not checked, there was no answer\n") {
		t.Errorf("closed port, as text: %d\n%s", code, out)
	}
	if code, _ := crtx("creator", "test", "--endpoint", srv.URL); code == 0 {
		t.Error("missing --public-key accepted")
	}
}

func TestVerify(t *testing.T) {
	ctx := context.Background()
	d, cfg := startMarket(t, 50*time.Millisecond)
	_, key, _ := ed25519.GenerateKey(nil)
	h := creator.NewHandler(key, func(_ context.Context, r creator.Request) (string, int, error) { return "résumé: " + r.Task, 0, nil }, creator.Options{})
	srv := httptest.NewServer(h)
	defer srv.Close()
	t.Setenv("CRTX_URL", d.URL)
	dir := t.TempDir()
	crtx := func(kp string, args ...string) (int, string) {
		var out bytes.Buffer
		code := run(ctx, append([]string{"--keypair", filepath.Join(dir, kp)}, args...), strings.NewReader(""), &out, &out)
		return code, out.String()
	}
	// A creator lists an agent; a caller runs it with a devnet key.
	agentID := listAgent(t, d, srv.URL, key)
	crtx("caller.json", "wallet", "new")
	crtx("caller.json", "airdrop", "5")
	_, out := crtx("caller.json", "--json", "keys", "create", "v", "devnet")
	var k struct{ Key string }
	json.Unmarshal([]byte(out), &k)
	rec, err := client.New(d.URL, k.Key).Execute(ctx, agentID, crtxpkg.ExecuteParams{Task: "naïve ✓"}, client.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("CRTX_API_KEY", k.Key)
	code, out := crtx("caller.json", "verify", rec.ExecutionID)
	if code != 0 || strings.Count(out, "ok    ") != 8 || !strings.Contains(out, "sealed in a block") || !strings.Contains(out, "listing key") || !strings.Contains(out, "receipt") {
		t.Fatalf("verify: %d\n%s", code, out)
	}
	// Without a chain the ledger is anchored nowhere: said, and no failure.
	if !strings.Contains(out, "-      anchor             not anchored yet: the devnet ledger is not anchored on Solana") {
		t.Errorf("verify without a chain does not say the block is not anchored:\n%s", out)
	}
	// A private run's result is published nowhere; verify checks the copy
	// its caller holds against the ledger's hash.
	code, out = crtx("caller.json", "run", agentID, "a secret", "--private")
	if code != 0 || !strings.Contains(out, "résumé: a secret") {
		t.Fatalf("run --private: %d\n%s", code, out)
	}
	execs, err := client.New(d.URL, k.Key).Executions(ctx, nil)
	if err != nil || len(execs.Executions) != 2 {
		t.Fatalf("executions: %+v, %v", execs, err)
	}
	private, err := client.New(d.URL, k.Key).Execution(ctx, execs.Executions[0].ExecutionID)
	if err != nil || private.IPFSURL != nil || private.Result == nil || *private.Result != "résumé: a secret" {
		t.Fatalf("the private execution = %+v, %v", private, err)
	}
	code, out = crtx("caller.json", "verify", private.ExecutionID)
	if code != 0 || strings.Count(out, "ok    ") != 7 || !strings.Contains(out, "private result") || !strings.Contains(out, "receipt") {
		t.Fatalf("verify private: %d\n%s", code, out)
	}
	// Published content that no longer matches the committed hash fails.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(cfg.Data, "crtx.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE results SET content = 'forged'`); err != nil {
		t.Fatal(err)
	}
	code, out = crtx("caller.json", "verify", rec.ExecutionID)
	if code == 0 || !strings.Contains(out, "FAILED result hash") {
		t.Errorf("verify of forged content: %d\n%s", code, out)
	}
}

// agents show ends with how to reach the agent from MCP and A2A, at the
// marketplace's URL, with a key placeholder of the environment shown;
// --json stays the listing as the API sent it.
func TestAgentsShowMCPAndA2A(t *testing.T) {
	ctx := context.Background()
	d, _ := startMarket(t, time.Second)
	_, key, _ := ed25519.GenerateKey(nil)
	h := creator.NewHandler(key, func(context.Context, creator.Request) (string, int, error) { return "hi", 0, nil }, creator.Options{})
	srv := httptest.NewServer(h)
	defer srv.Close()
	id := listAgent(t, d, srv.URL, key)
	t.Setenv("CRTX_CONFIG", filepath.Join(t.TempDir(), "none.json"))
	crtx := func(args ...string) (int, string) {
		var out bytes.Buffer
		code := run(ctx, append([]string{"--url", d.URL + "/"}, args...), strings.NewReader(""), &out, &out)
		return code, out.String()
	}
	for apiKey, prefix := range map[string]string{"": "crtx_live_…", crtxpkg.TestKeyPrefix + "x": "crtx_test_…"} {
		t.Setenv("CRTX_API_KEY", apiKey)
		code, out := crtx("agents", "show", id)
		mcpURL := d.URL + "/mcp"
		for _, want := range []string{
			"mcp          " + mcpURL + " — call the tool run_agent with agent_id " + id + "\n",
			`claude mcp add --transport http crtx ` + mcpURL + ` --header "Authorization: Bearer ` + prefix + `"` + "\n",
			`{"mcpServers":{"crtx":{"url":"` + mcpURL + `","headers":{"Authorization":"Bearer ` + prefix + `"}}}}` + "\n",
			"a2a card     " + d.URL + "/a2a/" + id + "/.well-known/agent-card.json\n",
			// It never ran: no success rate or average to give, not 0%.
			"statistics   0 runs, 0 completed, — success, — ms average",
		} {
			if code != 0 || !strings.Contains(out, want) {
				t.Errorf("agents show with key %q: %d, lacks %q:\n%s", apiKey, code, want, out)
			}
		}
	}
	t.Setenv("CRTX_API_KEY", "")
	if code, out := crtx("agents", "list"); code != 0 || !regexp.MustCompile(id+`\s+\S.*\s+0\s+—\s+—\s`).MatchString(out) {
		t.Errorf("agents list of an agent that never ran: %d\n%s", code, out)
	}
	code, out := crtx("--json", "agents", "show", id)
	var l map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &l) != nil || l["agent_id"] != id || strings.Contains(out, "/mcp") {
		t.Errorf("agents show --json: %d\n%s", code, out)
	}
}
