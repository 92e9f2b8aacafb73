package market

import (
	"context"
	"errors"
	"time"

	"github.com/crtx-market/crtx"
)

// formMemory is how long a sent form is remembered: longer than a page's
// forms may be sent (the web package refuses older ones as stale).
const formMemory = 24 * time.Hour

// ClaimForm records that owner sent the form that carries token, before
// its action runs. It reports false when the form was sent already.
func (m *Accounts) ClaimForm(ctx context.Context, owner, token string) (bool, error) {
	now := m.now()
	// The primary key holds the once-only rule, so the weakest isolation
	// serves: forms sent at once (two tabs, two wallets sweeping the same
	// old forms) wait on each other at most, never fail each other.
	err := m.store.UpdateGuarded(ctx, func(tx crtx.Tx) error {
		return tx.Access.ClaimForm(ctx, crtx.SentForm{Owner: owner, Token: token, SentAt: now}, now.Add(-formMemory))
	})
	if errors.Is(err, crtx.ErrConflict) {
		return false, nil
	}
	return err == nil, internal("claim form", err)
}

// SentForm returns a sent form with what it led to (no outcome while its
// action runs), or ErrNotFound for a form never sent (or forgotten).
func (m *Accounts) SentForm(ctx context.Context, owner, token string) (crtx.SentForm, error) {
	f, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) (crtx.SentForm, error) { return tx.Access.SentForm(ctx, owner, token) })
	if errors.Is(err, crtx.ErrNotFound) {
		return f, err
	}
	return f, internal("sent form", err)
}

// SetFormOutcome keeps what a sent form led to, for the page it lands on
// and for its replays.
func (m *Accounts) SetFormOutcome(ctx context.Context, owner, token string, outcome []byte) error {
	return internal("form outcome", m.store.Update(ctx, func(tx crtx.Tx) error {
		return tx.Access.SetFormOutcome(ctx, owner, token, outcome)
	}))
}
