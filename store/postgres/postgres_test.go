package postgres_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/store/postgres"
	"github.com/crtx-market/crtx/store/sqldb"
	"github.com/crtx-market/crtx/store/storetest"
	"github.com/crtx-market/crtx/store/testdb"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib"
)

// open gives each test a schema of its own on the CI's PostgreSQL.
func open(t *testing.T) crtx.Store {
	dsn := storetest.PostgresDSN(t)
	schema := storetest.Schema(t, dsn)
	return testdb.Postgres(t, dsn, schema)
}

func TestConformance(t *testing.T) { storetest.Run(t, open) }

// Opening twice applies no migration a second time.
func TestReopen(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	schema := storetest.Schema(t, dsn)
	for range 2 {
		s, err := postgres.Open(context.Background(), dsn, schema)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	db, _ := sql.Open("pgx", dsn)
	defer db.Close()
	var n int
	db.QueryRow(fmt.Sprintf(`SELECT count(*) FROM %q.schema_migrations`, schema)).Scan(&n)
	files, _ := os.ReadDir("migrations")
	if n != len(files) {
		t.Errorf("%d migrations recorded, %d embedded", n, len(files))
	}
}

// A transaction that PostgreSQL refuses as a serialization failure runs
// again until the retry budget is spent, then fails with ErrBusy; the same
// transaction under UpdateGuarded (READ COMMITTED) waits for the row and
// succeeds the first time.
func TestRetryBudget(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresDSN(t)
	schema := storetest.Schema(t, dsn)
	var dbs [2]*postgres.DB
	for i := range dbs {
		dbs[i] = testdb.Postgres(t, dsn, schema)
	}
	s, other := dbs[0], dbs[1]
	s.RetryBudget = 100 * time.Millisecond
	if err := s.Update(ctx, func(tx crtx.Tx) error { return tx.System.SetMeta(ctx, "k", "0") }); err != nil {
		t.Fatal(err)
	}
	// Each attempt reads k, another transaction changes k and commits,
	// then the attempt writes k: a lost update SERIALIZABLE refuses.
	collide := func(attempts *int) func(crtx.Tx) error {
		return func(tx crtx.Tx) error {
			*attempts++
			if _, err := tx.System.Meta(ctx, "k"); err != nil {
				return err
			}
			if err := other.Update(ctx, func(tx crtx.Tx) error { return tx.System.SetMeta(ctx, "k", strconv.Itoa(*attempts)) }); err != nil {
				return err
			}
			return tx.System.SetMeta(ctx, "k", "mine")
		}
	}
	// The retries stop once their budget is spent: ErrBusy comes back.
	var attempts int
	err := s.Update(ctx, collide(&attempts))
	if !errors.Is(err, crtx.ErrBusy) || attempts < 2 {
		t.Fatalf("Update: %v after %d attempts, want ErrBusy after several", err, attempts)
	}
	attempts = 0
	if err := s.UpdateGuarded(ctx, collide(&attempts)); err != nil || attempts != 1 {
		t.Fatalf("UpdateGuarded: %v after %d attempts, want success at once", err, attempts)
	}
	var v string
	s.View(ctx, func(tx crtx.Tx) (err error) { v, err = tx.System.Meta(ctx, "k"); return err })
	if v != "mine" {
		t.Errorf("k = %q, want the guarded write", v)
	}
}

// crtx_open_execution inserts a whole row built from sqldb.ExecutionRow:
// a column that the row lacks would be NULL on PostgreSQL alone, whatever
// its default.
func TestExecutionRowHasEveryColumn(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresDSN(t)
	schema := storetest.Schema(t, dsn)
	s := testdb.Postgres(t, dsn, schema)
	rows, err := s.Read.QueryContext(ctx, `SELECT column_name FROM information_schema.columns
		WHERE table_schema = $1 AND table_name = 'executions' ORDER BY column_name`, schema)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var columns []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		columns = append(columns, c)
	}
	row, err := sqldb.ExecutionRow(crtx.Execution{})
	if err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(maps.Keys(row))
	if !slices.Equal(keys, columns) {
		t.Errorf("ExecutionRow has\n%v\nthe table has\n%v", keys, columns)
	}
}

