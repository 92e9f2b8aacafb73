package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/store/sqlite"
	"github.com/crtx-market/crtx/store/storetest"
	"github.com/crtx-market/crtx/store/testdb"
)

func open(t *testing.T) crtx.Store {
	return testdb.SQLite(t)
}

func TestConformance(t *testing.T) { storetest.Run(t, open) }

// Opening twice applies no migration a second time.
func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crtx.db")
	for range 2 {
		s, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		if st, err := os.Stat(f); err == nil && st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", f, st.Mode().Perm())
		}
	}
}

// Concurrent transactions share commits; each one's failure, panic or
// cancellation undoes its own writes and no one else's.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	s := testdb.SQLite(t)
	boom := errors.New("boom")
	// Hold the writer so that the transactions below queue behind it.
	release, held := make(chan struct{}), make(chan struct{})
	go s.Update(ctx, func(crtx.Tx) error { close(held); <-release; return nil })
	<-held
	cancelled, cancel := context.WithCancel(ctx)
	const n = 300
	errs := make([]error, n)
	panics := make([]any, n)
	var wg sync.WaitGroup
	var started atomic.Int64
	for i := range n {
		c := ctx
		if i%10 == 3 {
			c = cancelled
		}
		wg.Go(func() {
			defer func() { panics[i] = recover() }()
			started.Add(1)
			errs[i] = s.Update(c, func(tx crtx.Tx) error {
				if err := tx.System.SetMeta(ctx, fmt.Sprintf("k%03d", i), "v"); err != nil {
					return err
				}
				switch i % 10 {
				case 1:
					return boom
				case 2:
					panic("fn panicked")
				}
				return nil
			})
		})
	}
	// Let them queue; any that come late are grouped all the same.
	for started.Load() < n {
		runtime.Gosched()
	}
	time.Sleep(20 * time.Millisecond)
	cancel()
	close(release)
	wg.Wait()
	for i := range n {
		var v string
		err := s.View(ctx, func(tx crtx.Tx) (err error) { v, err = tx.System.Meta(ctx, fmt.Sprintf("k%03d", i)); return err })
		switch i % 10 {
		case 1:
			if !errors.Is(errs[i], boom) || !errors.Is(err, crtx.ErrNotFound) {
				t.Errorf("%d: failing transaction: err %v, its write %q (%v)", i, errs[i], v, err)
			}
		case 2:
			if panics[i] != "fn panicked" || !errors.Is(err, crtx.ErrNotFound) {
				t.Errorf("%d: panicking transaction: recovered %v, its write %q (%v)", i, panics[i], v, err)
			}
		case 3:
			if !errors.Is(errs[i], context.Canceled) || !errors.Is(err, crtx.ErrNotFound) {
				t.Errorf("%d: cancelled transaction answered %v but its write is %q (%v)", i, errs[i], v, err)
			}
		default:
			if errs[i] != nil || v != "v" {
				t.Errorf("%d: err %v, write %q (%v)", i, errs[i], v, err)
			}
		}
	}
	ws := s.WriterStats()
	commits, txs := ws.Commits, ws.Transactions
	if ws.Busy <= 0 {
		t.Errorf("writer busy %v after %d commits", ws.Busy, commits)
	}
	if commits >= txs/10 {
		t.Errorf("%d transactions took %d commits; they were not grouped", txs, commits)
	}
	t.Logf("%d transactions in %d commits", txs, commits)
}

// BenchmarkConcurrentUpdates measures small read-write transactions from
// many goroutines, which the group writer commits together.
// go test -bench ConcurrentUpdates ./store/sqlite/
func BenchmarkConcurrentUpdates(b *testing.B) {
	ctx := context.Background()
	s := testdb.SQLite(b)
	var n atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			err := s.Update(ctx, func(tx crtx.Tx) error { return tx.System.SetMeta(ctx, fmt.Sprintf("bench%d", i), "v") })
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	ws := s.WriterStats()
	commits, txs := ws.Commits, ws.Transactions
	b.ReportMetric(float64(txs)/float64(max(commits, 1)), "tx/commit")
}

// BenchmarkWalletBalance reads a wallet's available and escrowed sums
// (GET /v1/wallet/balance) after a history of settled executions, each of
// which left an empty escrow account owned by the wallet: the time should
// not grow with the history.
// go test -bench WalletBalance ./store/sqlite/
func BenchmarkWalletBalance(b *testing.B) {
	for _, history := range []int{0, 100_000} {
		b.Run(fmt.Sprintf("history=%d", history), func(b *testing.B) {
			ctx := context.Background()
			s := testdb.SQLite(b)
			now := time.Now()
			for start := 0; start < history; start += 1000 {
				var escrows []crtx.Account
				for i := start; i < min(start+1000, history); i++ {
					e := crtx.NewAccount(crtx.Mainnet, crtx.AccountEscrow, fmt.Sprintf("exec%d", i), "w")
					e.CreatedAt = now
					escrows = append(escrows, e)
				}
				if err := s.Update(ctx, func(tx crtx.Tx) error { return tx.Ledger.EnsureAccounts(ctx, escrows...) }); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for b.Loop() {
				err := s.View(ctx, func(tx crtx.Tx) error {
					if _, err := tx.Ledger.Account(ctx, crtx.Mainnet, crtx.AccountAddress(crtx.AccountWallet, "w")); err != nil && !errors.Is(err, crtx.ErrNotFound) {
						return err
					}
					_, err := tx.Ledger.Escrowed(ctx, crtx.Mainnet, "w")
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
