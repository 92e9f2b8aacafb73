package market

import (
	"context"
	"crypto/subtle"
	"errors"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
)

// Challenge issues a one-time sign-in message for wallet, valid for five minutes.
func (m *Accounts) Challenge(ctx context.Context, wallet string) (crtx.SignInMessage, error) {
	if _, err := crtx.ParseAddress("wallet", wallet); err != nil {
		return crtx.SignInMessage{}, err
	}
	now := m.now().Truncate(time.Second)
	msg := crtx.SignInMessage{Domain: m.domain, Wallet: wallet, URI: m.cfg.PublicURL, Nonce: crtx.RandomBase62(16),
		IssuedAt: now, ExpirationTime: now.Add(crtx.ChallengeTTL)}
	err := m.store.Update(ctx, func(tx crtx.Tx) error {
		return tx.Access.InsertNonce(ctx, crtx.Nonce{Nonce: msg.Nonce, Wallet: wallet, ExpiresAt: msg.ExpirationTime})
	})
	if err != nil {
		return crtx.SignInMessage{}, internal("challenge", err)
	}
	return msg, nil
}

// SignIn checks a signed challenge and opens a 24-hour session. It returns
// the session token, which is shown only here.
func (m *Accounts) SignIn(ctx context.Context, wallet, message, signature string) (string, crtx.Session, error) {
	pub, err := crtx.ParseAddress("wallet", wallet)
	if err != nil {
		return "", crtx.Session{}, err
	}
	msg, err := crtx.ParseSignInMessage(message)
	if err != nil {
		return "", crtx.Session{}, crtx.Errorf(crtx.CodeInvalidRequest, "message is not a sign-in message from POST /v1/auth/challenge")
	}
	now := m.now()
	refuse := func(why string) (string, crtx.Session, error) {
		return "", crtx.Session{}, crtx.Errorf(crtx.CodeInvalidSignature, "%s", why)
	}
	switch {
	case msg.Wallet != wallet:
		return refuse("the message was issued to another wallet")
	case msg.Domain != m.domain || msg.URI != m.cfg.PublicURL:
		return refuse("the message was issued by another service")
	case !now.Before(msg.ExpirationTime):
		return refuse("the challenge has expired; ask for a new one")
	case !crtx.VerifyBase58(pub, []byte(message), signature):
		return refuse("the signature does not verify against the wallet's public key")
	}
	token := crtx.SessionPrefix + crtx.RandomBase62(crtx.SecretLen)
	s := crtx.Session{Hash: crtx.HashSecret(token), Wallet: wallet, CreatedAt: now, ExpiresAt: now.Add(crtx.SessionTTL)}
	used := crtx.Errorf(crtx.CodeInvalidSignature, "the challenge was already used or never issued; ask for a new one")
	err = m.store.Update(ctx, func(tx crtx.Tx) error {
		// Only the very text issued is taken: a wallet's sign-in feature
		// writes the message itself from the fields it is given, and one
		// that changed the times would otherwise sign in with them. The
		// nonce's row keeps the expiry; Challenge made the issue time
		// ChallengeTTL before it.
		expires, err := tx.Access.NonceExpiry(ctx, msg.Nonce, wallet)
		if errors.Is(err, crtx.ErrNotFound) {
			return used
		}
		if err != nil {
			return err
		}
		if !expires.Equal(msg.ExpirationTime) || !msg.IssuedAt.Equal(expires.Add(-crtx.ChallengeTTL)) {
			return crtx.Errorf(crtx.CodeInvalidSignature, "the message is not the challenge as issued: its Issued At or Expiration Time was changed; sign the message from POST /v1/auth/challenge unchanged")
		}
		ok, err := tx.Access.UseNonce(ctx, msg.Nonce, wallet, now)
		if err != nil {
			return err
		}
		if !ok {
			return used
		}
		return tx.Access.InsertSession(ctx, s)
	})
	if err != nil {
		return "", crtx.Session{}, internal("sign in", err)
	}
	return token, s, nil
}

// operatorWallet stands for the operator in a session row, with a
// fingerprint of the admin token it was opened with, so that a new token
// ends the sessions of the old. It is no address, so no wallet's session
// is an operator's, and an operator session's prefix keeps Authenticate
// from taking it for a wallet's.
func operatorWallet(adminToken string) string { return "operator:" + crtx.HashSecret(adminToken)[:16] }

