package crtx

import (
	"context"
	"errors"
	"time"
)

// Balance is one wallet's money in one environment.
type Balance struct {
	Available USDC `json:"available_usdc"`
	Escrowed  USDC `json:"escrowed_usdc"`
	// Pending is earned but not yet available: the wallet's share of
	// executions that ended less than a roll-up interval ago (Rollup).
	Pending USDC `json:"pending_usdc"`
}

// Balances returns wallet's balances in each of envs.
func (m *Market) Balances(ctx context.Context, wallet string, envs ...Environment) (map[Environment]Balance, error) {
	out := make(map[Environment]Balance, len(envs))
	err := m.store.View(ctx, func(tx Tx) error {
		for _, env := range envs {
			b, err := balance(ctx, tx, env, wallet)
			if err != nil {
				return err
			}
			out[env] = b
		}
		return nil
	})
	return out, internal("balances", err)
}

func balance(ctx context.Context, tx Tx, env Environment, wallet string) (Balance, error) {
	var b Balance
	acct, err := tx.Account(ctx, env, AccountAddress(AccountWallet, wallet))
	switch {
	case errors.Is(err, ErrNotFound): // a wallet that never held money
	case err != nil:
		return b, err
	default:
		b.Available = acct.Balance
	}
	if b.Escrowed, err = tx.Escrowed(ctx, env, wallet); err != nil {
		return b, err
	}
	b.Pending, err = pending(ctx, tx, env, AccountAddress(AccountWallet, wallet))
	return b, err
}

// pending sums what the unposted transactions credit to address. The
// roll-up keeps them to a fraction of a second of executions; past
// rollupBatch of them (a roll-up that stopped) the sum is a floor.
func pending(ctx context.Context, tx Tx, env Environment, address string) (USDC, error) {
	txs, err := tx.Unposted(ctx, env, rollupBatch)
	var sum USDC
	for _, t := range txs {
		for _, c := range t.DeferredCredits() {
			if c.Address == address {
				sum += c.Amount
			}
		}
	}
	return sum, err
}

// shortfall is returned from inside a transaction whose posting the
// database refused for lack of funds. The message, which names the balance,
// is written after the transaction has ended: some engines (PostgreSQL)
// accept no further statement in a transaction once one has failed.
type shortfall struct {
	env    Environment
	wallet string
	need   USDC
	format string // with %[1]s the balance, %[2]s the environment, %[3]s the amount needed
	// keyID, for an execution, is the API key charged: its spend limit
	// goes before the balance (CONTRACT §8), though the database checks
	// the balance first.
	keyID string
}

func (s *shortfall) Error() string { return "insufficient funds" }

// explain turns a shortfall into the 402 the caller sees; other errors pass.
func (m *Market) explain(ctx context.Context, err error) error {
	var sf *shortfall
	if !errors.As(err, &sf) {
		return err
	}
	if sf.keyID != "" {
		if err := m.keyRefusal(ctx, sf.keyID, sf.need); err != nil {
			return err
		}
	}
	b, berr := m.Balances(ctx, sf.wallet, sf.env)
	if berr != nil {
		return berr
	}
	return Errorf(CodeInsufficientBalance, sf.format, b[sf.env].Available, sf.env, sf.need)
}

// Funding is the outcome of a deposit, withdrawal or airdrop.
type Funding struct {
	Transaction LedgerTx
	Balance     Balance
}

// Airdrop credits devnet funds to wallet, at most AirdropMax a call and
// AirdropsPerHour calls a wallet in any rolling hour.
func (m *Market) Airdrop(ctx context.Context, wallet string, amount USDC) (Funding, error) {
	if _, err := ParseAddress("wallet", wallet); err != nil {
		return Funding{}, err
	}
	if amount <= 0 || amount > m.cfg.AirdropMax {
		return Funding{}, Errorf(CodeInvalidRequest, "amount_usdc must be more than 0 and at most %s", m.cfg.AirdropMax)
	}
	var f Funding
	err := m.store.Update(ctx, func(tx Tx) error {
		now := m.now()
		recent, err := tx.Airdrops(ctx, Devnet, wallet, now.Add(-time.Hour))
		if err != nil {
			return err
		}
		if len(recent) >= m.cfg.AirdropsPerHour {
			wait := recent[len(recent)-m.cfg.AirdropsPerHour].CreatedAt.Add(time.Hour).Sub(now)
			e := Errorf(CodeRateLimited, "this wallet had %d airdrops in the last hour; try again in %d seconds",
				len(recent), int(wait.Seconds())+1)
			e.RetryAfter = int(wait.Seconds()) + 1
			return e
		}
		f, err = m.fund(ctx, tx, Devnet, TxAirdrop, wallet, amount)
		return err
	})
	return f, internal("airdrop", err)
}

