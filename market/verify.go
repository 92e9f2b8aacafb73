package market

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"math"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/merkle"
)

// LedgerReport is what VerifyLedger found in one environment.
type LedgerReport struct {
	Environment  crtx.Environment
	Blocks       int64
	Transactions int64
	Accounts     int
	// Sum is the sum of every account's balance and of the credits not
	// yet posted (Pending); it must be zero.
	Sum crtx.USDC
	// Unposted transactions are committed but their credits, Pending in
	// all, wait for the roll-up (Rollup).
	Unposted int
	Pending  crtx.USDC
	Problems []string
}

// OK reports whether the ledger holds together.
func (r LedgerReport) OK() bool { return len(r.Problems) == 0 }

// VerifyLedger re-checks one environment's ledger from its rows: every block's
// hash link, Merkle root and authority signature, every balance against the
// postings that made it, that no account the database keeps non-negative is
// below zero, and that all accounts sum to zero.
func VerifyLedger(ctx context.Context, store crtx.Store, env crtx.Environment, authority ed25519.PublicKey) (LedgerReport, error) {
	r := LedgerReport{Environment: env}
	problem := func(format string, args ...any) { r.Problems = append(r.Problems, fmt.Sprintf(format, args...)) }
	err := store.View(ctx, func(tx crtx.Tx) error {
		// Blocks, in height order, each against the one before.
		prevHash := crtx.GenesisPrevHash
		for h := int64(1); ; h++ {
			b, err := tx.Ledger.Block(ctx, env, h)
			if errors.Is(err, crtx.ErrNotFound) {
				break
			}
			if err != nil {
				return err
			}
			r.Blocks++
			if b.PrevHash != prevHash {
				problem("block %d: prev_hash %s does not match block %d's hash %s", h, b.PrevHash, h-1, prevHash)
			}
			hash := b.ComputeHash()
			if hash.String() != b.Hash {
				problem("block %d: header hashes to %s, not its recorded hash %s", h, hash, b.Hash)
			}
			if !crtx.VerifyBase58(authority, hash[:], b.Signature) {
				problem("block %d: signature does not verify against the ledger authority key", h)
			}
			txs, err := tx.Ledger.BlockTransactions(ctx, env, h)
			if err != nil {
				return err
			}
			if len(txs) != b.TxCount {
				problem("block %d: holds %d transactions, its header says %d", h, len(txs), b.TxCount)
			}
			if root := merkle.Root(crtx.TxLeaves(txs)); root.String() != b.MerkleRoot {
				problem("block %d: transactions give Merkle root %s, not the sealed %s (a sealed transaction or posting was changed)", h, root, b.MerkleRoot)
			}
			prevHash = b.Hash
		}

		// Balances from postings, transaction by transaction.
		want := map[string]crtx.USDC{}
		var after int64
		for {
			txs, err := tx.Ledger.Transactions(ctx, env, after, 500)
			if err != nil {
				return err
			}
			if len(txs) == 0 {
				break
			}
			for _, t := range txs {
				r.Transactions++
				after = t.Seq
				if t.BlockHeight > r.Blocks {
					problem("transaction %s: sealed in block %d, which does not exist", t.ID, t.BlockHeight)
				}
				for i, p := range t.Postings {
					if p.Amount <= 0 {
						problem("transaction %s: posting %d moves %s, not a positive amount", t.ID, i, p.Amount)
					}
					want[p.From] -= p.Amount
					want[p.To] += p.Amount
				}
			}
		}
		// Credits that the roll-up has yet to post are in the postings but
		// not in the balances.
		unposted, err := tx.Ledger.Unposted(ctx, env, math.MaxInt32)
		if err != nil {
			return err
		}
		pending := map[string]crtx.USDC{}
		for _, t := range unposted {
			r.Unposted++
			if !t.RolledUp() {
				problem("transaction %s: a %s waits for the roll-up, which posts only the transactions that end executions", t.ID, t.Kind)
			}
			for _, c := range t.DeferredCredits() {
				pending[c.Address] += c.Amount
				r.Pending += c.Amount
			}
		}
		accounts, err := tx.Ledger.Accounts(ctx, env)
		if err != nil {
			return err
		}
		r.Accounts = len(accounts)
		r.Sum = r.Pending
		for _, a := range accounts {
			r.Sum += a.Balance
			if a.Balance+pending[a.Address] != want[a.Address] {
				problem("account %s (%s %s): balance %s and %s to post, but its postings give %s",
					a.Address, a.Kind, a.Ref, a.Balance, pending[a.Address], want[a.Address])
			}
			if a.Balance < 0 && !a.MayGoNegative() {
				problem("account %s (%s %s): balance %s is below zero", a.Address, a.Kind, a.Ref, a.Balance)
			}
			delete(want, a.Address)
		}
		for addr := range want {
			problem("postings name account %s, which does not exist", addr)
		}
		if r.Sum != 0 {
			problem("accounts and the credits to post sum to %s USDC, not zero", r.Sum)
		}
		return nil
	})
	return r, err
}
