package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
)

// builds are the binaries the package's tests built, by package path.
var builds sync.Map

type build struct {
	once sync.Once
	path string
	err  error
}

// binaryOf builds the command of package pkg (relative to this folder)
// once per test run, for tests that need a real process.
func binaryOf(t *testing.T, pkg, name string) string {
	t.Helper()
	v, _ := builds.LoadOrStore(pkg, &build{})
	b := v.(*build)
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", name+"-bin")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, name)
		if out, err := exec.Command("go", "build", "-o", b.path, pkg).CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// crtxdBinary is crtxd, built once per test run.
func crtxdBinary(t *testing.T) string { return binaryOf(t, ".", "crtxd") }

// A real crtxd process stops cleanly, exit 0, on SIGTERM.
func TestSIGTERM(t *testing.T) {
	cmd := exec.Command(crtxdBinary(t), "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--log-format", "json")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stderr)
	addr := regexp.MustCompile(`"public_url":"(http://127\.0\.0\.1:\d+)"`)
	var url string
	var log strings.Builder
	for lines.Scan() {
		log.WriteString(lines.Text() + "\n")
		if m := addr.FindStringSubmatch(lines.Text()); m != nil {
			url = m[1]
			break
		}
	}
	if url == "" {
		t.Fatalf("crtxd did not report its address:\n%s", log.String())
	}
	if err := client.New(url, "").Do(ctx, "GET", "/healthz", "", nil, nil); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error)
	go func() {
		for lines.Scan() {
			log.WriteString(lines.Text() + "\n")
		}
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, log.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("crtxd did not stop on SIGTERM")
	}
	if !strings.Contains(log.String(), `"msg":"crtxd stopped"`) {
		t.Errorf("no clean stop in the log:\n%s", log.String())
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	builds.Range(func(_, v any) bool {
		if b := v.(*build); b.path != "" {
			os.RemoveAll(filepath.Dir(b.path))
		}
		return true
	})
	os.Exit(code)
}

// agentKeys are the agent signing keys tests made, by public key, for
// holding.
var agentKeys sync.Map

// agentKey makes an agent signing key that holding finds.
func agentKey() ed25519.PrivateKey {
	pub, key, _ := ed25519.GenerateKey(nil)
	agentKeys.Store(crtx.Address(pub), key)
	return key
}

// holding is c holding the agent key whose public key is pub, to sign its
// listing statement (key_signature) as the key's holder does.
func holding(c *client.Client, pub string) *client.Client {
	k, _ := agentKeys.Load(pub)
	key, _ := k.(ed25519.PrivateKey)
	return c.WithAgentKey(key)
}

// slowCreator serves an agent that answers after 100ms plus up to jitter,
// counting deliveries per execution id. takenOver reports how many
// executions were delivered more than once: a second delivery is a
// takeover after a kill, answered from the creator SDK's memory.
func slowCreator(t *testing.T, jitter time.Duration) (url, publicKey string, c *slowService) {
	key := agentKey()
	h := creator.NewHandler(key, func(ctx context.Context, r creator.Request) (string, int, error) {
		if !r.Test {
			time.Sleep(100*time.Millisecond + rand.N(jitter))
		}
		return "done: " + r.Task, 0, nil
	}, creator.Options{})
	c = &slowService{deliveries: map[string]int{}, busy: map[string]int{}}
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req crtx.CreatorRequest
		json.Unmarshal(body, &req)
		c.mu.Lock()
		c.deliveries[req.ExecutionID]++
		c.busy[req.Task]++
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			c.busy[req.Task]--
			c.mu.Unlock()
		}()
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(svc.Close)
	return svc.URL, h.PublicKey(), c
}

// slowService counts what the slow creator was asked.
type slowService struct {
	mu         sync.Mutex
	deliveries map[string]int // by execution id
	busy       map[string]int // requests being answered, by task
}

// takenOver counts the executions delivered more than once: by a process
// that took them over after the one that dispatched them died.
func (c *slowService) takenOver() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, d := range c.deliveries {
		if d > 1 {
			n++
		}
	}
	return n
}

// answering counts the requests being answered now whose task match says yes to.
func (c *slowService) answering(match func(task string) bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for task, b := range c.busy {
		if match(task) {
			n += b
		}
	}
	return n
}

// SIGHUP reads the admin token file again: the new token is taken at
// once and the old refused, with no restart; a file with too short a
// token leaves the token as it was, and says so.
func TestSIGHUPRotatesTheAdminToken(t *testing.T) {
	data := t.TempDir()
	tokenFile := filepath.Join(data, "admin-token")
	old, next := strings.Repeat("o", 40), strings.Repeat("n", 40)
	if err := os.WriteFile(tokenFile, []byte(old+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr()
	cmd := exec.Command(crtxdBinary(t), "serve", "--addr", addr, "--data", data, "--admin-token-file", tokenFile, "--log-level", "error")
	var out syncBuffer
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	url := "http://" + addr
	if err := waitUp(ctx, url+"/readyz"); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	admits := func(token string) bool {
		_, err := client.New(url, token).AdminDisputes(ctx, "open")
		return err == nil
	}
	if !admits(old) {
		t.Fatal("the first token is refused")
	}
	// Each step waits for the signal's effect, which comes within moments.
	within := func(what string, done func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !done(); {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not seen\n%s", what, out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	os.WriteFile(tokenFile, []byte("short\n"), 0o600)
	cmd.Process.Signal(syscall.SIGHUP)
	within("a short token refused", func() bool { return strings.Contains(out.String(), "the admin token stays as it was") })
	if !admits(old) {
		t.Error("a short token in the file took the old one's place")
	}
	os.WriteFile(tokenFile, []byte(next+"\n"), 0o600)
	cmd.Process.Signal(syscall.SIGHUP)
	// Wrong tokens count as guesses: the new one is tried once it is read.
	within("the file read again", func() bool { return strings.Contains(out.String(), "the admin token was read again") })
	if !admits(next) {
		t.Error("the new token is refused after SIGHUP")
	}
	if admits(old) {
		t.Error("the old token is still taken after SIGHUP")
	}
}

// walletOf makes a wallet, credits it funds on mainnet through admin and
// signs it in through anon: a session and the wallet's address.
func walletOf(t *testing.T, admin, anon *client.Client, funds crtx.USDC) (*client.Client, string) {
	t.Helper()
	_, k, _ := ed25519.GenerateKey(nil)
	w := crtx.Address(k.Public().(ed25519.PublicKey))
	if _, err := admin.Deposit(ctx, crtx.Mainnet, w, funds); err != nil {
		t.Fatal(err)
	}
	s, _, err := anon.SignIn(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	return s, w
}

// listAt lists the agent served at svcURL, signing with svcKey, from the
// creator session cs, at 0.1 USDC a call: its id.
func listAt(t *testing.T, cs *client.Client, svcURL, svcKey string) string {
	t.Helper()
	str := func(s string) *string { return &s }
	raw := func(s string) *json.RawMessage { r := json.RawMessage(s); return &r }
	price, timeout, tags := crtx.USDC(100_000), 5, []string{"data"}
	agent, err := holding(cs, svcKey).CreateListing(ctx, crtx.ListingParams{Name: str("R"), Tagline: str("R."), Description: str("R."), Tags: &tags,
		InputSchema: raw(`{"type":"object"}`), OutputSchema: raw(`{"type":"string"}`), PricingModel: str("pay_per_use"),
		Price: &price, EndpointURL: str(svcURL), SigningPublicKey: str(svcKey), TimeoutSeconds: &timeout})
	if err != nil {
		t.Fatal(err)
	}
	return agent.AgentID
}