// A replica of the release before opens executions through the function of
// three arguments, with a row that has none of the columns added since:
// each must take its default, not NULL (which a NOT NULL column refuses,
// failing every execution that replica opens while an upgrade rolls).
func TestOpeningByTheReleaseBefore(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresDSN(t)
	s := testdb.Postgres(t, dsn, storetest.Schema(t, dsn))
	opening, _ := storetest.Openings(t, s)
	o := opening("old-1", "key_1")
	row, err := sqldb.ExecutionRow(o.Execution)
	if err != nil {
		t.Fatal(err)
	}
	// owner came with PostgreSQL migration 0010, private with 0015.
	delete(row, "owner")
	delete(row, "private")
	plan, err := sqldb.PlanTransaction(&o.Escrow, o.Accounts...)
	if err != nil {
		t.Fatal(err)
	}
	exec, _ := json.Marshal(row)
	post, _ := json.Marshal(plan)
	if _, err := s.Write.ExecContext(ctx, `SELECT crtx_open_execution($1, NULL, $2)`, string(exec), string(post)); err != nil {
		t.Fatalf("opening as the release before does: %v", err)
	}
	var private bool
	var owner string
	if err := s.Read.QueryRowContext(ctx, `SELECT private, owner FROM executions WHERE id = 'old-1'`).Scan(&private, &owner); err != nil {
		t.Fatal(err)
	}
	if private || owner != "" {
		t.Errorf("private %v, owner %q; want the columns' defaults", private, owner)
	}
}

// Openings that arrive together share statements: a burst of 32 takes
// fewer statements than openings, and each is counted once.
func TestOpeningsShareStatements(t *testing.T) {
	s := open(t).(*postgres.DB)
	opening, _ := storetest.Openings(t, s)
	before := s.WriterStats()
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			<-start
			o := opening(fmt.Sprintf("e%d", i), "key_1")
			o.MaxKeyInFlight, o.MaxWalletInFlight = 0, 0
			if err := s.OpenExecution(context.Background(), o); err != nil {
				t.Errorf("opening %d: %v", i, err)
			}
		})
	}
	close(start)
	wg.Wait()
	w := s.WriterStats()
	if n := w.Transactions - before.Transactions; n != 32 {
		t.Errorf("%d openings counted, want 32", n)
	}
	if n := w.Commits - before.Commits; n < 1 || n >= 32 {
		t.Errorf("32 openings at once took %d statements, want fewer than 32", n)
	}
}

// A closing the server refuses as a statement (a result PostgreSQL cannot
// hold as text) fails alone: the closings sent in its batch are sent
// again one by one and close.
func TestBatchFailureIsOneCallers(t *testing.T) {
	s := open(t).(*postgres.DB)
	ctx := context.Background()
	opening, _ := storetest.Openings(t, s)
	var closings []*crtx.Closing
	for i := range 12 {
		o := opening(fmt.Sprintf("e%d", i), "key_1")
		o.MaxKeyInFlight, o.MaxWalletInFlight = 0, 0
		if err := s.OpenExecution(ctx, o); err != nil {
			t.Fatal(err)
		}
		c := completed(o, "fine")
		if i == 5 {
			c.Execution.Result = "nul \x00 inside"
		}
		closings = append(closings, c)
	}
	errs := make([]error, len(closings))
	closed := make([]bool, len(closings))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, c := range closings {
		wg.Go(func() {
			<-start
			closed[i], errs[i] = s.CloseExecution(ctx, c)
		})
	}
	close(start)
	wg.Wait()
	for i := range closings {
		if i == 5 {
			if errs[i] == nil || closed[i] {
				t.Errorf("closing with a NUL in its result: %v, %v; want an error", closed[i], errs[i])
			}
			continue
		}
		if errs[i] != nil || !closed[i] {
			t.Errorf("closing e%d beside the refused one: %v, %v", i, closed[i], errs[i])
		}
	}
	s.View(ctx, func(tx crtx.Tx) error {
		for i := range closings {
			e, err := tx.Executions.Execution(ctx, fmt.Sprintf("e%d", i))
			if err != nil || (e.Status == crtx.ExecCompleted) != (i != 5) {
				t.Errorf("e%d = %s, %v; want completed all but e5", i, e.Status, err)
			}
		}
		return nil
	})
}

