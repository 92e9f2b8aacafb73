package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
)

func testNonces(t *testing.T, s crtx.Store) {
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		return tx.Access.InsertNonce(ctx, crtx.Nonce{Nonce: "n1", Wallet: "w1", ExpiresAt: t0.Add(time.Minute)})
	})
	use := func(nonce, wallet string, at time.Time) (ok bool) {
		update(t, s, func(ctx context.Context, tx crtx.Tx) (err error) {
			ok, err = tx.Access.UseNonce(ctx, nonce, wallet, at)
			return err
		})
		return ok
	}
	expiry := func(nonce, wallet string) (at time.Time, err error) {
		view(t, s, func(ctx context.Context, tx crtx.Tx) error {
			at, err = tx.Access.NonceExpiry(ctx, nonce, wallet)
			return nil
		})
		return at, err
	}
	if at, err := expiry("n1", "w1"); err != nil || !at.Equal(t0.Add(time.Minute)) {
		t.Errorf("NonceExpiry = %v, %v; want %v", at, err, t0.Add(time.Minute))
	}
	if _, err := expiry("n1", "w2"); !errors.Is(err, crtx.ErrNotFound) {
		t.Errorf("NonceExpiry of another wallet's nonce: %v; want not found", err)
	}
	if use("n1", "w2", t0) {
		t.Error("another wallet used the nonce")
	}
	if use("n1", "w1", t0.Add(time.Minute)) {
		t.Error("an expired nonce was used")
	}
	if !use("n1", "w1", t0) {
		t.Error("a fresh nonce was refused")
	}
	if use("n1", "w1", t0) {
		t.Error("a nonce was used twice")
	}
	if _, err := expiry("n1", "w1"); !errors.Is(err, crtx.ErrNotFound) {
		t.Errorf("NonceExpiry of a used nonce: %v; want not found", err)
	}
	// A wallet's open listing nonce: the newest unused one of the prefix
	// that outlives the bound, the prefix's underscore taken as itself.
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		for _, n := range []crtx.Nonce{{Nonce: "lst_a", ExpiresAt: t0.Add(time.Hour)}, {Nonce: "lst_b", ExpiresAt: t0.Add(2 * time.Hour)},
			{Nonce: "lstXc", ExpiresAt: t0.Add(3 * time.Hour)}, {Nonce: "signin", ExpiresAt: t0.Add(3 * time.Hour)}} {
			n.Wallet = "w3"
			if err := tx.Access.InsertNonce(ctx, n); err != nil {
				return err
			}
		}
		return nil
	})
	open := func(after time.Time) (n crtx.Nonce, err error) {
		view(t, s, func(ctx context.Context, tx crtx.Tx) error {
			n, err = tx.Access.OpenNonce(ctx, "w3", "lst_", after)
			return nil
		})
		return n, err
	}
	if n, err := open(t0); err != nil || n.Nonce != "lst_b" || !n.ExpiresAt.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("OpenNonce = %+v, %v; want lst_b", n, err)
	}
	use("lst_b", "w3", t0)
	if n, err := open(t0); err != nil || n.Nonce != "lst_a" {
		t.Errorf("OpenNonce once lst_b is used = %+v, %v; want lst_a", n, err)
	}
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if n, err := tx.Access.OpenNonce(ctx, "w1", "lst_", t0); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("OpenNonce of a wallet that holds none = %+v, %v; want not found", n, err)
		}
		return nil
	})
	if _, err := open(t0.Add(time.Hour)); !errors.Is(err, crtx.ErrNotFound) {
		t.Errorf("OpenNonce past every expiry: %v; want not found", err)
	}
	if use("unknown", "w1", t0) {
		t.Error("an unknown nonce was used")
	}
}

func testSessions(t *testing.T, s crtx.Store) {
	sess := crtx.Session{Hash: "h1", Wallet: "w1", CreatedAt: t0, ExpiresAt: t0.Add(crtx.SessionTTL)}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.Access.InsertSession(ctx, sess) })
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		got, err := tx.Access.SessionByHash(ctx, "h1")
		if err != nil || got != sess {
			t.Errorf("SessionByHash = %+v, %v; want %+v", got, err, sess)
		}
		return nil
	})
	update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.Access.DeleteSession(ctx, "h1") })
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if _, err := tx.Access.SessionByHash(ctx, "h1"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("deleted session: %v", err)
		}
		return nil
	})
}

