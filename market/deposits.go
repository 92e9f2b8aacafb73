package market

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/crtx-market/crtx"
)

// MaxDeposit is the most one deposit request asks for.
const MaxDeposit crtx.USDC = 1_000_000 * crtx.MicroPerUSDC

// The watcher's bounds: a turn reads at most watchBatch deposits, at most
// watchPerWallet of one wallet (so one wallet's requests never starve
// another's), and fetches at most watchBudget transactions.
const (
	watchBatch     = 100
	watchPerWallet = 2
	watchBudget    = 200
)

// A wallet has at most MaxOpenDeposits requests awaiting payment in an
// environment, and opens at most DepositsPerHour an hour: each is a
// reference the watcher reads for 30 days.
const (
	MaxOpenDeposits = 10
	DepositsPerHour = 20
)

// depositLookback is how long after its request a deposit's reference is
// still read for late payments: past its expiry, once a minute.
const depositLookback = 30 * 24 * time.Hour

// chain returns env's chain, or chain_not_configured.
func (m *core) chain(env crtx.Environment) (crtx.Chain, error) {
	if !env.Valid() {
		return nil, crtx.Errorf(crtx.CodeInvalidRequest, "environment must be \"mainnet\" or \"devnet\"")
	}
	c := m.cfg.Chains[env]
	if c == nil {
		msg := "%s has no chain configured: its money lives on the ledger alone"
		if env == crtx.Devnet {
			msg += " (add devnet funds with the airdrop: crtx airdrop)"
		} else {
			msg += " (the operator credits it: crtxd ledger deposit)"
		}
		return nil, crtx.Errorf(crtx.CodeChainNotConfigured, msg, env)
	}
	return c, nil
}

// chainDown is the error of a request the chain of env did not answer:
// the caller is told to try again, and the cause, which may name the RPC
// provider's URL and its key, is kept for the log.
func chainDown(env crtx.Environment, cause error) error {
	e := crtx.Errorf(crtx.CodeUnavailable, "the %s chain did not answer; try again", env)
	e.RetryAfter = 5
	return fmt.Errorf("%w: %w", e, cause)
}

// Chain returns env's chain, nil when it has none.
func (m *Market) Chain(env crtx.Environment) crtx.Chain { return m.cfg.Chains[env] }

// CreateDeposit opens a Solana Pay transfer request for wallet to pay
// amount into the treasury of env. Every transfer that carries its
// reference is credited, once, when the chain has finalized it.
func (m *Funds) CreateDeposit(ctx context.Context, wallet string, env crtx.Environment, amount crtx.USDC) (crtx.Deposit, error) {
	if _, err := m.chain(env); err != nil {
		return crtx.Deposit{}, err
	}
	if amount <= 0 || amount > MaxDeposit {
		return crtx.Deposit{}, crtx.InvalidField("amount_usdc", "must be more than 0 and at most %s", MaxDeposit)
	}
	// A reference is any 32-byte key no transaction names by chance; a
	// fresh public key is one, in the form wallets expect.
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		return crtx.Deposit{}, err
	}
	now := m.now()
	d := crtx.Deposit{ID: crtx.NewID("dep_"), Wallet: wallet, Environment: env, Amount: amount,
		Reference: crtx.Address(pub), Status: crtx.DepositAwaitingPayment, CreatedAt: now, ExpiresAt: now.Add(crtx.DepositTTL)}
	d.Memo = "crtx deposit " + d.ID
	err = m.store.Update(ctx, func(tx crtx.Tx) error {
		open, recent, err := tx.Funds.DepositCounts(ctx, wallet, env, now, now.Add(-time.Hour))
		switch {
		case err != nil:
			return err
		case open >= MaxOpenDeposits:
			e := crtx.Errorf(crtx.CodeRateLimited, "this wallet has %d deposit requests awaiting payment on %s, the most it may: pay one, or let one expire (after 24 hours)", open, env)
			e.RetryAfter = 3600
			return e
		case recent >= DepositsPerHour:
			e := crtx.Errorf(crtx.CodeRateLimited, "this wallet opened %d deposit requests on %s in the last hour, the most it may; try again later", recent, env)
			e.RetryAfter = 600
			return e
		}
		return tx.Funds.InsertDeposit(ctx, d)
	})
	return d, internal("create deposit", err)
}

