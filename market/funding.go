package market

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crtx-market/crtx"
)

// Balances returns wallet's balances in each of envs.
func (m *Funds) Balances(ctx context.Context, wallet string, envs ...crtx.Environment) (map[crtx.Environment]crtx.Balance, error) {
	out := make(map[crtx.Environment]crtx.Balance, len(envs))
	err := m.store.View(ctx, func(tx crtx.Tx) error {
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

func balance(ctx context.Context, tx crtx.Tx, env crtx.Environment, wallet string) (crtx.Balance, error) {
	var b crtx.Balance
	acct, err := tx.Ledger.Account(ctx, env, crtx.AccountAddress(crtx.AccountWallet, wallet))
	switch {
	case errors.Is(err, crtx.ErrNotFound): // a wallet that never held money
	case err != nil:
		return b, err
	default:
		b.Available = acct.Balance
	}
	if b.Escrowed, err = tx.Ledger.Escrowed(ctx, env, wallet); err != nil {
		return b, err
	}
	b.Pending, err = pending(ctx, tx, env, crtx.AccountAddress(crtx.AccountWallet, wallet))
	return b, err
}

// pending sums what the unposted transactions credit to address. The
// roll-up keeps them to a fraction of a second of executions; past
// rollupBatch of them (a roll-up that stopped) the sum is a floor.
func pending(ctx context.Context, tx crtx.Tx, env crtx.Environment, address string) (crtx.USDC, error) {
	txs, err := tx.Ledger.Unposted(ctx, env, rollupBatch)
	var sum crtx.USDC
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
	env    crtx.Environment
	wallet string
	need   crtx.USDC
	format string // with %[1]s the balance, %[2]s the environment, %[3]s the amount needed
	// deposit adds how much is missing and how it enters (addFunds): for
	// collateral, which a creator's first listing meets before anything
	// else that costs money, and for an execution's price.
	deposit bool
	// keyID, for an execution, is the API key charged: its spend limit
	// goes before the balance (CONTRACT §8), though the database checks
	// the balance first.
	keyID string
}

func (s *shortfall) Error() string { return "insufficient funds" }

// explain turns a shortfall into the 402 the caller sees; other errors pass.
func (m *core) explain(ctx context.Context, err error) error {
	var sf *shortfall
	if !errors.As(err, &sf) {
		return err
	}
	if sf.keyID != "" {
		if err := m.keyRefusal(ctx, sf.keyID, sf.need); err != nil {
			return err
		}
	}
	// Only the available balance is quoted: the account alone, not the
	// escrow and pending sums a full balance reads.
	acct, aerr := crtx.Read(ctx, m.store, func(tx crtx.Tx) (crtx.Account, error) {
		return tx.Ledger.Account(ctx, sf.env, crtx.AccountAddress(crtx.AccountWallet, sf.wallet))
	})
	if aerr != nil && !errors.Is(aerr, crtx.ErrNotFound) { // no account: nothing available
		return internal("balance", aerr)
	}
	msg := fmt.Sprintf(sf.format, acct.Balance, sf.env, sf.need)
	if sf.deposit {
		msg += ": " + m.addFunds(sf.env, sf.wallet, sf.need-acct.Balance)
	}
	return crtx.Errorf(crtx.CodeInsufficientBalance, "%s", msg)
}

// addFunds says how missing USDC enters wallet in env, in the way env takes
// money: a deposit paid on its chain, the devnet airdrop, or the operator's
// hand, with the command that works where this marketplace runs.
func (m *core) addFunds(env crtx.Environment, wallet string, missing crtx.USDC) string {
	switch {
	case m.cfg.Chains[env] != nil:
		return fmt.Sprintf("deposit the %s USDC missing, paid on the chain (crtx deposit %[1]s --environment %[2]s, or POST /v1/wallet/deposits)", missing, env)
	case m.cfg.ChainBound[env]:
		return fmt.Sprintf("the %s USDC missing can enter only by a deposit paid on the chain %s ran on before, once the operator connects it again (crtxd --solana-rpc-%[2]s)", missing, env)
	case env == crtx.Devnet:
		return fmt.Sprintf("add the %s USDC missing with the devnet airdrop (crtx airdrop %[1]s, or POST /v1/devnet/airdrop)", missing)
	case m.cfg.OperatorDepositCommand != nil:
		return fmt.Sprintf("the marketplace's operator credits the %s USDC missing: %s", missing, m.cfg.OperatorDepositCommand(env, wallet, missing))
	}
	return fmt.Sprintf("the marketplace's operator credits the %s USDC missing to %s on %s (POST /v1/admin/deposits)", missing, wallet, env)
}

// Airdrop credits devnet funds to wallet, at most AirdropMax a call and
// AirdropsPerHour calls a wallet in any rolling hour. On a local chain
// with a faucet it pays them on the chain instead, into the wallet's
// token account, with SOL for its fees: the wallet then pays as it would
// on a public chain (a deposit, x402), and the ledger moves nothing.
// There the airdrop route's limit per client address alone applies (the
// hourly count is kept on the ledger): test money of a chain that runs on
// the operator's own machine.
func (m *Funds) Airdrop(ctx context.Context, wallet string, amount crtx.USDC) (crtx.Funding, error) {
	if _, err := crtx.ParseAddress("wallet", wallet); err != nil {
		return crtx.Funding{}, err
	}
	if amount <= 0 || amount > m.cfg.AirdropMax {
		return crtx.Funding{}, crtx.Errorf(crtx.CodeInvalidRequest, "amount_usdc must be more than 0 and at most %s", m.cfg.AirdropMax)
	}
	if m.cfg.Faucet != nil && m.cfg.Chains[crtx.Devnet] != nil {
		f, err := m.cfg.Faucet(ctx, wallet, amount)
		if err != nil {
			return crtx.Funding{}, chainDown(crtx.Devnet, err)
		}
		b, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) (crtx.Balance, error) { return balance(ctx, tx, crtx.Devnet, wallet) })
		return crtx.Funding{Faucet: &f, Balance: b}, internal("airdrop balance", err)
	}
	if err := m.offChain(crtx.Devnet); err != nil {
		return crtx.Funding{}, err
	}
	var f crtx.Funding
	err := m.store.Update(ctx, func(tx crtx.Tx) error {
		now := m.now()
		recent, err := tx.Ledger.Airdrops(ctx, crtx.Devnet, wallet, now.Add(-time.Hour))
		if err != nil {
			return err
		}
		if len(recent) >= m.cfg.AirdropsPerHour {
			wait := recent[len(recent)-m.cfg.AirdropsPerHour].CreatedAt.Add(time.Hour).Sub(now)
			e := crtx.Errorf(crtx.CodeRateLimited, "this wallet had %d airdrops in the last hour; try again in %d seconds",
				len(recent), int(wait.Seconds())+1)
			e.RetryAfter = int(wait.Seconds()) + 1
			return e
		}
		f, err = m.fund(ctx, tx, crtx.Devnet, crtx.TxAirdrop, wallet, amount)
		return err
	})
	return f, internal("airdrop", err)
}

// OperatorDeposit credits mainnet or devnet funds that arrived outside
// crtx, in an environment without a chain.
func (m *Funds) OperatorDeposit(ctx context.Context, env crtx.Environment, wallet string, amount crtx.USDC) (crtx.Funding, error) {
	return m.operatorFunding(ctx, env, crtx.TxDeposit, wallet, amount)
}

// OperatorWithdraw debits funds that the operator pays out outside crtx, in
// an environment without a chain.
func (m *Funds) OperatorWithdraw(ctx context.Context, env crtx.Environment, wallet string, amount crtx.USDC) (crtx.Funding, error) {
	return m.operatorFunding(ctx, env, crtx.TxWithdrawal, wallet, amount)
}

func (m *core) operatorFunding(ctx context.Context, env crtx.Environment, kind crtx.TxKind, wallet string, amount crtx.USDC) (crtx.Funding, error) {
	if !env.Valid() {
		return crtx.Funding{}, crtx.Errorf(crtx.CodeInvalidRequest, "environment must be \"mainnet\" or \"devnet\"")
	}
	if _, err := crtx.ParseAddress("wallet", wallet); err != nil {
		return crtx.Funding{}, err
	}
	if amount <= 0 {
		return crtx.Funding{}, crtx.Errorf(crtx.CodeInvalidRequest, "amount_usdc must be more than 0")
	}
	if err := m.offChain(env); err != nil {
		return crtx.Funding{}, err
	}
	var f crtx.Funding
	err := m.store.Update(ctx, func(tx crtx.Tx) (err error) {
		f, err = m.fund(ctx, tx, env, kind, wallet, amount)
		return err
	})
	return f, internal(string(kind), m.explain(ctx, err))
}

// fund moves amount between issuance and wallet's account: in for deposits
// and airdrops, out for withdrawals.
func (m *core) fund(ctx context.Context, tx crtx.Tx, env crtx.Environment, kind crtx.TxKind, wallet string, amount crtx.USDC) (crtx.Funding, error) {
	issuance := crtx.NewAccount(env, crtx.AccountIssuance, crtx.IssuanceID, "")
	acct := crtx.NewAccount(env, crtx.AccountWallet, wallet, wallet)
	p := crtx.Posting{From: issuance.Address, To: acct.Address, Amount: amount}
	if kind == crtx.TxWithdrawal {
		p.From, p.To = p.To, p.From
	}
	lt, err := m.post(ctx, tx, env, kind, map[string]string{"wallet": wallet}, []crtx.Posting{p}, issuance, acct)
	if errors.Is(err, crtx.ErrInsufficientFunds) {
		return crtx.Funding{}, &shortfall{env: env, wallet: wallet, need: amount,
			format: "the wallet has %[1]s USDC available on %[2]s; the withdrawal needs %[3]s USDC"}
	}
	if err != nil {
		return crtx.Funding{}, err
	}
	b, err := balance(ctx, tx, env, wallet)
	return crtx.Funding{Transaction: lt, Balance: b}, err
}

// offChain refuses to create or destroy money by hand in an environment
// with a chain: there, money enters and leaves only on the chain, so what
// the ledger owes stays what the treasury holds.
func (m *core) offChain(env crtx.Environment) error {
	switch {
	case m.cfg.Chains[env] != nil:
		return crtx.Errorf(crtx.CodeChainConfigured,
			"%s has a chain: money enters it only by a deposit paid on the chain (POST /v1/wallet/deposits) and leaves by a withdrawal", env)
	case m.cfg.ChainBound[env]:
		return crtx.Errorf(crtx.CodeChainConfigured,
			"%s's money is held on a Solana chain it ran on before, which this marketplace is not connected to now: money enters it only by a deposit paid on that chain, once the operator starts crtxd with --solana-rpc-%s again", env, env)
	}
	return nil
}
