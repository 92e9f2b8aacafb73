package e2e_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
)

func TestKeys(t *testing.T) {
	e := start(t)
	alice := newWallet(t)
	sess := e.signIn(alice)

	limit := usdc("2.5")
	live, err := sess.CreateKey(ctx, client.KeyParams{Name: "prod", Environment: crtx.Mainnet, SpendLimit: &limit})
	if err != nil {
		t.Fatal(err)
	}
	test, err := sess.CreateKey(ctx, client.KeyParams{Name: "ci", Environment: crtx.Devnet})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^crtx_live_[A-Za-z0-9]{32}$`).MatchString(live.Key) ||
		!regexp.MustCompile(`^crtx_test_[A-Za-z0-9]{32}$`).MatchString(test.Key) {
		t.Fatalf("key formats: %q %q", live.Key, test.Key)
	}
	if live.Prefix != live.Key[:14] || live.SpendLimit == nil || *live.SpendLimit != limit || test.SpendLimit != nil {
		t.Errorf("created key = %+v", live)
	}

	t.Run("list shows no secrets", func(t *testing.T) {
		var raw map[string]any
		if err := sess.Do(ctx, "GET", "/v1/keys", "", nil, &raw); err != nil {
			t.Fatal(err)
		}
		keys, err := sess.Keys(ctx)
		if err != nil || len(keys) != 2 {
			t.Fatalf("keys = %+v, %v", keys, err)
		}
		for _, k := range keys {
			if k.Prefix == "" || k.ExecutionCount != 0 || k.TotalSpent != 0 || k.RevokedAt != nil {
				t.Errorf("listed key = %+v", k)
			}
		}
		dump := strings.Join([]string{keys[0].Name, keys[0].Prefix, keys[1].Prefix}, " ")
		for _, secret := range []string{live.Key, test.Key} {
			if strings.Contains(dump, secret) || strings.Contains(fmtJSON(raw), secret) || strings.Contains(fmtJSON(raw), secret[14:]) {
				t.Errorf("the key list shows a secret")
			}
		}
	})

	t.Run("key acts for its environment only", func(t *testing.T) {
		w, err := e.anon.WithToken(test.Key).Wallet(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if w.Wallet != alice.address || len(w.Balances) != 1 {
			t.Errorf("wallet via devnet key = %+v", w)
		}
		if _, ok := w.Balances[crtx.Devnet]; !ok {
			t.Errorf("devnet key shows %v", w.Balances)
		}
		keys, _ := sess.Keys(ctx)
		for _, k := range keys {
			if k.ID == test.ID && (k.LastUsedAt == nil || k.LastUsedAt.Sub(e.clock.Now()) > time.Second) {
				t.Errorf("last_used_at after use = %v", k.LastUsedAt)
			}
		}
	})

	t.Run("an API key cannot manage keys", func(t *testing.T) {
		k := e.anon.WithToken(live.Key)
		_, err := k.CreateKey(ctx, client.KeyParams{Name: "x", Environment: crtx.Mainnet})
		wantCode(t, err, 401, "invalid_session")
		_, err = k.Keys(ctx)
		wantCode(t, err, 401, "invalid_session")
		_, err = k.RevokeKey(ctx, test.ID)
		wantCode(t, err, 401, "invalid_session")
	})

	t.Run("another wallet cannot revoke mine", func(t *testing.T) {
		mallory := e.signIn(newWallet(t))
		_, err := mallory.RevokeKey(ctx, live.ID)
		wantCode(t, err, 404, "key_not_found")
		if keys, _ := mallory.Keys(ctx); len(keys) != 0 {
			t.Errorf("another wallet lists %d of my keys", len(keys))
		}
		if _, err := e.anon.WithToken(live.Key).Wallet(ctx); err != nil {
			t.Errorf("my key stopped working: %v", err)
		}
	})

	t.Run("revoke takes effect at once", func(t *testing.T) {
		k, err := sess.RevokeKey(ctx, live.ID)
		if err != nil || k.RevokedAt == nil || k.ID != live.ID {
			t.Fatalf("revoke = %+v, %v", k, err)
		}
		_, err = e.anon.WithToken(live.Key).Wallet(ctx)
		wantCode(t, err, 401, "invalid_api_key")
		// Revoking again answers the same record.
		again, err := sess.RevokeKey(ctx, live.ID)
		if err != nil || !again.RevokedAt.Equal(*k.RevokedAt) {
			t.Errorf("second revoke = %+v, %v", again, err)
		}
		_, err = sess.RevokeKey(ctx, "key_unknown")
		wantCode(t, err, 404, "key_not_found")
	})

	t.Run("logs hold no secrets", func(t *testing.T) {
		e.logsLack(live.Key, test.Key, sess.Token(), adminToken)
	})

	t.Run("bad input", func(t *testing.T) {
		for _, p := range []client.KeyParams{{Name: "", Environment: crtx.Mainnet}, {Name: "x", Environment: "testnet"},
			{Name: strings.Repeat("n", 101), Environment: crtx.Devnet}} {
			_, err := sess.CreateKey(ctx, p)
			wantCode(t, err, 400, "invalid_request")
		}
		zero := crtx.USDC(0)
		_, err := sess.CreateKey(ctx, client.KeyParams{Name: "x", Environment: crtx.Devnet, SpendLimit: &zero})
		wantCode(t, err, 400, "invalid_request")
		err = sess.Do(ctx, "POST", "/v1/keys", "application/json", []byte(`{"name":"x","environment":"devnet","spend_limit_usdc":0.0000001}`), nil)
		wantCode(t, err, 400, "invalid_request")
	})
}

func TestCredentials(t *testing.T) {
	e := start(t)
	cases := []struct {
		name, header string
		code         string
	}{
		{"none", "", "authentication_required"},
		{"basic", "Basic dXNlcjpwYXNz", "authentication_required"},
		{"empty bearer", "Bearer ", "authentication_required"},
		{"short key", "Bearer crtx_live_abc", "invalid_api_key"},
		{"bad characters", "Bearer crtx_test_" + strings.Repeat("-", 32), "invalid_api_key"},
		{"unknown key", "Bearer crtx_test_" + strings.Repeat("a", 32), "invalid_api_key"},
		{"other prefix", "Bearer sk_live_" + strings.Repeat("a", 32), "invalid_api_key"},
		{"unknown session", "Bearer crtx_sess_" + strings.Repeat("a", 32), "invalid_session"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := rawRequest(e, "GET", "/v1/wallet", map[string]string{"Authorization": tc.header}, nil)
			wantCode(t, err, 401, tc.code)
		})
	}
}

func fmtJSON(v any) string { return strings.TrimSpace(mustJSON(v)) }