// Deposit returns one of wallet's deposits with the payments credited to it.
func (m *Funds) Deposit(ctx context.Context, wallet, id string) (crtx.Deposit, []crtx.DepositPayment, error) {
	var d crtx.Deposit
	var ps []crtx.DepositPayment
	err := m.store.View(ctx, func(tx crtx.Tx) (err error) {
		d, err = tx.Funds.Deposit(ctx, id)
		if errors.Is(err, crtx.ErrNotFound) || (err == nil && d.Wallet != wallet) {
			return crtx.Errorf(crtx.CodeDepositNotFound, "no deposit %q for this wallet", id)
		}
		if err != nil {
			return err
		}
		ps, err = tx.Funds.DepositPayments(ctx, id)
		return err
	})
	d.Status = d.StatusAt(m.now())
	return d, ps, internal("deposit", err)
}

// Deposits lists wallet's deposits in env, newest first, and counts them all.
func (m *Funds) Deposits(ctx context.Context, wallet string, env crtx.Environment, limit, offset int) ([]crtx.Deposit, int, error) {
	var ds []crtx.Deposit
	var n int
	err := m.store.View(ctx, func(tx crtx.Tx) (err error) {
		ds, n, err = tx.Funds.Deposits(ctx, wallet, env, limit, offset)
		return err
	})
	now := m.now()
	for i := range ds {
		ds[i].Status = ds[i].StatusAt(now)
	}
	return ds, n, internal("deposits", err)
}

// RunDeposits reads the payments of open deposits every ChainPoll until ctx
// ends: those of the last DepositTTL at each turn, older ones once a minute.
func (m *Funds) RunDeposits(ctx context.Context) {
	turn := 0
	every(ctx, m.cfg.ChainPoll, true, func(ctx context.Context) {
		since := m.now().Add(-crtx.DepositTTL)
		if turn%int(max(1, time.Minute/m.cfg.ChainPoll)) == 0 {
			since = m.now().Add(-depositLookback)
		}
		turn++
		for env := range m.cfg.Chains {
			_, err := m.WatchDeposits(ctx, env, since)
			m.failed(ctx, err, "watch deposits", "environment", env)
		}
	})
}

// WatchDeposits reads the new transactions of env's deposits requested
// since and credits each finalized payment not credited yet; it returns
// how many it credited. A turn fetches at most watchBudget transactions
// whatever the chain holds: a reference named by a flood of transactions
// costs one turn's budget, once, and the deposits it did not reach go
// first in the next.
func (m *Funds) WatchDeposits(ctx context.Context, env crtx.Environment, since time.Time) (int, error) {
	c, err := m.chain(env)
	if err != nil {
		return 0, err
	}
	ds, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) ([]crtx.Deposit, error) {
		return tx.Funds.WatchedDeposits(ctx, env, since, watchBatch, watchPerWallet)
	})
	if err != nil {
		return 0, err
	}
	credited, budget := 0, watchBudget
	var checked []crtx.Deposit
	for _, d := range ds {
		if budget <= 0 {
			break
		}
		scan, err := c.Payments(ctx, d.Reference, d.ScannedUntil, budget)
		budget -= scan.Fetched
		n, cerr := m.creditPayments(ctx, d, scan.Payments)
		credited += n
		// A deposit whose reads fail is logged and goes to the back of
		// the queue, where it started: it never holds up the others.
		if m.failed(ctx, errors.Join(err, cerr), "watch deposit", "deposit", d.ID) {
			if ctx.Err() != nil {
				break
			}
			scan.Until = d.ScannedUntil
		}
		d.ScannedUntil = scan.Until
		checked = append(checked, d)
	}
	// The turn's reads are recorded in one transaction, not one per
	// deposit: the writer is shared with every execution.
	now := m.now()
	err = m.store.Update(ctx, func(tx crtx.Tx) error {
		for _, d := range checked {
			if err := tx.Funds.CheckedDeposit(ctx, d.ID, now, d.ScannedUntil); err != nil {
				return err
			}
		}
		return ctx.Err()
	})
	return credited, err
}

// creditPayments credits each finalized payment of d not credited yet.
func (m *core) creditPayments(ctx context.Context, d crtx.Deposit, ps []crtx.ChainPayment) (int, error) {
	credited := 0
	for _, p := range ps {
		if !p.Finalized {
			continue
		}
		ok, err := m.creditPayment(ctx, d, p)
		if err != nil {
			return credited, err
		}
		if ok {
			credited++
		}
	}
	return credited, nil
}

