package market_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/payment"
	"github.com/crtx-market/crtx/payment/exact"
	"github.com/crtx-market/crtx/payment/ledger"
	"github.com/crtx-market/crtx/store/testdb"
)

// countingStore counts read and read-write transactions.
type countingStore struct {
	crtx.Store
	views, writes atomic.Int64
}

func (s *countingStore) View(ctx context.Context, fn func(crtx.Tx) error) error {
	s.views.Add(1)
	return s.Store.View(ctx, fn)
}

func (s *countingStore) Update(ctx context.Context, fn func(crtx.Tx) error) error {
	s.writes.Add(1)
	return s.Store.Update(ctx, fn)
}

func (s *countingStore) UpdateGuarded(ctx context.Context, fn func(crtx.Tx) error) error {
	s.writes.Add(1)
	return s.Store.UpdateGuarded(ctx, fn)
}

// A key used again and again is read once; revoking it refuses it at once.
func TestKeyLookupsAreKept(t *testing.T) {
	ctx := context.Background()
	db := testdb.SQLite(t)
	store := &countingStore{Store: db}
	_, authority, _ := ed25519.GenerateKey(nil)
	_, signer, _ := ed25519.GenerateKey(nil)
	m, err := market.New(store, market.Config{Schemes: []payment.New{ledger.New, exact.New}, PublicURL: "http://127.0.0.1:8080", Authority: authority, Signer: signer})
	if err != nil {
		t.Fatal(err)
	}
	w := address(t)
	k, secret, err := m.Accounts.CreateKey(ctx, w, "kept", crtx.Devnet, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := store.views.Load()
	for range 50 {
		p, err := m.Accounts.Authenticate(ctx, secret)
		if err != nil || p.Wallet != w || p.Key.ID != k.ID {
			t.Fatalf("authenticate: %+v, %v", p, err)
		}
	}
	if n := store.views.Load() - before; n != 1 {
		t.Errorf("50 authentications read the key %d times, want 1", n)
	}
	if _, err := m.Accounts.RevokeKey(ctx, w, k.ID); err != nil {
		t.Fatal(err)
	}
	_, err = m.Accounts.Authenticate(ctx, secret)
	var e *crtx.Error
	if !errors.As(err, &e) || e.Code != crtx.CodeInvalidAPIKey {
		t.Errorf("revoked key: %v", err)
	}
}
