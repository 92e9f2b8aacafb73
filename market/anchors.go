package market

import (
	"context"
	"errors"

	"github.com/crtx-market/crtx"
)

// RunAnchors anchors the newest sealed block of each environment with a
// chain every AnchorInterval, until ctx ends.
func (m *Ledger) RunAnchors(ctx context.Context) {
	every(ctx, m.cfg.AnchorInterval, true, func(ctx context.Context) {
		for env := range m.cfg.Chains {
			_, err := m.AnchorBlock(ctx, env)
			m.failed(ctx, err, "anchor block", "environment", env)
		}
	})
}

// AnchorBlock writes the newest sealed block of env to its chain, in an SPL
// Memo crtx:<environment>:<height>:<hash> signed by the ledger authority,
// and records the transaction on the block. Earlier blocks need no memo of
// their own: each block's hash covers the one before it. It returns the
// block, which has no anchor when there was no block or it had one already.
//
// Two replicas may anchor the same block at once; the second memo costs a
// fee and proves the same thing, so no lock is held across the chain's
// confirmation.
func (m *Ledger) AnchorBlock(ctx context.Context, env crtx.Environment) (crtx.Block, error) {
	c, err := m.chain(env)
	if err != nil {
		return crtx.Block{}, err
	}
	b, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) (crtx.Block, error) { return tx.Ledger.LastBlock(ctx, env) })
	if errors.Is(err, crtx.ErrNotFound) || (err == nil && b.Anchor != nil) {
		return crtx.Block{}, nil
	}
	if err != nil {
		return crtx.Block{}, err
	}
	a, err := c.Anchor(ctx, crtx.AnchorMemo(b), m.cfg.Authority)
	if err != nil {
		return crtx.Block{}, err
	}
	if err := m.store.Update(ctx, func(tx crtx.Tx) error { return tx.Ledger.SetBlockAnchor(ctx, env, b.Height, a) }); err != nil {
		return crtx.Block{}, err
	}
	b.Anchor = &a
	m.cfg.Logger.Info("block anchored", "environment", env, "height", b.Height, "signature", a.Signature)
	return b, nil
}