// creditPayment credits one finalized transfer to its deposit: the claim of
// its signature and part and the Deposit ledger transaction commit
// together, so a payment is credited once, whoever reads it again. It is
// credited to d only when d is the one deposit among the references the
// payment names: a transaction whose instructions do not say which of two
// deposits each pays is left for the operator (Unattributed). It reports
// false when it credited nothing.
func (m *core) creditPayment(ctx context.Context, d crtx.Deposit, p crtx.ChainPayment) (bool, error) {
	issuance := crtx.NewAccount(d.Environment, crtx.AccountIssuance, crtx.IssuanceID, "")
	acct := crtx.NewAccount(d.Environment, crtx.AccountWallet, d.Wallet, d.Wallet)
	data := map[string]string{"wallet": d.Wallet, "deposit_id": d.ID, "signature": p.Signature,
		"reference": d.Reference, "slot": strconv.FormatUint(p.Slot, 10)}
	if p.Part > 0 {
		data["part"] = strconv.Itoa(p.Part)
	}
	err := m.store.Update(ctx, func(tx crtx.Tx) error {
		if paid, err := x402Paid(ctx, tx, p.Signature); paid || err != nil {
			return cmp.Or(err, errNotThisDeposit)
		}
		sole, err := m.soleDeposit(ctx, tx, d.Environment, p.References)
		if err != nil {
			return err
		}
		if sole.ID != d.ID {
			return errNotThisDeposit
		}
		lt, accounts := m.ledgerTx(d.Environment, crtx.TxDeposit, data,
			[]crtx.Posting{{From: issuance.Address, To: acct.Address, Amount: p.Amount}}, issuance, acct)
		if err := tx.Funds.CreditDeposit(ctx, crtx.DepositPayment{Signature: p.Signature, Part: p.Part, DepositID: d.ID, Environment: d.Environment,
			Amount: p.Amount, Slot: p.Slot, TxID: lt.ID, CreditedAt: lt.CreatedAt}); err != nil {
			return err
		}
		return tx.Ledger.InsertTransaction(ctx, &lt, accounts...)
	})
	if errors.Is(err, crtx.ErrConflict) || errors.Is(err, errNotThisDeposit) {
		return false, nil
	}
	if err == nil {
		m.cfg.Logger.Info("deposit credited", "deposit", d.ID, "environment", d.Environment,
			"amount_usdc", p.Amount, "signature", p.Signature, "part", p.Part)
	}
	return err == nil, err
}

// x402Paid reports whether a transfer is an x402 payment's, which is
// credited by its execution and never by a deposit. A payment let go as
// never landing is not: if its transfer is on the chain after all (a node
// hid its status until its blockhash expired), the operator's list of
// unattributed transfers shows it, to return.
func x402Paid(ctx context.Context, tx crtx.Tx, signature string) (bool, error) {
	p, err := tx.Funds.Payment(ctx, signature)
	if errors.Is(err, crtx.ErrNotFound) {
		return false, nil
	}
	return err == nil && p.Status != crtx.PaymentVoid, err
}

// errNotThisDeposit leaves a payment uncredited by the deposit whose
// reference it names: it names others too.
var errNotThisDeposit = errors.New("the payment does not name this deposit alone")

// soleDeposit is the one deposit of env whose reference is among refs;
// none (the zero Deposit) when there is none, or more than one. It does
// not change with time (deposits are never deleted), so a payment is
// judged the same by the watcher and, later, by the operator's list.
func (m *core) soleDeposit(ctx context.Context, tx crtx.Tx, env crtx.Environment, refs []string) (crtx.Deposit, error) {
	var sole crtx.Deposit
	for _, ref := range refs {
		d, err := tx.Funds.DepositByReference(ctx, ref)
		if errors.Is(err, crtx.ErrNotFound) {
			continue
		}
		if err != nil {
			return crtx.Deposit{}, err
		}
		if d.Environment != env || d.ID == sole.ID {
			continue
		}
		if sole.ID != "" {
			return crtx.Deposit{}, nil
		}
		sole = d
	}
	return sole, nil
}

// Unattributed lists the newest transfers into env's treasury, at most
// limit, that carry no known deposit's reference: money the operator must
// return or attribute by hand, never keep.
func (m *Funds) Unattributed(ctx context.Context, env crtx.Environment, limit int) ([]crtx.ChainPayment, error) {
	c, err := m.chain(env)
	if err != nil {
		return nil, err
	}
	in, err := c.Incoming(ctx, limit)
	if err != nil {
		return nil, chainDown(env, err)
	}
	var out []crtx.ChainPayment
	err = m.store.View(ctx, func(tx crtx.Tx) error {
		for _, p := range in {
			known, err := m.attributed(ctx, tx, env, p)
			if err != nil {
				return err
			}
			if !known {
				out = append(out, p)
			}
		}
		return nil
	})
	return out, internal("unattributed deposits", err)
}

