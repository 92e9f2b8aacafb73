package main

import (
	"bufio"
	"crypto/ed25519"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/client"
)

// proc is one crtxd child process.
type proc struct {
	cmd *exec.Cmd
	url string
}

func startProc(t *testing.T, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(crtxdBinary(t), append([]string{"serve", "--log-format", "json"}, args...)...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		var m map[string]any
		json.Unmarshal(lines.Bytes(), &m)
		if m["msg"] == "crtxd serving" {
			go io.Copy(io.Discard, stderr)
			return &proc{cmd: cmd, url: m["public_url"].(string)}
		}
	}
	cmd.Wait()
	t.Fatalf("crtxd did not start")
	return nil
}

func (p *proc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
}

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

var long = flag.Bool("crtx.long", false, "run the long crash loop (100 kills)")

// escrowEndings counts the settlements and refunds on a mainnet
// execution's escrow account: exactly one, whatever crashed in between.
func escrowEndings(key *client.Client, id string) (int, error) {
	v, err := key.Account(ctx, crtx.Mainnet, crtx.AccountAddress(crtx.AccountEscrow, id))
	n := 0
	for _, tx := range v.Transactions {
		if tx.Kind == crtx.TxExecutionRecord || tx.Kind == crtx.TxEscrowRefunded {
			n++
		}
	}
	return n, err
}

// finalExecutions reads every execution of a key, page by page, until
// none is open any more, and fails the test if some still are after within.
func finalExecutions(t *testing.T, key *client.Client, within time.Duration) api.ExecutionPage {
	t.Helper()
	for deadline := time.Now().Add(within); ; time.Sleep(100 * time.Millisecond) {
		var all api.ExecutionPage
		for offset := 0; ; offset += 100 {
			page, err := key.Executions(ctx, url.Values{"limit": {"100"}, "offset": {fmt.Sprint(offset)}})
			if err != nil {
				t.Fatal(err)
			}
			all.Executions = append(all.Executions, page.Executions...)
			all.Total = page.Total
			if len(page.Executions) < 100 {
				break
			}
		}
		open := 0
		for _, e := range all.Executions {
			if !e.Status.Final() {
				open++
			}
		}
		if open == 0 {
			return all
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d executions still open", open, all.Total)
		}
	}
}