func testKeys(t *testing.T, s crtx.Store) {
	limit := crtx.USDC(5_000_000)
	k := crtx.APIKey{ID: "key_1", Name: "ci", Environment: crtx.Devnet, Prefix: "crtx_test_abcd", CreatedAt: t0,
		SpendLimit: &limit, Wallet: "w1", Hash: "hash1"}
	k2 := crtx.APIKey{ID: "key_2", Name: "prod", Environment: crtx.Mainnet, Prefix: "crtx_live_wxyz",
		CreatedAt: t0.Add(time.Second), Wallet: "w1", Hash: "hash2"}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if err := tx.Access.InsertKey(ctx, k); err != nil {
			return err
		}
		return tx.Access.InsertKey(ctx, k2)
	})
	err := s.Update(context.Background(), func(tx crtx.Tx) error {
		dup := k2
		dup.ID = "key_3"
		return tx.Access.InsertKey(context.Background(), dup)
	})
	if !errors.Is(err, crtx.ErrConflict) {
		t.Errorf("a second key with the same hash: %v, want ErrConflict", err)
	}
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		got, err := tx.Access.KeyByHash(ctx, "hash1")
		if err != nil || got.ID != "key_1" || got.SpendLimit == nil || *got.SpendLimit != limit || !got.CreatedAt.Equal(t0) {
			t.Errorf("KeyByHash = %+v, %v", got, err)
		}
		if _, err := tx.Access.KeyByHash(ctx, "nope"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("unknown hash: %v", err)
		}
		keys, err := tx.Access.KeysByWallet(ctx, "w1")
		if err != nil || len(keys) != 2 || keys[0].ID != "key_1" || keys[1].SpendLimit != nil {
			t.Errorf("KeysByWallet = %+v, %v", keys, err)
		}
		if keys, _ := tx.Access.KeysByWallet(ctx, "w2"); len(keys) != 0 {
			t.Errorf("another wallet sees %d keys", len(keys))
		}
		return nil
	})
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if err := tx.Access.TouchKey(ctx, "key_1", t0.Add(time.Hour)); err != nil {
			return err
		}
		return tx.Access.RevokeKey(ctx, "key_1", t0.Add(2*time.Hour))
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		got, err := tx.Access.KeyByID(ctx, "key_1")
		if err != nil || got.LastUsedAt == nil || !got.LastUsedAt.Equal(t0.Add(time.Hour)) ||
			got.RevokedAt == nil || !got.RevokedAt.Equal(t0.Add(2*time.Hour)) {
			t.Errorf("after touch and revoke: %+v, %v", got, err)
		}
		return nil
	})
}

// A form's token is claimed once per owner; its outcome is kept for the
// replay; old forms go as new ones are sent, those of an owner that sends
// nothing more included.
func testSentForms(t *testing.T, s crtx.Store) {
	claim := func(owner, token string, at time.Time) error {
		return s.Update(context.Background(), func(tx crtx.Tx) error {
			return tx.Access.ClaimForm(context.Background(), crtx.SentForm{Owner: owner, Token: token, SentAt: at}, at.Add(-24*time.Hour))
		})
	}
	if err := claim("w1", "f1", t0); err != nil {
		t.Fatal(err)
	}
	if err := claim("w1", "f1", t0.Add(time.Second)); !errors.Is(err, crtx.ErrConflict) {
		t.Errorf("a form claimed twice: %v, want ErrConflict", err)
	}
	if err := claim("w2", "f1", t0); err != nil {
		t.Errorf("another owner's form with the same token: %v", err)
	}
	read := func(owner, token string) (f crtx.SentForm, err error) {
		err = s.View(context.Background(), func(tx crtx.Tx) (err error) {
			f, err = tx.Access.SentForm(context.Background(), owner, token)
			return err
		})
		return f, err
	}
	// Sent at once from two places, a form is claimed by one of them.
	claimed := make(chan error, 4)
	for range cap(claimed) {
		go func() { claimed <- claim("w3", "f1", t0) }()
	}
	won := 0
	for range cap(claimed) {
		switch err := <-claimed; {
		case err == nil:
			won++
		case !errors.Is(err, crtx.ErrConflict):
			t.Errorf("a concurrent claim: %v", err)
		}
	}
	if won != 1 {
		t.Errorf("a form sent four times at once was claimed %d times", won)
	}
	if f, err := read("w1", "f1"); err != nil || f.Outcome != nil || !f.SentAt.Equal(t0) {
		t.Errorf("a form in flight: %+v, %v", f, err)
	}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		return tx.Access.SetFormOutcome(ctx, "w1", "f1", []byte(`{"notice":"done"}`))
	})
	if f, err := read("w1", "f1"); err != nil || string(f.Outcome) != `{"notice":"done"}` {
		t.Errorf("a form's outcome: %+v, %v", f, err)
	}
	if err := claim("w2", "f2", t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := claim("w1", "f2", t0.Add(25*time.Hour)); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ owner, token string }{{"w1", "f1"}, {"w2", "f1"}, {"w3", "f1"}} {
		if _, err := read(f.owner, f.token); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("%s's day-old form %s is still kept: %v", f.owner, f.token, err)
		}
	}
	if _, err := read("w2", "f2"); err != nil {
		t.Errorf("a form of less than a day went too: %v", err)
	}
}
