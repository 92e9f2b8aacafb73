// Package storetest is the conformance suite every crtx.Store engine passes
// unchanged, run against a real database.
package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
)

// Run runs the suite; open returns a fresh, empty, migrated store.
func Run(t *testing.T, open func(t *testing.T) crtx.Store) {
	tests := []struct {
		name string
		fn   func(*testing.T, crtx.Store)
	}{
		{"Rollback", testRollback},
		{"Meta", testMeta},
		{"Nonces", testNonces},
		{"Sessions", testSessions},
		{"SentForms", testSentForms},
		{"Keys", testKeys},
		{"Postings", testPostings},
		{"NonNegative", testNonNegative},
		{"PostingAccounts", testPostingAccounts},
		{"Queries", testQueries},
		{"Blocks", testBlocks},
		{"EnvironmentsApart", testEnvironmentsApart},
		{"CreatorsAndAgents", testCreatorsAndAgents},
		{"ListAgents", testListAgents},
		{"LedgerRefs", testLedgerRefs},
		{"Executions", testExecutions},
		{"KeyUsage", testKeyUsage},
		{"ResultsAndIdempotency", testResultsAndIdempotency},
		{"PublishedResults", testPublishedResults},
		{"Webhooks", testWebhooks},
		{"WebhookSecrets", testWebhookSecrets},
		{"OAuth", testOAuth},
		{"PushConfigs", testPushConfigs},
		{"Disputes", testDisputes},
		{"ReleasableCollateral", testReleasableCollateral},
		{"TryLock", testTryLock},
		{"Unposted", testUnposted},
		{"OpenClose", testOpenClose},
		{"MeteredClose", testMeteredClose},
		{"InFlight", testInFlight},
		{"OpenBurst", testOpenBurst},
		{"Heartbeats", testHeartbeats},
		{"Backlog", testBacklog},
		{"Deposits", testDeposits},
		{"Withdrawals", testWithdrawals},
		{"Anchors", testAnchors},
		{"Payments", testPayments},
		{"PaidOutcomes", testPaidOutcomes},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

var t0 = time.Date(2026, 11, 22, 9, 0, 0, 123456000, time.UTC)

func update(t *testing.T, s crtx.Store, fn func(context.Context, crtx.Tx) error) {
	t.Helper()
	ctx := context.Background()
	if err := s.Update(ctx, func(tx crtx.Tx) error { return fn(ctx, tx) }); err != nil {
		t.Fatal(err)
	}
}

func view(t *testing.T, s crtx.Store, fn func(context.Context, crtx.Tx) error) {
	t.Helper()
	ctx := context.Background()
	if err := s.View(ctx, func(tx crtx.Tx) error { return fn(ctx, tx) }); err != nil {
		t.Fatal(err)
	}
}

func testRollback(t *testing.T, s crtx.Store) {
	boom := errors.New("boom")
	err := s.Update(context.Background(), func(tx crtx.Tx) error {
		if err := tx.System.SetMeta(context.Background(), "k", "v"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update returned %v, want the callback's error", err)
	}
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if _, err := tx.System.Meta(ctx, "k"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("rolled-back write is visible: %v", err)
		}
		return nil
	})
	if err := s.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func testMeta(t *testing.T, s crtx.Store) {
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if err := tx.System.SetMeta(ctx, "a", "1"); err != nil {
			return err
		}
		return tx.System.SetMeta(ctx, "a", "2")
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		v, err := tx.System.Meta(ctx, "a")
		if v != "2" {
			t.Errorf("meta a = %q, %v; want 2", v, err)
		}
		return nil
	})
}

// A lock is held until its transaction ends; engines with one writer grant
// every lock.
func testTryLock(t *testing.T, s crtx.Store) {
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		ok, err := tx.System.TryLock(ctx, "sealer")
		if err != nil || !ok {
			t.Errorf("TryLock = %v, %v", ok, err)
		}
		again, err := tx.System.TryLock(ctx, "sealer")
		if err != nil || !again {
			t.Errorf("the holder cannot take its own lock again: %v, %v", again, err)
		}
		return nil
	})
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if ok, err := tx.System.TryLock(ctx, "sealer"); err != nil || !ok {
			t.Errorf("the lock outlived its transaction: %v, %v", ok, err)
		}
		return nil
	})
}