// attributed reports whether a transfer was credited, or names the
// reference of one deposit of env that the watcher still reads (it credits
// the transfer once it is finalized).
func (m *core) attributed(ctx context.Context, tx crtx.Tx, env crtx.Environment, p crtx.ChainPayment) (bool, error) {
	if _, err := tx.Funds.DepositPayment(ctx, p.Signature, p.Part); err == nil || !errors.Is(err, crtx.ErrNotFound) {
		return err == nil, err
	}
	if paid, err := x402Paid(ctx, tx, p.Signature); paid || err != nil {
		return paid, err
	}
	d, err := m.soleDeposit(ctx, tx, env, p.References)
	return d.ID != "" && m.now().Sub(d.CreatedAt) < depositLookback, err
}

// PayDeposit answers a Solana Pay transaction request for deposit id: the
// transaction that pays, from account's token account, what the deposit
// still asks, for account's wallet to sign and send. Anyone may ask: the
// transaction only ever pays the treasury, and a payment is credited to
// the deposit's own wallet, whoever signs it.
func (m *Funds) PayDeposit(ctx context.Context, id, account string) (raw []byte, amount crtx.USDC, err error) {
	d, err := m.OpenDeposit(ctx, id)
	if err != nil {
		return nil, 0, err
	}
	if _, err := crtx.ParseAddress("account", account); err != nil {
		return nil, 0, err
	}
	c := m.cfg.Chains[d.Environment]
	// A payment sent and not finalized yet (some 13 seconds on mainnet)
	// is not credited yet: a wallet that asked again in that window (a
	// reload, a phone scanning the code) would pay twice.
	onItsWay, d, err := m.onItsWay(ctx, c, d)
	if err != nil {
		return nil, 0, err
	}
	r := d.Request(c)
	r.Amount = d.Amount - d.Credited - onItsWay
	if r.Amount <= 0 {
		return nil, 0, crtx.Errorf(crtx.CodeDepositClosed,
			"a payment of %s USDC to deposit %s is on its way: it is credited once the chain finalizes it, in some seconds", onItsWay, id)
	}
	raw, err = c.PaymentTransaction(ctx, account, r)
	if err != nil {
		return nil, 0, chainDown(d.Environment, err)
	}
	return raw, r.Amount, nil
}

// onItsWay is what the newest transactions naming d's reference pay it and
// is not credited yet, with d as read in the same snapshot: a payment
// credited between the chain's answer and that read counts in d.Credited.
func (m *core) onItsWay(ctx context.Context, c crtx.Chain, d crtx.Deposit) (crtx.USDC, crtx.Deposit, error) {
	recent, err := c.Recent(ctx, d.Reference, 20)
	if err != nil {
		return 0, d, chainDown(d.Environment, err)
	}
	var sum crtx.USDC
	err = m.store.View(ctx, func(tx crtx.Tx) error {
		if d, err = tx.Funds.Deposit(ctx, d.ID); err != nil {
			return err
		}
		for _, p := range recent {
			_, err := tx.Funds.DepositPayment(ctx, p.Signature, p.Part)
			if err == nil {
				continue
			}
			if !errors.Is(err, crtx.ErrNotFound) {
				return err
			}
			if sole, err := m.soleDeposit(ctx, tx, d.Environment, p.References); err != nil {
				return err
			} else if sole.ID == d.ID {
				sum += p.Amount
			}
		}
		return nil
	})
	return sum, d, internal("payments on their way", err)
}

// OpenDeposit returns deposit id while it still asks to be paid: not
// credited in full, not expired, on an environment with a chain. It is
// what a wallet reads first of a Solana Pay transaction request.
func (m *Funds) OpenDeposit(ctx context.Context, id string) (crtx.Deposit, error) {
	var d crtx.Deposit
	err := m.store.View(ctx, func(tx crtx.Tx) (err error) {
		d, err = tx.Funds.Deposit(ctx, id)
		return err
	})
	if errors.Is(err, crtx.ErrNotFound) {
		return d, crtx.Errorf(crtx.CodeDepositNotFound, "no deposit %q", id)
	}
	if err != nil {
		return d, internal("deposit", err)
	}
	if _, err := m.chain(d.Environment); err != nil {
		return d, err
	}
	if st := d.StatusAt(m.now()); st != crtx.DepositAwaitingPayment {
		return d, crtx.Errorf(crtx.CodeDepositClosed, "deposit %s is %s: ask for a new one", id, st)
	}
	return d, nil
}
