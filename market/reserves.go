package market

import (
	"context"
	"errors"
	"sync"

	"github.com/crtx-market/crtx"
)

// surpluses keeps the last reserve check's surplus of each environment,
// for the metric that alerts when it goes below zero.
type surpluses struct {
	mu sync.Mutex
	by map[crtx.Environment]crtx.USDC
}

// Surpluses returns the surplus each environment's last reserve check found.
func (m *Ledger) Surpluses() map[crtx.Environment]crtx.USDC {
	m.surplus.mu.Lock()
	defer m.surplus.mu.Unlock()
	out := make(map[crtx.Environment]crtx.USDC, len(m.surplus.by))
	for env, s := range m.surplus.by {
		out[env] = s
	}
	return out
}

// Reserves compares, for each environment with a chain, what the treasury
// holds on the chain with what the ledger owes: every wallet balance,
// escrow, pending credit, collateral and withdrawal in flight. All of that
// is all the money deposits brought in and withdrawals have not yet taken
// out (what issuance is below zero), less the platform's fees; the surplus,
// on-chain less owed, is those fees and any transfer nobody attributed.
func (m *Ledger) Reserves(ctx context.Context) ([]crtx.Reserve, error) {
	out := []crtx.Reserve{}
	for _, env := range crtx.Environments {
		c := m.cfg.Chains[env]
		if c == nil {
			continue
		}
		r := crtx.Reserve{Environment: env, Treasury: c.Treasury(), TokenAccount: c.TokenAccount(), Cluster: c.Cluster()}
		// The ledger is read before the chain: a deposit credited between
		// the two reads is then on the chain already, so a concurrent
		// deposit can raise the surplus for a moment but never lower it.
		err := m.store.View(ctx, func(tx crtx.Tx) (err error) {
			r.Liabilities, err = liabilities(ctx, tx, env)
			if err != nil {
				return err
			}
			b, err := tx.Ledger.LastAnchoredBlock(ctx, env)
			if err == nil {
				r.AnchoredBlock = b.Height
			} else if !errors.Is(err, crtx.ErrNotFound) {
				return err
			}
			return nil
		})
		if err != nil {
			return nil, internal("reserves", err)
		}
		if r.OnChain, err = c.Balance(ctx); err != nil {
			return nil, chainDown(env, err)
		}
		r.Surplus = r.OnChain - r.Liabilities
		r.CheckedAt = m.now()
		out = append(out, r)
	}
	return out, nil
}

// Owed is what env's ledger owes its wallets (as a reserve's
// Liabilities): where env has no chain, the figure a reserve has.
func (m *Ledger) Owed(ctx context.Context, env crtx.Environment) (crtx.USDC, error) {
	owed, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) (crtx.USDC, error) { return liabilities(ctx, tx, env) })
	return owed, internal("owed", err)
}

// liabilities is what env's ledger owes its wallets.
func liabilities(ctx context.Context, tx crtx.Tx, env crtx.Environment) (crtx.USDC, error) {
	bal := func(kind crtx.AccountKind, id string) (crtx.USDC, error) {
		a, err := tx.Ledger.Account(ctx, env, crtx.AccountAddress(kind, id))
		if errors.Is(err, crtx.ErrNotFound) {
			return 0, nil
		}
		return a.Balance, err
	}
	issued, err := bal(crtx.AccountIssuance, crtx.IssuanceID)
	if err != nil {
		return 0, err
	}
	fees, err := bal(crtx.AccountTreasury, crtx.TreasuryID)
	if err != nil {
		return 0, err
	}
	pendingFees, err := pending(ctx, tx, env, crtx.AccountAddress(crtx.AccountTreasury, crtx.TreasuryID))
	return -issued - fees - pendingFees, err
}

// RunReserveCheck checks the reserves every AnchorInterval until ctx ends,
// logging an error whenever an environment's surplus is below zero: the
// treasury then holds less than the ledger owes.
func (m *Ledger) RunReserveCheck(ctx context.Context) {
	every(ctx, m.cfg.AnchorInterval, true, func(ctx context.Context) {
		rs, err := m.Reserves(ctx)
		if m.failed(ctx, err, "check reserves") {
			return
		}
		m.surplus.mu.Lock()
		for _, r := range rs {
			m.surplus.by[r.Environment] = r.Surplus
		}
		m.surplus.mu.Unlock()
		for _, r := range rs {
			if r.Surplus < 0 {
				m.cfg.Logger.Error("reserves short: the treasury holds less than the ledger owes", "environment", r.Environment,
					"on_chain_usdc", r.OnChain, "liabilities_usdc", r.Liabilities, "surplus_usdc", r.Surplus)
			}
		}
	})
}