// Deposit credits mainnet or devnet funds that arrived outside crtx.
func (m *Market) Deposit(ctx context.Context, env Environment, wallet string, amount USDC) (Funding, error) {
	return m.operatorFunding(ctx, env, TxDeposit, wallet, amount)
}

// Withdraw debits funds that the operator pays out outside crtx.
func (m *Market) Withdraw(ctx context.Context, env Environment, wallet string, amount USDC) (Funding, error) {
	return m.operatorFunding(ctx, env, TxWithdrawal, wallet, amount)
}

func (m *Market) operatorFunding(ctx context.Context, env Environment, kind TxKind, wallet string, amount USDC) (Funding, error) {
	if !env.Valid() {
		return Funding{}, Errorf(CodeInvalidRequest, "environment must be \"mainnet\" or \"devnet\"")
	}
	if _, err := ParseAddress("wallet", wallet); err != nil {
		return Funding{}, err
	}
	if amount <= 0 {
		return Funding{}, Errorf(CodeInvalidRequest, "amount_usdc must be more than 0")
	}
	var f Funding
	err := m.store.Update(ctx, func(tx Tx) (err error) {
		f, err = m.fund(ctx, tx, env, kind, wallet, amount)
		return err
	})
	return f, internal(string(kind), m.explain(ctx, err))
}

// fund moves amount between issuance and wallet's account: in for deposits
// and airdrops, out for withdrawals.
func (m *Market) fund(ctx context.Context, tx Tx, env Environment, kind TxKind, wallet string, amount USDC) (Funding, error) {
	issuance := NewAccount(env, AccountIssuance, IssuanceID, "")
	acct := NewAccount(env, AccountWallet, wallet, wallet)
	p := Posting{From: issuance.Address, To: acct.Address, Amount: amount}
	if kind == TxWithdrawal {
		p.From, p.To = p.To, p.From
	}
	lt, err := m.post(ctx, tx, env, kind, map[string]string{"wallet": wallet}, []Posting{p}, issuance, acct)
	if errors.Is(err, ErrInsufficientFunds) {
		return Funding{}, &shortfall{env, wallet, amount, "the wallet has %[1]s USDC available on %[2]s; the withdrawal needs %[3]s USDC", ""}
	}
	if err != nil {
		return Funding{}, err
	}
	b, err := balance(ctx, tx, env, wallet)
	return Funding{Transaction: lt, Balance: b}, err
}

// post records one ledger transaction inside tx, creating the accounts it
// names if they are new. It is the only way money moves, but for the
// transactions that open and close an execution, which the store writes
// with the execution (Store.OpenExecution, Store.CloseExecution).
func (m *Market) post(ctx context.Context, tx Tx, env Environment, kind TxKind, data map[string]string, postings []Posting, accounts ...Account) (LedgerTx, error) {
	lt, accounts := m.ledgerTx(env, kind, data, postings, accounts...)
	if err := tx.InsertTransaction(ctx, &lt, accounts...); err != nil {
		return LedgerTx{}, err
	}
	return lt, nil
}

// ledgerTx builds a transaction stamped now and the accounts it concerns,
// created now if they are new. Accounts that no posting names are recorded
// as the transaction's referenced accounts.
func (m *Market) ledgerTx(env Environment, kind TxKind, data map[string]string, postings []Posting, accounts ...Account) (LedgerTx, []Account) {
	now := m.now()
	for i := range accounts {
		accounts[i].CreatedAt = now
	}
	if data == nil {
		data = map[string]string{}
	}
	named := map[string]bool{}
	for _, p := range postings {
		named[p.From], named[p.To] = true, true
	}
	refs := []string{}
	for _, a := range accounts {
		if !named[a.Address] {
			refs = append(refs, a.Address)
		}
	}
	if postings == nil {
		postings = []Posting{}
	}
	return LedgerTx{ID: newTxID(), Environment: env, Kind: kind, Data: data, Postings: postings, Accounts: refs, CreatedAt: now}, accounts
}