// Asynchronous and synchronous executions are in flight when crtxd is
// killed with SIGKILL, again and again. After the last restart every
// execution is final, no escrow holds money, the money adds up and the
// ledger verifies.
func TestCrashRecovery(t *testing.T) {
	data := t.TempDir()
	token := filepath.Join(data, "admin-token")
	os.WriteFile(token, []byte("crash-test-admin-token-0123456789"), 0o600)
	addr := freePort(t)
	args := []string{"--addr", addr, "--data", data, "--admin-token-file", token, "--allow-private-endpoints",
		"--lease", "1s", "--recovery-interval", "100ms", "--block-interval", "100ms", "--rate-limit-ip", "0"}

	svcURL, svcKey, svc := slowCreator(t, 400*time.Millisecond)

	p := startProc(t, args...)
	admin := client.New(p.url, "crash-test-admin-token-0123456789")
	_, creatorKey, _ := ed25519.GenerateKey(nil)
	_, callerKey, _ := ed25519.GenerateKey(nil)
	creatorW := crtx.Address(creatorKey.Public().(ed25519.PublicKey))
	callerW := crtx.Address(callerKey.Public().(ed25519.PublicKey))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := admin.Deposit(ctx, crtx.Mainnet, creatorW, 100*crtx.MicroPerUSDC)
	must(err)
	_, err = admin.Deposit(ctx, crtx.Mainnet, callerW, 100*crtx.MicroPerUSDC)
	must(err)
	cs, _, err := client.New(p.url, "").SignIn(ctx, creatorKey)
	must(err)
	str := func(s string) *string { return &s }
	raw := func(s string) *json.RawMessage { r := json.RawMessage(s); return &r }
	price := crtx.USDC(100_000)
	timeout := 5
	tags := []string{"data"}
	a, err := holding(cs, svcKey).CreateListing(ctx, crtx.ListingParams{Name: str("Slow"), Tagline: str("Slow."), Description: str("Slow."),
		Tags: &tags, InputSchema: raw(`{"type":"object"}`), OutputSchema: raw(`{"type":"string"}`), PricingModel: str("pay_per_use"),
		Price: &price, EndpointURL: str(svcURL + "/execute"), SigningPublicKey: str(svcKey), TimeoutSeconds: &timeout})
	must(err)
	ss, _, err := client.New(p.url, "").SignIn(ctx, callerKey)
	must(err)
	k, err := ss.CreateKey(ctx, client.KeyParams{Name: "crash", Environment: crtx.Mainnet})
	must(err)

	cycles := 20
	if *long {
		cycles = 100
	}
	// first answers of each Idempotency-Key, to check retries against
	accepted := map[string]string{}
	for cycle := range cycles {
		key := client.New(p.url, k.Key)
		for i := range 8 {
			params := crtx.ExecuteParams{Task: fmt.Sprintf("c%d-%d", cycle, i), Async: i%3 != 0}
			idem := fmt.Sprintf("c%d-%d", cycle, i)
			if params.Async {
				rec, err := key.Execute(ctx, a.AgentID, params, client.ExecuteOptions{IdempotencyKey: idem})
				if err != nil {
					t.Fatalf("cycle %d: %v", cycle, err)
				}
				accepted[idem] = rec.ExecutionID
			} else {
				go key.Execute(ctx, a.AgentID, params, client.ExecuteOptions{IdempotencyKey: idem}) // cut off by the kill
			}
		}
		time.Sleep(time.Duration(30+rand.IntN(200)) * time.Millisecond)
		p.kill()
		p = startProc(t, args...)
		// After each restart: the ledger holds together, and a retry of an
		// earlier request answers its first response.
		if code, out := crtxd(t, "ledger", "verify", "--data", data); code != 0 {
			t.Fatalf("ledger verify after kill %d:\n%s", cycle+1, out)
		}
		key = client.New(p.url, k.Key)
		for i := 1; i < 8; i += 3 {
			idem := fmt.Sprintf("c%d-%d", cycle, i)
			rec, err := key.Execute(ctx, a.AgentID, crtx.ExecuteParams{Task: idem, Async: true}, client.ExecuteOptions{IdempotencyKey: idem})
			if err != nil || rec.ExecutionID != accepted[idem] {
				t.Fatalf("retry of %s after kill %d: %s, %v; first answer %s", idem, cycle+1, rec.ExecutionID, err, accepted[idem])
			}
		}
	}

	key := client.New(p.url, k.Key)
	page := finalExecutions(t, key, 30*time.Second)
	if page.Total < len(accepted) {
		t.Fatalf("only %d executions were recorded for %d accepted", page.Total, len(accepted))
	}
	var spent, earned crtx.USDC
	completed := 0
	for _, s := range page.Executions {
		rec, err := key.Execution(ctx, s.ExecutionID)
		must(err)
		endings, err := escrowEndings(key, s.ExecutionID)
		must(err)
		if endings != 1 {
			t.Errorf("execution %s was settled or refunded %d times", s.ExecutionID, endings)
		}
		if rec.Status == "completed" {
			completed++
			spent += rec.Cost
			earned += rec.CreatorAmount
			content, err := key.Content(ctx, *rec.IPFSURL)
			if err != nil || !strings.HasPrefix(string(content), "done: c") || crtx.ResultHash(string(content)) != *rec.ResultHash {
				t.Errorf("%s: published %q, %v", rec.ExecutionID, content, err)
			}
		}
	}
	w, err := key.Wallet(ctx)
	must(err)
	if b := w.Balances[crtx.Mainnet]; b.Escrowed != 0 || b.Available != 100*crtx.MicroPerUSDC-spent {
		t.Errorf("caller %+v; spent %s on %d completed", b, spent, completed)
	}
	cw, err := cs.Wallet(ctx)
	must(err)
	if got := cw.Balances[crtx.Mainnet].Available; got != 100*crtx.MicroPerUSDC-10*crtx.MicroPerUSDC+earned {
		t.Errorf("creator %s, earned %s", got, earned)
	}
	redelivered := svc.takenOver()
	if redelivered == 0 {
		t.Error("no execution was taken over after a kill; the test proved nothing")
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.cmd.Wait()
	code, out := crtxd(t, "ledger", "verify", "--data", data)
	if code != 0 {
		t.Fatalf("ledger verify after the crashes:\n%s", out)
	}
	t.Logf("%d executions, %d completed, %d taken over after a kill; %s", page.Total, completed, redelivered, strings.TrimSpace(out))
}
