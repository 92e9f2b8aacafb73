package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/store/storetest"
)

// Three crtxd processes share one PostgreSQL database. Mixed load goes to
// all three and one is killed with SIGKILL in the middle: every execution
// ends final, none is settled twice, no escrow holds money, the money adds
// up, and the ledger — sealed by whichever replica held the sealer lock —
// verifies. Then a wallet that can pay for five sends twenty executions
// through two replicas at once: exactly five are accepted.
func TestReplicasOnPostgres(t *testing.T) {
	db := storetest.SchemaDSN(t)
	data := t.TempDir() // the keys every replica shares
	token := filepath.Join(data, "admin-token")
	os.WriteFile(token, []byte("replica-test-admin-token-0123456789"), 0o600)
	replica := func() *proc {
		return startProc(t, "--addr", "127.0.0.1:0", "--db", db, "--data", data, "--admin-token-file", token,
			"--allow-private-endpoints", "--lease", "1s", "--recovery-interval", "100ms", "--block-interval", "50ms", "--rate-limit-ip", "0")
	}
	a := replica() // the first creates the keys; the others load them
	b, c := replica(), replica()
	defer a.kill()
	defer c.kill()

	svcURL, svcKey, svc := slowCreator(t, 300*time.Millisecond)

	admin := client.New(a.url, "replica-test-admin-token-0123456789")
	wallet := func(funds crtx.USDC) (*client.Client, string) {
		return walletOf(t, admin, client.New(a.url, ""), funds)
	}
	cs, _ := wallet(100 * crtx.MicroPerUSDC)
	agent := listAt(t, cs, svcURL, svcKey)
	us, _ := wallet(10 * crtx.MicroPerUSDC)
	k, err := us.CreateKey(ctx, client.KeyParams{Name: "load", Environment: crtx.Mainnet})
	if err != nil {
		t.Fatal(err)
	}

	// Load on all three; B dies in the middle of it, while the creator
	// answers at least one of its dispatches (a slow machine may not have
	// sent any yet at the 21st request), so that one is surely taken over.
	procs := []*proc{a, b, c}
	fromB := func(task string) bool { return strings.HasPrefix(task, "b-") }
	var wg sync.WaitGroup
	for i := range 36 {
		p := procs[i%3]
		params := crtx.ExecuteParams{Task: fmt.Sprint(i), Async: i%2 == 0}
		if p == b {
			params.Task = fmt.Sprint("b-", i)
		}
		wg.Go(func() { client.New(p.url, k.Key).Execute(ctx, agent, params, client.ExecuteOptions{}) })
		time.Sleep(10 * time.Millisecond)
		if i == 20 {
			for deadline := time.Now().Add(10 * time.Second); svc.answering(fromB) == 0 && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			b.kill()
		}
	}
	wg.Wait()

	key := client.New(a.url, k.Key)
	page := finalExecutions(t, key, 60*time.Second)
	var spent crtx.USDC
	for _, e := range page.Executions {
		// Exactly one settlement or refund per execution.
		endings, err := escrowEndings(key, e.ExecutionID)
		if err != nil {
			t.Fatal(err)
		}
		if endings != 1 {
			t.Errorf("execution %s ended %d times", e.ExecutionID, endings)
		}
		if e.Status == crtx.ExecCompleted {
			spent += e.Cost
		}
	}
	w, _ := key.Wallet(ctx)
	if bal := w.Balances[crtx.Mainnet]; bal.Escrowed != 0 || bal.Available != 10*crtx.MicroPerUSDC-spent {
		t.Errorf("caller %+v after spending %s", bal, spent)
	}
	taken := svc.takenOver()
	t.Logf("%d executions (%d reached by a second replica after the kill)", page.Total, taken)
	if taken == 0 {
		t.Error("no execution of the killed replica was taken over; the test proved nothing")
	}

	// Double spend across replicas: funds for five, twenty at once.
	ds, _ := wallet(500_000)
	dk, _ := ds.CreateKey(ctx, client.KeyParams{Name: "ds", Environment: crtx.Mainnet})
	codes := map[string]int{} // error code ("" for none) → executions
	var dmu sync.Mutex
	for i := range 20 {
		p := []*proc{a, c}[i%2]
		wg.Go(func() {
			_, err := client.New(p.url, dk.Key).Execute(ctx, agent, crtx.ExecuteParams{Task: "ds", Async: true}, client.ExecuteOptions{})
			dmu.Lock()
			defer dmu.Unlock()
			codes[client.Code(err)]++
		})
	}
	wg.Wait()
	if want := map[string]int{"": 5, "insufficient_balance": 15}; !maps.Equal(codes, want) {
		t.Errorf("error codes %v with funds for 5; want %v", codes, want)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if ww, _ := client.New(a.url, dk.Key).Wallet(ctx); ww.Balances[crtx.Mainnet].Escrowed == 0 {
			break
		}
	}

	a.kill()
	c.kill()
	if code, out := crtxd(t, "ledger", "verify", "--db", db, "--data", data); code != 0 {
		t.Fatalf("ledger verify:\n%s", out)
	}
}
