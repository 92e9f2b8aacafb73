package e2e_test

import (
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
)

func TestSignIn(t *testing.T) {
	e := start(t)
	w := newWallet(t)

	ch, err := e.anon.Challenge(ctx, w.address)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ch.Message, w.address) || !strings.Contains(ch.Message, "Nonce: ") ||
		!strings.HasPrefix(ch.Message, strings.TrimPrefix(e.d.URL, "http://")+" wants you to sign in") {
		t.Errorf("challenge message does not name the domain, wallet and nonce:\n%s", ch.Message)
	}
	if got := ch.ExpiresAt.Sub(e.clock.Now()); got < 4*time.Minute || got > 5*time.Minute {
		t.Errorf("challenge expires in %v, want 5 minutes", got)
	}
	sig := crtx.SignBase58(w.key, []byte(ch.Message))

	t.Run("wrong signer", func(t *testing.T) {
		other := newWallet(t)
		_, err := e.anon.CreateSession(ctx, w.address, ch.Message, crtx.SignBase58(other.key, []byte(ch.Message)))
		wantCode(t, err, 401, "invalid_signature")
	})
	t.Run("signature over another text", func(t *testing.T) {
		_, err := e.anon.CreateSession(ctx, w.address, ch.Message, crtx.SignBase58(w.key, []byte("hello")))
		wantCode(t, err, 401, "invalid_signature")
	})
	t.Run("message of another wallet", func(t *testing.T) {
		other := newWallet(t)
		_, err := e.anon.CreateSession(ctx, other.address, ch.Message, crtx.SignBase58(other.key, []byte(ch.Message)))
		wantCode(t, err, 401, "invalid_signature")
	})

	s, err := e.anon.CreateSession(ctx, w.address, ch.Message, sig)
	if err != nil {
		t.Fatalf("good sign-in after failed tries: %v", err)
	}
	if !strings.HasPrefix(s.SessionToken, "crtx_sess_") || s.Wallet != w.address {
		t.Errorf("session = %+v", s)
	}
	if got := s.ExpiresAt.Sub(e.clock.Now()); got < 23*time.Hour || got > 24*time.Hour {
		t.Errorf("session lasts %v, want 24h", got)
	}
	sess := e.anon.WithToken(s.SessionToken)
	if _, err := sess.Keys(ctx); err != nil {
		t.Fatalf("the session does not act: %v", err)
	}

	t.Run("replayed nonce", func(t *testing.T) {
		_, err := e.anon.CreateSession(ctx, w.address, ch.Message, sig)
		wantCode(t, err, 401, "invalid_signature")
	})
	t.Run("malformed address", func(t *testing.T) {
		for _, addr := range []string{"", "not-base58-0OIl", "111", w.address[:len(w.address)-1] + "0", w.address + "xxxxxxxx", "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB"} {
			_, err := e.anon.Challenge(ctx, addr)
			wantCode(t, err, 400, "invalid_request")
		}
	})
	t.Run("malformed message", func(t *testing.T) {
		_, err := e.anon.CreateSession(ctx, w.address, "please let me in", sig)
		wantCode(t, err, 400, "invalid_request")
	})
	t.Run("expired challenge", func(t *testing.T) {
		ch, err := e.anon.Challenge(ctx, w.address)
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(5*time.Minute + time.Second)
		_, err = e.anon.CreateSession(ctx, w.address, ch.Message, crtx.SignBase58(w.key, []byte(ch.Message)))
		wantCode(t, err, 401, "invalid_signature")
	})
	t.Run("forged nonce", func(t *testing.T) {
		ch, _ := e.anon.Challenge(ctx, w.address)
		msg := strings.Replace(ch.Message, "Nonce: ", "Nonce: X", 1)
		_, err := e.anon.CreateSession(ctx, w.address, msg, crtx.SignBase58(w.key, []byte(msg)))
		wantCode(t, err, 401, "invalid_signature")
	})
	// The message signed must be the challenge as issued, to the byte: a
	// wallet that writes the sign-in message itself cannot stretch it.
	t.Run("changed times", func(t *testing.T) {
		ch, err := e.anon.Challenge(ctx, w.address)
		if err != nil {
			t.Fatal(err)
		}
		m, err := crtx.ParseSignInMessage(ch.Message)
		if err != nil {
			t.Fatal(err)
		}
		later, earlier := m, m
		later.ExpirationTime = later.ExpirationTime.Add(time.Hour)
		earlier.IssuedAt = earlier.IssuedAt.Add(-time.Minute)
		for _, changed := range []crtx.SignInMessage{later, earlier} {
			msg := changed.String()
			_, err := e.anon.CreateSession(ctx, w.address, msg, crtx.SignBase58(w.key, []byte(msg)))
			wantCode(t, err, 401, "invalid_signature")
			if err == nil || !strings.Contains(err.Error(), "unchanged") {
				t.Errorf("refusal of a changed message: %v", err)
			}
		}
		if _, err := e.anon.CreateSession(ctx, w.address, ch.Message, crtx.SignBase58(w.key, []byte(ch.Message))); err != nil {
			t.Errorf("the challenge as issued, after changed copies were refused: %v", err)
		}
	})
	t.Run("session expires after 24h", func(t *testing.T) {
		c := e.signIn(w)
		e.clock.Advance(24 * time.Hour)
		_, err := c.Keys(ctx)
		wantCode(t, err, 401, "invalid_session")
	})
	t.Run("logout", func(t *testing.T) {
		c := e.signIn(w)
		if err := c.SignOut(ctx); err != nil {
			t.Fatal(err)
		}
		_, err := c.Keys(ctx)
		wantCode(t, err, 401, "invalid_session")
		wantCode(t, c.SignOut(ctx), 401, "invalid_session")
	})
	t.Run("unknown session", func(t *testing.T) {
		_, err := e.anon.WithToken("crtx_sess_" + strings.Repeat("a", 32)).Keys(ctx)
		wantCode(t, err, 401, "invalid_session")
	})
}
