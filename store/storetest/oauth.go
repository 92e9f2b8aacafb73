package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
)

// testOAuth: a connector's key is found by its refresh token and refreshed
// once per refresh token; clients lapse unused; codes are taken once.
func testOAuth(t *testing.T, s crtx.Store) {
	expires := t0.Add(time.Hour)
	key := crtx.APIKey{ID: "key_oauth", Name: "Claude (MCP connector)", Environment: crtx.Devnet, Prefix: "crtx_test_Ab3x",
		CreatedAt: t0, Wallet: "w1", Hash: "h1", Client: "oc_1", ExpiresAt: &expires, RefreshHash: "r1"}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if err := tx.Access.InsertKey(ctx, key); err != nil {
			return err
		}
		// Keys made by hand have no refresh token, and many of them coexist.
		for _, id := range []string{"key_a", "key_b"} {
			if err := tx.Access.InsertKey(ctx, crtx.APIKey{ID: id, Name: id, Environment: crtx.Devnet, Prefix: "crtx_test_x", CreatedAt: t0, Wallet: "w1", Hash: id}); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		got, err := tx.Access.KeyByRefreshHash(ctx, "r1")
		if err != nil || got.ID != key.ID || got.Client != "oc_1" || got.ExpiresAt == nil || !got.ExpiresAt.Equal(expires) || got.RefreshHash != "r1" {
			t.Errorf("KeyByRefreshHash(r1) = %+v, %v", got, err)
		}
		if hand, err := tx.Access.KeyByID(ctx, "key_a"); err != nil || hand.Client != "" || hand.ExpiresAt != nil || hand.RefreshHash != "" {
			t.Errorf("a key made by hand reads %+v, %v", hand, err)
		}
		if _, err := tx.Access.KeyByRefreshHash(ctx, ""); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("the empty refresh hash finds %v", err)
		}
		return nil
	})
	later := expires.Add(time.Hour)
	next := key
	next.Hash, next.Prefix, next.ExpiresAt, next.RefreshHash = "h2", "crtx_test_Cd4y", &later, "r2"
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		return tx.Access.RefreshKey(ctx, next, "r1", t0, t0.Add(-time.Hour))
	})
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if err := tx.Access.RefreshKey(ctx, next, "r1", t0, t0.Add(-time.Hour)); !errors.Is(err, crtx.ErrConflict) {
			t.Errorf("a second refresh with r1: %v, want ErrConflict", err)
		}
		if _, err := tx.Access.KeyByRefreshHash(ctx, "r1"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("the spent refresh token still finds the key: %v", err)
		}
		got, err := tx.Access.KeyByHash(ctx, "h2")
		if err != nil || got.Prefix != "crtx_test_Cd4y" || !got.ExpiresAt.Equal(later) || got.RefreshHash != "r2" {
			t.Errorf("after refresh = %+v, %v", got, err)
		}
		// The token rotated away is remembered with its key; the current
		// one is no spent token.
		if id, at, err := tx.Access.SpentRefresh(ctx, "r1"); err != nil || id != key.ID || !at.Equal(t0) {
			t.Errorf("SpentRefresh(r1) = %q, %v, %v", id, at, err)
		}
		if _, _, err := tx.Access.SpentRefresh(ctx, "r2"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("SpentRefresh(r2), the current token: %v", err)
		}
		// A later refresh forgets the tokens spent before its forgetBefore.
		fourth := next
		fourth.RefreshHash = "r4"
		if err := tx.Access.RefreshKey(ctx, fourth, "r2", t0.Add(2*time.Hour), t0.Add(time.Hour)); err != nil {
			return err
		}
		if _, _, err := tx.Access.SpentRefresh(ctx, "r1"); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("a token spent before forgetBefore is remembered: %v", err)
		}
		if id, _, err := tx.Access.SpentRefresh(ctx, "r2"); err != nil || id != key.ID {
			t.Errorf("SpentRefresh(r2) = %q, %v", id, err)
		}
		if err := tx.Access.RevokeKey(ctx, key.ID, t0); err != nil {
			return err
		}
		third := next
		third.RefreshHash = "r3"
		if err := tx.Access.RefreshKey(ctx, third, "r4", t0.Add(3*time.Hour), t0); !errors.Is(err, crtx.ErrConflict) {
			t.Errorf("a revoked key refreshed: %v", err)
		}
		return nil
	})

	old := crtx.OAuthClient{ID: "oc_old", Name: "Old", RedirectURIs: []string{"https://a.example/cb"}, CreatedAt: t0}
	used := crtx.OAuthClient{ID: "oc_used", Name: "Used", RedirectURIs: []string{"https://b.example/cb", "http://127.0.0.1/cb"}, CreatedAt: t0}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		for _, c := range []crtx.OAuthClient{old, used} {
			if err := tx.Access.InsertOAuthClient(ctx, c, t0.Add(-crtx.UnusedClientTTL)); err != nil {
				return err
			}
		}
		return tx.Access.UseOAuthClient(ctx, used.ID, t0.Add(time.Minute))
	})
	fresh := crtx.OAuthClient{ID: "oc_new", Name: "New", RedirectURIs: []string{"https://c.example/cb"}, CreatedAt: t0.Add(2 * crtx.UnusedClientTTL)}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		return tx.Access.InsertOAuthClient(ctx, fresh, fresh.CreatedAt.Add(-crtx.UnusedClientTTL))
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if _, err := tx.Access.OAuthClient(ctx, old.ID); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("an unused registration outlived its day: %v", err)
		}
		got, err := tx.Access.OAuthClient(ctx, used.ID)
		if err != nil || got.Name != "Used" || !slices.Equal(got.RedirectURIs, used.RedirectURIs) || got.UsedAt == nil || !got.CreatedAt.Equal(t0) {
			t.Errorf("OAuthClient(used) = %+v, %v", got, err)
		}
		return nil
	})

	limit := crtx.USDC(5_000_000)
	code := crtx.OAuthCode{Hash: "c1", ClientID: "oc_used", ClientName: "Used", RedirectURI: "https://b.example/cb", Challenge: "ch",
		Wallet: "w1", Environment: crtx.Devnet, SpendLimit: &limit, ExpiresAt: t0.Add(crtx.OAuthCodeTTL)}
	stale := code
	stale.Hash, stale.ExpiresAt = "c0", t0
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if err := tx.Access.InsertOAuthCode(ctx, stale, t0.Add(-time.Second)); err != nil {
			return err
		}
		return tx.Access.InsertOAuthCode(ctx, code, t0)
	})
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if _, err := tx.Access.OAuthCode(ctx, "c0", t0); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("an expired code outlived the next insert: %v", err)
		}
		got, err := tx.Access.OAuthCode(ctx, "c1", t0)
		if err != nil || got.ClientID != "oc_used" || got.Wallet != "w1" || got.Environment != crtx.Devnet || got.SpendLimit == nil || *got.SpendLimit != limit ||
			got.Challenge != "ch" || !got.ExpiresAt.Equal(code.ExpiresAt) || got.Spent != nil {
			t.Errorf("OAuthCode(c1) = %+v, %v", got, err)
		}
		if _, err := tx.Access.OAuthCode(ctx, "c1", code.ExpiresAt); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("a code read at its expiry: %v", err)
		}
		if err := tx.Access.SpendOAuthCode(ctx, "c1", "key_1", t0.Add(time.Second)); err != nil {
			return err
		}
		if err := tx.Access.SpendOAuthCode(ctx, "c1", "key_2", t0.Add(2*time.Second)); !errors.Is(err, crtx.ErrConflict) {
			t.Errorf("a code spent twice: %v", err)
		}
		if got, err := tx.Access.OAuthCode(ctx, "c1", t0); err != nil || got.Spent == nil || *got.Spent != "key_1" ||
			got.SpentAt == nil || !got.SpentAt.Equal(t0.Add(time.Second)) {
			t.Errorf("the spent code reads %+v, %v", got, err)
		}
		return nil
	})
}