// OpenOperatorSession starts an operator's dashboard session, for someone
// who showed adminToken, and returns its token: a cookie that leaks then
// gives eight hours of the dashboard, not the admin API for good.
func (m *Accounts) OpenOperatorSession(ctx context.Context, adminToken string) (string, error) {
	now := m.now()
	token := crtx.OperatorPrefix + crtx.RandomBase62(crtx.SecretLen)
	s := crtx.Session{Hash: crtx.HashSecret(token), Wallet: operatorWallet(adminToken), CreatedAt: now, ExpiresAt: now.Add(crtx.OperatorSessionTTL)}
	err := m.store.Update(ctx, func(tx crtx.Tx) error { return tx.Access.InsertSession(ctx, s) })
	return token, internal("operator session", err)
}

// IsOperatorSession reports whether token is an operator's live session
// opened with adminToken.
func (m *Accounts) IsOperatorSession(ctx context.Context, token, adminToken string) bool {
	if !strings.HasPrefix(token, crtx.OperatorPrefix) {
		return false
	}
	s, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) (crtx.Session, error) { return tx.Access.SessionByHash(ctx, crtx.HashSecret(token)) })
	return err == nil && s.Wallet == operatorWallet(adminToken) && m.now().Before(s.ExpiresAt)
}

// SignOut ends the session of token.
func (m *Accounts) SignOut(ctx context.Context, token string) error {
	return internal("sign out", m.store.Update(ctx, func(tx crtx.Tx) error {
		return tx.Access.DeleteSession(ctx, crtx.HashSecret(token))
	}))
}

// Authenticate resolves a bearer token to the wallet it acts for: a session
// token, or an API key that is well-formed, known and not revoked.
func (m *Accounts) Authenticate(ctx context.Context, token string) (crtx.Principal, error) {
	if token == "" {
		return crtx.Principal{}, crtx.Errorf(crtx.CodeAuthenticationRequired, "send Authorization: Bearer <API key or session token>")
	}
	now := m.now()
	if strings.HasPrefix(token, crtx.SessionPrefix) {
		s, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) (crtx.Session, error) { return tx.Access.SessionByHash(ctx, crtx.HashSecret(token)) })
		if errors.Is(err, crtx.ErrNotFound) || (err == nil && !now.Before(s.ExpiresAt)) {
			return crtx.Principal{}, crtx.Errorf(crtx.CodeInvalidSession, "the session token is unknown, expired or signed out; sign in again")
		}
		if err != nil {
			return crtx.Principal{}, internal("session", err)
		}
		return crtx.Principal{Wallet: s.Wallet}, nil
	}
	invalid := crtx.Errorf(crtx.CodeInvalidAPIKey, "the API key is not valid: it is malformed, unknown or revoked")
	if _, ok := crtx.KeyEnvironment(token); !ok {
		return crtx.Principal{}, invalid
	}
	hash := crtx.HashSecret(token)
	// Keys are kept a moment (keyCacheTTL), so a burst of calls with one
	// key reads it once. Money never relies on the copy: an execution
	// reads the key again in the transaction that charges it.
	k, cached := m.keys.get(hash, time.Now())
	if !cached {
		err := m.store.View(ctx, func(tx crtx.Tx) (err error) {
			k, err = tx.Access.KeyByHash(ctx, hash)
			return err
		})
		if errors.Is(err, crtx.ErrNotFound) {
			return crtx.Principal{}, invalid
		}
		if err != nil {
			return crtx.Principal{}, internal("api key", err)
		}
	}
	// The lookup was by hash; compare again in constant time so that no
	// index behaviour can leak how close a guess came.
	if subtle.ConstantTimeCompare([]byte(k.Hash), []byte(hash)) != 1 || k.RevokedAt != nil {
		return crtx.Principal{}, invalid
	}
	if k.ExpiresAt != nil && !now.Before(*k.ExpiresAt) {
		return crtx.Principal{}, crtx.Errorf(crtx.CodeInvalidAPIKey, "the connector's access token has expired; refresh it at the token endpoint")
	}
	// last_used_at is kept to the minute, so reads do not each cost a write.
	// The write is blind (READ COMMITTED on PostgreSQL): the requests that
	// find it stale together each write it, waiting for the executions
	// that charge the key instead of failing to serialize with them.
	touched := false
	if k.LastUsedAt == nil || now.Sub(*k.LastUsedAt) >= crtx.KeyTouchPeriod {
		if err := m.store.UpdateGuarded(ctx, func(tx crtx.Tx) error { return tx.Access.TouchKey(ctx, k.ID, now) }); err != nil {
			return crtx.Principal{}, internal("touch api key", err)
		}
		k.LastUsedAt, touched = &now, true
	}
	if !cached || touched {
		m.keys.put(hash, k, time.Now())
	}
	return crtx.Principal{Wallet: k.Wallet, Key: &k}, nil
}
