package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The errors of a first hour say what to do next: which credential a
// refused key came from, where agent ids are, what replaces the sample's
// placeholder key.
func TestFirstHourHints(t *testing.T) {
	ctx := context.Background()
	d, _ := startMarket(t, time.Second)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	t.Setenv("CRTX_URL", d.URL)
	t.Setenv("CRTX_CONFIG", cfg)
	t.Setenv("CRTX_PROFILE", "")
	t.Setenv("CRTX_API_KEY", "")
	kp := filepath.Join(dir, "id.json")
	crtx := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(ctx, append([]string{"--keypair", kp}, args...), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	if code, _, errOut := crtx("wallet", "new"); code != 0 {
		t.Fatal(errOut)
	}
	var k struct{ ID, Key string }
	_, out, errOut := crtx("--json", "keys", "create", "laptop", "devnet")
	if err := json.Unmarshal([]byte(out), &k); err != nil || k.Key == "" {
		t.Fatalf("keys create: %v %s %s", err, out, errOut)
	}

	// agent_not_found from run points at the list of agents.
	code, _, errOut := crtx("--api-key", k.Key, "run", "agt_nope", "hello")
	if code == 0 || !strings.Contains(errOut, "agent_not_found") || !strings.Contains(errOut, "crtx agents list") {
		t.Errorf("run of an unknown agent: %d %q", code, errOut)
	}

	// A refused key names where it came from, and crtx login.
	if code, _, errOut := crtx("keys", "revoke", k.ID); code != 0 {
		t.Fatal(errOut)
	}
	os.WriteFile(cfg, []byte(`{"profile":"laptop","profiles":{"laptop":{"url":"`+d.URL+`","api_key":"`+k.Key+`"}}}`), 0o600)
	for _, c := range []struct {
		name, from string
		env        string
		args       []string
	}{
		{"flag", "--api-key", "", []string{"--api-key", "crtx_test_wrong"}},
		{"variable", "CRTX_API_KEY", "crtx_test_wrong", nil},
		{"revoked key of the profile", "the profile in " + cfg, "", nil},
	} {
		t.Setenv("CRTX_API_KEY", c.env)
		code, _, errOut := crtx(append(c.args, "run", "agt_nope", "hello")...)
		if code == 0 || !strings.Contains(errOut, "invalid_api_key") || !strings.Contains(errOut, "came from "+c.from) ||
			!strings.Contains(errOut, "crtx login") {
			t.Errorf("%s: %d %q", c.name, code, errOut)
		}
	}

	// The sample listing's placeholder is named, with what goes there.
	sample, err := os.ReadFile("../../examples/textstats/listing.json")
	if err != nil {
		t.Fatal(err)
	}
	listing := filepath.Join(dir, "listing.json")
	os.WriteFile(listing, sample, 0o600)
	code, _, errOut = crtx("creator", "create", "--file", listing, "--key", filepath.Join(dir, "agent-key.json"))
	if code == 0 || !strings.Contains(errOut, "YOUR_SIGNING_PUBLIC_KEY") || !strings.Contains(errOut, "crtx creator keygen") {
		t.Errorf("creator create with the sample's key: %d %q", code, errOut)
	}
}