// A lease renewal does not wait for a row another transaction holds (a
// batch of closings holds many): it renews the others at once and counts
// the held one as still its owner's while what is committed says so, its
// lease included. Waiting could close a cycle with that batch.
func TestRenewalPassesLockedRows(t *testing.T) {
	ctx := context.Background()
	s := open(t).(*postgres.DB)
	opening, _ := storetest.Openings(t, s)
	for _, id := range []string{"e0", "e1"} {
		o := opening(id, "key_1")
		if err := s.OpenExecution(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	var lease time.Time
	s.View(ctx, func(tx crtx.Tx) error {
		e0, err := tx.Executions.Execution(ctx, "e0")
		lease = e0.LeaseUntil
		return err
	})
	lock, err := s.Write.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback()
	if _, err := lock.ExecContext(ctx, `SELECT id FROM executions WHERE id = 'e0' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	renew := func(now, until time.Time) []string {
		t.Helper()
		bounded, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		var renewed []string
		err := s.UpdateGuarded(bounded, func(tx crtx.Tx) (err error) {
			renewed, err = tx.Executions.RenewLeases(bounded, "", []string{"e0", "e1"}, now, until)
			return err
		})
		if err != nil {
			t.Fatalf("renewal beside a held row: %v", err)
		}
		slices.Sort(renewed)
		return renewed
	}
	until := lease.Add(time.Hour)
	if got := renew(lease.Add(-time.Second), until); fmt.Sprint(got) != "[e0 e1]" {
		t.Errorf("renewed %v while e0's lease runs; want [e0 e1] at once", got)
	}
	if got := renew(lease.Add(time.Second), until.Add(time.Second)); fmt.Sprint(got) != "[e1]" {
		t.Errorf("renewed %v after e0's lease ran out while held; want [e1]", got)
	}
	lock.Rollback()
	s.View(ctx, func(tx crtx.Tx) error {
		e1, _ := tx.Executions.Execution(ctx, "e1")
		e0, _ := tx.Executions.Execution(ctx, "e0")
		if !e1.LeaseUntil.Equal(until.Add(time.Second)) || !e0.LeaseUntil.Equal(lease) {
			t.Errorf("leases: e1 %v (want %v), e0 %v (want its own %v)", e1.LeaseUntil, until.Add(time.Second), e0.LeaseUntil, lease)
		}
		return nil
	})
}

// completed is the closing of o's execution with result, its credits to
// the creator (w1) and the treasury deferred to the roll-up.
func completed(o *crtx.Opening, result string) *crtx.Closing {
	e := o.Execution
	done := e.InitiatedAt.Add(time.Second)
	e.Status, e.CompletedAt = crtx.ExecCompleted, &done
	e.ResultCID, e.ResultHash, e.Signature, e.Result = "cid-"+e.ID, "hash", "sig", result
	escrow, creator := o.Accounts[1], crtx.NewAccount(crtx.Devnet, crtx.AccountWallet, "w1", "w1")
	treasury := crtx.NewAccount(crtx.Devnet, crtx.AccountTreasury, crtx.TreasuryID, "")
	return &crtx.Closing{Execution: e, Accounts: []crtx.Account{escrow, creator, treasury},
		Record: crtx.LedgerTx{ID: "settle-" + e.ID, Environment: crtx.Devnet, Kind: crtx.TxExecutionRecord, CreatedAt: done,
			Data: map[string]string{"execution_id": e.ID, "agent_id": "a1"},
			Postings: []crtx.Posting{{From: escrow.Address, To: creator.Address, Amount: e.CreatorAmount},
				{From: escrow.Address, To: treasury.Address, Amount: e.PlatformAmount}}}}
}

// A completed closing does not wait for a transaction that holds its
// creator's or the treasury's account (the roll-up crediting them, every
// fraction of a second): it only names them, to create them if missing,
// and they exist. It waited for that transaction to commit before.
func TestClosingPassesHeldAccounts(t *testing.T) {
	ctx := context.Background()
	s := open(t).(*postgres.DB)
	opening, _ := storetest.Openings(t, s)
	var closings []*crtx.Closing
	for _, id := range []string{"e0", "e1"} {
		o := opening(id, "key_1")
		if err := s.OpenExecution(ctx, o); err != nil {
			t.Fatal(err)
		}
		closings = append(closings, completed(o, "fine"))
	}
	// The first creates the accounts; the second finds them held.
	if _, err := s.CloseExecution(ctx, closings[0]); err != nil {
		t.Fatal(err)
	}
	hold, err := s.Write.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback()
	if _, err := hold.ExecContext(ctx, `UPDATE accounts SET balance = balance + 1 WHERE address IN ($1, $2)`,
		closings[1].Accounts[1].Address, closings[1].Accounts[2].Address); err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() {
		_, err := s.CloseExecution(ctx, closings[1])
		closed <- err
	}()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("closing beside held accounts: %v", err)
		}
	case <-time.After(10 * time.Second):
		hold.Rollback()
		<-closed
		t.Error("the closing waited for the transaction holding the creator's and the treasury's accounts")
	}
}

// A wallet's withdrawal asked (wallet → withdrawals) while another of its
// withdrawals is refunded (withdrawals → wallet) never wait for each other
// in a cycle: every posting locks its accounts in one order first (wallets,
// then the others, each in bytes of the address). Without
// it, the refund took the wallet and waited for the withdrawals account,
// which the request held while it waited for the wallet: deadlock detected.
func TestPostingsLockAccountsInOneOrder(t *testing.T) {
	ctx := context.Background()
	s := open(t).(*postgres.DB)
	s.RetryBudget = time.Nanosecond
	env := crtx.Devnet
	issuance := crtx.NewAccount(env, crtx.AccountIssuance, crtx.IssuanceID, "")
	wallet := crtx.NewAccount(env, crtx.AccountWallet, "alice", "alice")
	out := crtx.NewAccount(env, crtx.AccountWithdrawals, crtx.WithdrawalsID, "")
	post := func(id string, from, to crtx.Account) error {
		return s.Update(ctx, func(tx crtx.Tx) error {
			lt := crtx.LedgerTx{ID: id, Environment: env, Kind: crtx.TxWithdrawal, CreatedAt: time.Now(),
				Data:     map[string]string{"wallet": "alice"},
				Postings: []crtx.Posting{{From: from.Address, To: to.Address, Amount: crtx.MicroPerUSDC}}}
			return tx.Ledger.InsertTransaction(ctx, &lt, from, to)
		})
	}
	for _, p := range []struct {
		id       string
		from, to crtx.Account
	}{{"fund", issuance, wallet}, {"fund-2", issuance, wallet}, {"ask", wallet, out}} {
		if err := post(p.id, p.from, p.to); err != nil {
			t.Fatal(err)
		}
	}
	// Another transaction holds both rows while the two start, so that each
	// takes what it takes before it waits.
	hold, err := s.Write.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback()
	if _, err := hold.ExecContext(ctx, `SELECT address FROM accounts WHERE environment = 'devnet' AND address = $1 FOR NO KEY UPDATE`, wallet.Address); err != nil {
		t.Fatal(err)
	}
	var errs [2]error
	var wg sync.WaitGroup
	wg.Go(func() { errs[0] = post("refund", out, wallet) })
	time.Sleep(300 * time.Millisecond)
	wg.Go(func() { errs[1] = post("ask-2", wallet, out) })
	time.Sleep(300 * time.Millisecond)
	if err := hold.Commit(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range errs {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "40P01" {
			t.Errorf("posting %d: %v", i, err)
		}
	}
}
