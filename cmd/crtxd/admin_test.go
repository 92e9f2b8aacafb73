package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/daemon"
)

// The operator resolves a dispute, verifies a creator and suspends an agent
// from the shell.
func TestAdminCommands(t *testing.T) {
	data := t.TempDir()
	token := filepath.Join(data, "admin-token")
	os.WriteFile(token, []byte("admin-command-test-token-0123456789"), 0o600)
	cfg := daemon.Defaults()
	cfg.RateLimitIP = 0 // tests sign in often from one address
	cfg.Addr, cfg.Data, cfg.AdminTokenFile, cfg.AllowPrivateEndpoints = "127.0.0.1:0", data, token, true
	cfg.BlockInterval, cfg.LogOutput = 20*time.Millisecond, &bytes.Buffer{}
	d, err := daemon.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, skey, _ := ed25519.GenerateKey(nil)
	h := creator.NewHandler(skey, func(context.Context, creator.Request) (string, int, error) { return "ok", 0, nil }, creator.Options{})
	srv := httptest.NewServer(h)
	defer srv.Close()
	admin := client.New(d.URL, "admin-command-test-token-0123456789")
	_, ck, _ := ed25519.GenerateKey(nil)
	_, uk, _ := ed25519.GenerateKey(nil)
	cw, uw := crtx.Address(ck.Public().(ed25519.PublicKey)), crtx.Address(uk.Public().(ed25519.PublicKey))
	admin.Deposit(ctx, crtx.Mainnet, cw, 100*crtx.MicroPerUSDC)
	admin.Deposit(ctx, crtx.Mainnet, uw, 10*crtx.MicroPerUSDC)
	cc, _, _ := client.New(d.URL, "").SignIn(ctx, ck)
	uc, _, _ := client.New(d.URL, "").SignIn(ctx, uk)
	str := func(s string) *string { return &s }
	raw := func(s string) *json.RawMessage { r := json.RawMessage(s); return &r }
	price, tags := crtx.USDC(500_000), []string{"data"}
	a, err := cc.WithAgentKey(skey).CreateListing(ctx, crtx.ListingParams{Name: str("A"), Tagline: str("A."), Description: str("A."), Tags: &tags,
		InputSchema: raw(`{"type":"object"}`), OutputSchema: raw(`{"type":"string"}`), PricingModel: str("pay_per_use"),
		Price: &price, EndpointURL: str(srv.URL), SigningPublicKey: str(h.PublicKey())})
	if err != nil {
		t.Fatal(err)
	}
	k, _ := uc.CreateKey(ctx, client.KeyParams{Name: "k", Environment: crtx.Mainnet})
	key := client.New(d.URL, k.Key)
	rec, err := key.Execute(ctx, a.AgentID, crtx.ExecuteParams{Task: "x"}, client.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var dsp api.DisputeInfo
	if err := key.Do(ctx, "POST", "/v1/executions/"+rec.ExecutionID+"/disputes", "application/json",
		[]byte(`{"reason":"fraud","description":"wrong"}`), &dsp); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // let the sealer take the last transactions
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	code, out := crtxd(t, "admin", "disputes", "list", "--data", data, "--status", "open")
	if code != 0 || !strings.Contains(out, dsp.DisputeID) || !strings.Contains(out, "respond by") {
		t.Fatalf("disputes list: %d\n%s", code, out)
	}
	code, out = crtxd(t, "admin", "disputes", "resolve", dsp.DisputeID, "--data", data, "--outcome", "upheld", "--slash", "5", "--refund", "0.5")
	if code != 0 || !strings.Contains(out, `"status": "upheld"`) || !strings.Contains(out, `"slashed_usdc": 5`) {
		t.Fatalf("resolve: %d\n%s", code, out)
	}
	if code, out := crtxd(t, "admin", "disputes", "resolve", dsp.DisputeID, "--data", data, "--outcome", "rejected"); code == 0 || !strings.Contains(out, "dispute_closed") {
		t.Errorf("resolving twice: %d\n%s", code, out)
	}
	if code, out := crtxd(t, "admin", "creators", "verify", cw, "--data", data); code != 0 || !strings.Contains(out, `"verified": true`) {
		t.Errorf("verify: %d\n%s", code, out)
	}
	if code, out := crtxd(t, "admin", "agents", "suspend", a.AgentID, "--data", data); code != 0 || !strings.Contains(out, `"suspended": true`) {
		t.Errorf("suspend: %d\n%s", code, out)
	}
	if code, out := crtxd(t, "admin", "collateral", "release", "--data", data); code != 0 || !strings.Contains(out, "released the collateral of 0") {
		t.Errorf("release: %d\n%s", code, out)
	}
	if code, _ := crtxd(t, "admin", "agents", "suspend", "agt_nope", "--data", data); code == 0 {
		t.Error("suspending an unknown agent succeeded")
	}
	if code, _ := crtxd(t, "admin", "frobnicate", "x", "--data", data); code == 0 {
		t.Error("an unknown admin command succeeded")
	}
	if code, out := crtxd(t, "ledger", "verify", "--data", data); code != 0 {
		t.Errorf("ledger verify after the ruling:\n%s", out)
	}
}
