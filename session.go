package crtx

import (
	"context"
	"crypto/subtle"
	"errors"
	"strings"
	"time"
)

// Challenge issues a one-time sign-in message for wallet, valid for five minutes.
func (m *Market) Challenge(ctx context.Context, wallet string) (SignInMessage, error) {
	if _, err := ParseAddress("wallet", wallet); err != nil {
		return SignInMessage{}, err
	}
	now := m.now().Truncate(time.Second)
	msg := SignInMessage{Domain: m.domain, Wallet: wallet, URI: m.cfg.PublicURL, Nonce: RandomBase62(16),
		IssuedAt: now, ExpirationTime: now.Add(ChallengeTTL)}
	err := m.store.Update(ctx, func(tx Tx) error {
		return tx.InsertNonce(ctx, Nonce{Nonce: msg.Nonce, Wallet: wallet, ExpiresAt: msg.ExpirationTime})
	})
	if err != nil {
		return SignInMessage{}, internal("challenge", err)
	}
	return msg, nil
}

// SignIn checks a signed challenge and opens a 24-hour session. It returns
// the session token, which is shown only here.
func (m *Market) SignIn(ctx context.Context, wallet, message, signature string) (string, Session, error) {
	pub, err := ParseAddress("wallet", wallet)
	if err != nil {
		return "", Session{}, err
	}
	msg, err := ParseSignInMessage(message)
	if err != nil {
		return "", Session{}, Errorf(CodeInvalidRequest, "message is not a sign-in message from POST /v1/auth/challenge")
	}
	now := m.now()
	refuse := func(why string) (string, Session, error) {
		return "", Session{}, Errorf(CodeInvalidSignature, "%s", why)
	}
	switch {
	case msg.Wallet != wallet:
		return refuse("the message was issued to another wallet")
	case msg.Domain != m.domain || msg.URI != m.cfg.PublicURL:
		return refuse("the message was issued by another service")
	case !now.Before(msg.ExpirationTime):
		return refuse("the challenge has expired; ask for a new one")
	case !VerifyBase58(pub, []byte(message), signature):
		return refuse("the signature does not verify against the wallet's public key")
	}
	token := SessionPrefix + RandomBase62(secretLen)
	s := Session{Hash: HashSecret(token), Wallet: wallet, CreatedAt: now, ExpiresAt: now.Add(SessionTTL)}
	err = m.store.Update(ctx, func(tx Tx) error {
		ok, err := tx.UseNonce(ctx, msg.Nonce, wallet, now)
		if err != nil {
			return err
		}
		if !ok {
			return Errorf(CodeInvalidSignature, "the challenge was already used or never issued; ask for a new one")
		}
		return tx.InsertSession(ctx, s)
	})
	if err != nil {
		return "", Session{}, internal("sign in", err)
	}
	return token, s, nil
}

// operatorWallet stands for the operator in a session row, with a
// fingerprint of the admin token it was opened with, so that a new token
// ends the sessions of the old. It is no address, so no wallet's session
// is an operator's, and an operator session's prefix keeps Authenticate
// from taking it for a wallet's.
func operatorWallet(adminToken string) string { return "operator:" + HashSecret(adminToken)[:16] }

// OpenOperatorSession starts an operator's dashboard session, for someone
// who showed adminToken, and returns its token: a cookie that leaks then
// gives eight hours of the dashboard, not the admin API for good.
func (m *Market) OpenOperatorSession(ctx context.Context, adminToken string) (string, error) {
	now := m.now()
	token := OperatorPrefix + RandomBase62(secretLen)
	s := Session{Hash: HashSecret(token), Wallet: operatorWallet(adminToken), CreatedAt: now, ExpiresAt: now.Add(OperatorSessionTTL)}
	err := m.store.Update(ctx, func(tx Tx) error { return tx.InsertSession(ctx, s) })
	return token, internal("operator session", err)
}

// IsOperatorSession reports whether token is an operator's live session
// opened with adminToken.
func (m *Market) IsOperatorSession(ctx context.Context, token, adminToken string) bool {
	if !strings.HasPrefix(token, OperatorPrefix) {
		return false
	}
	s, err := Read(ctx, m.store, func(tx Tx) (Session, error) { return tx.SessionByHash(ctx, HashSecret(token)) })
	return err == nil && s.Wallet == operatorWallet(adminToken) && m.now().Before(s.ExpiresAt)
}

// SignOut ends the session of token.
func (m *Market) SignOut(ctx context.Context, token string) error {
	return internal("sign out", m.store.Update(ctx, func(tx Tx) error {
		return tx.DeleteSession(ctx, HashSecret(token))
	}))
}

// Authenticate resolves a bearer token to the wallet it acts for: a session
// token, or an API key that is well-formed, known and not revoked.
func (m *Market) Authenticate(ctx context.Context, token string) (Principal, error) {
	if token == "" {
		return Principal{}, Errorf(CodeAuthenticationRequired, "send Authorization: Bearer <API key or session token>")
	}
	now := m.now()
	if strings.HasPrefix(token, SessionPrefix) {
		s, err := Read(ctx, m.store, func(tx Tx) (Session, error) { return tx.SessionByHash(ctx, HashSecret(token)) })
		if errors.Is(err, ErrNotFound) || (err == nil && !now.Before(s.ExpiresAt)) {
			return Principal{}, Errorf(CodeInvalidSession, "the session token is unknown, expired or signed out; sign in again")
		}
		if err != nil {
			return Principal{}, internal("session", err)
		}
		return Principal{Wallet: s.Wallet}, nil
	}
	invalid := Errorf(CodeInvalidAPIKey, "the API key is not valid: it is malformed, unknown or revoked")
	if _, ok := keyEnvironment(token); !ok {
		return Principal{}, invalid
	}
	hash := HashSecret(token)
	// Keys are kept a moment (keyCacheTTL), so a burst of calls with one
	// key reads it once. Money never relies on the copy: an execution
	// reads the key again in the transaction that charges it.
	k, cached := m.keys.get(hash, time.Now())
	if !cached {
		err := m.store.View(ctx, func(tx Tx) (err error) {
			k, err = tx.KeyByHash(ctx, hash)
			return err
		})
		if errors.Is(err, ErrNotFound) {
			return Principal{}, invalid
		}
		if err != nil {
			return Principal{}, internal("api key", err)
		}
	}
	// The lookup was by hash; compare again in constant time so that no
	// index behaviour can leak how close a guess came.
	if subtle.ConstantTimeCompare([]byte(k.Hash), []byte(hash)) != 1 || k.RevokedAt != nil {
		return Principal{}, invalid
	}
	// last_used_at is kept to the minute, so reads do not each cost a write.
	// The write is blind (READ COMMITTED on PostgreSQL): the requests that
	// find it stale together each write it, waiting for the executions
	// that charge the key instead of failing to serialize with them.
	touched := false
	if k.LastUsedAt == nil || now.Sub(*k.LastUsedAt) >= keyTouchPeriod {
		if err := m.store.UpdateGuarded(ctx, func(tx Tx) error { return tx.TouchKey(ctx, k.ID, now) }); err != nil {
			return Principal{}, internal("touch api key", err)
		}
		k.LastUsedAt, touched = &now, true
	}
	if !cached || touched {
		m.keys.put(hash, k, time.Now())
	}
	return Principal{Wallet: k.Wallet, Key: &k}, nil
}
