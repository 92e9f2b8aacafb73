package market

import (
	"context"
	"time"

	"github.com/crtx-market/crtx"
)

// SetVerified sets or clears a creator's verification badge.
func (m *Listings) SetVerified(ctx context.Context, wallet string, verified bool) (crtx.Creator, error) {
	if _, err := crtx.ParseAddress("wallet", wallet); err != nil {
		return crtx.Creator{}, err
	}
	p, err := m.setCreator(ctx, wallet, "verify creator", func(tx crtx.Tx) error {
		// The badge vouches for a creator's agents: a wallet that never
		// listed one has nothing to vouch for.
		if verified {
			agents, err := tx.Catalog.AgentsByCreator(ctx, wallet)
			if err != nil {
				return err
			}
			if len(agents) == 0 {
				return crtx.Errorf(crtx.CodeNotFound, "%s has listed no agent; the badge is for creators", wallet)
			}
		}
		return tx.Catalog.SetCreatorVerified(ctx, wallet, verified)
	})
	m.catalogChanged() // the badge shows in the catalog
	return p, err
}

// Suspend takes an agent out of the catalog and out of reach of executions
// (or, with suspended false, puts it back), whatever its creator does.
func (m *Listings) Suspend(ctx context.Context, id string, suspended bool) (crtx.AgentListItem, error) {
	var a crtx.Agent
	err := m.store.Update(ctx, func(tx crtx.Tx) (err error) {
		a, err = tx.Catalog.Agent(ctx, id)
		if err != nil {
			return missing(err, crtx.CodeAgentNotFound, "no agent %q", id)
		}
		now := m.now()
		if suspended && a.SuspendedAt == nil {
			a.SuspendedAt = &now
		} else if !suspended {
			a.SuspendedAt = nil
		}
		a.UpdatedAt = now
		if err := tx.Catalog.UpdateAgent(ctx, a); err != nil {
			return err
		}
		data := listingData(a)
		data["changed"] = "suspended"
		data["suspended"] = map[bool]string{true: "true", false: "false"}[suspended]
		_, err = m.post(ctx, tx, crtx.Mainnet, crtx.TxListingUpdated, data, nil, crtx.ListingAccount(a))
		return err
	})
	m.catalogChanged()
	if err != nil {
		return crtx.AgentListItem{}, internal("suspend", err)
	}
	return m.CreatorAgent(ctx, a.Creator, id)
}

// releaseBatch bounds the listings one release transaction returns.
const releaseBatch = 100

// ReleaseCollateral returns the collateral of delisted agents to their
// creators (CollateralReleased): what is left after slashing, 72 hours after
// the later of delisting and the agent's last mainnet execution, once no
// mainnet dispute about it is open. Devnet has no collateral, so nothing
// there holds it. Held listings are never read, so however many there are,
// the due ones behind them are released. It derives everything from the
// database each time, so it is safe to run again, after a restart, or on
// every replica. It returns how many listings it released.
func (m *Listings) ReleaseCollateral(ctx context.Context) (int, error) {
	released := 0
	for {
		n := 0
		err := m.store.Update(ctx, func(tx crtx.Tx) error {
			n = 0
			// One release at a time, across replicas: two would both read
			// the same due listings.
			if ok, err := tx.System.TryLock(ctx, "crtx-release"); err != nil || !ok {
				return err
			}
			agents, err := tx.Catalog.ReleasableCollateral(ctx, m.now().Add(-crtx.DisputeWindow), releaseBatch)
			if err != nil {
				return err
			}
			for _, a := range agents {
				coll := crtx.NewAccount(crtx.Mainnet, crtx.AccountCollateral, a.ID, a.Creator)
				left, err := tx.Ledger.Account(ctx, crtx.Mainnet, coll.Address)
				if err != nil {
					return err
				}
				wallet := crtx.NewAccount(crtx.Mainnet, crtx.AccountWallet, a.Creator, a.Creator)
				if _, err := m.post(ctx, tx, crtx.Mainnet, crtx.TxCollateralReleased,
					map[string]string{"agent_id": a.ID, "creator": a.Creator, "released_usdc": left.Balance.String()},
					[]crtx.Posting{{From: coll.Address, To: wallet.Address, Amount: left.Balance}}, coll, wallet, crtx.ListingAccount(a)); err != nil {
					return err
				}
			}
			n = len(agents)
			return nil
		})
		if err != nil {
			return released, internal("release collateral", err)
		}
		// Each released listing leaves the query, so a full batch means
		// there may be more.
		if released += n; n < releaseBatch {
			return released, nil
		}
	}
}

// RunReleases runs ReleaseCollateral every interval until ctx ends.
func (m *Listings) RunReleases(ctx context.Context, interval time.Duration) {
	every(ctx, interval, true, func(ctx context.Context) {
		if _, err := m.ReleaseCollateral(ctx); err != nil && ctx.Err() == nil {
			m.cfg.Logger.Error("release collateral", "err", err)
		}
	})
}
