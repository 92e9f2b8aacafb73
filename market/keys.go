package market

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/crtx-market/crtx"
)

// CreateKey makes an API key for wallet in env. The secret is returned only here.
func (m *Accounts) CreateKey(ctx context.Context, wallet, name string, env crtx.Environment, limit *crtx.USDC) (crtx.APIKey, string, error) {
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > 100 {
		return crtx.APIKey{}, "", crtx.Errorf(crtx.CodeInvalidRequest, "name must be 1 to 100 characters")
	}
	if !env.Valid() {
		return crtx.APIKey{}, "", crtx.Errorf(crtx.CodeInvalidRequest, "environment must be \"mainnet\" or \"devnet\"")
	}
	if limit != nil && *limit <= 0 {
		return crtx.APIKey{}, "", crtx.Errorf(crtx.CodeInvalidRequest, "spend_limit_usdc must be more than 0 (leave it out for no limit)")
	}
	secret := crtx.NewKeySecret(env)
	prefixLen := len(crtx.LiveKeyPrefix) + 4
	k := crtx.APIKey{ID: crtx.NewID("key_"), Name: name, Environment: env, Prefix: secret[:prefixLen],
		CreatedAt: m.now(), SpendLimit: limit, Wallet: wallet, Hash: crtx.HashSecret(secret)}
	if err := m.store.Update(ctx, func(tx crtx.Tx) error { return tx.Access.InsertKey(ctx, k) }); err != nil {
		return crtx.APIKey{}, "", internal("create key", err)
	}
	return k, secret, nil
}

// Keys lists wallet's keys, revoked ones included, oldest first.
func (m *Accounts) Keys(ctx context.Context, wallet string) ([]crtx.APIKey, error) {
	keys, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) ([]crtx.APIKey, error) { return tx.Access.KeysByWallet(ctx, wallet) })
	return keys, internal("list keys", err)
}

// RevokeKey revokes one of wallet's keys at once. Another wallet's key is
// reported as not found, so key ids reveal nothing.
func (m *Accounts) RevokeKey(ctx context.Context, wallet, id string) (crtx.APIKey, error) {
	var k crtx.APIKey
	err := m.store.Update(ctx, func(tx crtx.Tx) (err error) {
		k, err = tx.Access.KeyByID(ctx, id)
		if errors.Is(err, crtx.ErrNotFound) || (err == nil && k.Wallet != wallet) {
			return crtx.Errorf(crtx.CodeKeyNotFound, "no API key %q belongs to this wallet", id)
		}
		if err != nil || k.RevokedAt != nil {
			return err
		}
		now := m.now()
		k.RevokedAt = &now
		return tx.Access.RevokeKey(ctx, id, now)
	})
	// Forget every kept key (revocations are rare): this process refuses
	// the key from now on; other replicas within keyCacheTTL.
	m.keys.clear()
	return k, internal("revoke key", err)
}
