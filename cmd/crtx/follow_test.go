package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	crtxpkg "github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
)

// Ctrl-C while following an asynchronous run stops following, not the
// execution, and says how to pick it up again.
func TestInterruptWhileFollowing(t *testing.T) {
	ctx := context.Background()
	d, _ := startMarket(t, time.Second)
	release := make(chan struct{})
	_, key, _ := ed25519.GenerateKey(nil)
	h := creator.NewHandler(key, func(ctx context.Context, r creator.Request) (string, int, error) {
		if r.Task == "slow" { // not the listing's probe
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return "done", 0, nil
	}, creator.Options{})
	svc := httptest.NewServer(h)
	defer svc.Close()
	defer close(release)
	agent := listAgent(t, d, svc.URL, key)

	_, wk, _ := ed25519.GenerateKey(nil)
	session, _, err := client.New(d.URL, "").SignIn(ctx, wk)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := session.Airdrop(ctx, crtxpkg.Address(wk.Public().(ed25519.PublicKey)), crtxpkg.MicroPerUSDC); err != nil {
		t.Fatal(err)
	}
	k, err := session.CreateKey(ctx, client.KeyParams{Name: "follow", Environment: crtxpkg.Devnet})
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(filepath.Join(bins, "crtx"), "run", agent, "slow", "--async")
	cmd.Env = []string{"CRTX_URL=" + d.URL, "CRTX_API_KEY=" + k.Key, "CRTX_CONFIG=" + filepath.Join(t.TempDir(), "none.json")}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once the execution is under way.
	caller := client.New(d.URL, k.Key)
	var id string
	for deadline := time.Now().Add(10 * time.Second); id == ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the execution never started")
		}
		if page, err := caller.Executions(ctx, nil); err == nil && len(page.Executions) == 1 {
			id = page.Executions[0].ExecutionID
		}
	}
	time.Sleep(300 * time.Millisecond) // crtx reads the status at least once
	cmd.Process.Signal(syscall.SIGINT)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || out.Len() != 0 ||
		!strings.Contains(errOut.String(), "Pick it up with: crtx executions watch "+id) {
		t.Fatalf("crtx after Ctrl-C: %v, stdout %q, stderr %q", err, out.String(), errOut.String())
	}
	if rec, err := caller.Execution(ctx, id); err != nil || rec.Status.Final() {
		t.Errorf("the execution was stopped with crtx: %s, %v", rec.Status, err)
	}
}
