package market

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/crtx-market/crtx"
)

// MinWithdrawal is the least a withdrawal pays out: the treasury pays each
// one's fee, which a stream of tiny withdrawals would otherwise drain.
const MinWithdrawal crtx.USDC = crtx.MicroPerUSDC

// FailedTransferFee is what a withdrawal's refund keeps when its transfer
// failed on the chain because the wallet closed its token account after
// asking: the network fee the treasury paid, many times over, so that
// doing it again and again costs the wallet, not the treasury.
const FailedTransferFee crtx.USDC = crtx.MicroPerUSDC / 100

// withdrawalBatch is how many withdrawals one process takes at once; it
// owns each for Config.Lease, as it owns an execution's dispatch.
const withdrawalBatch = 16

// Withdraw takes amount from wallet's balance in env and queues its payment
// to the wallet's own token account: never to an address the request names,
// so a stolen session can move money only to its owner.
func (m *Funds) Withdraw(ctx context.Context, wallet string, env crtx.Environment, amount crtx.USDC) (crtx.Withdrawal, error) {
	c, err := m.chain(env)
	if err != nil {
		return crtx.Withdrawal{}, err
	}
	if amount < MinWithdrawal {
		return crtx.Withdrawal{}, crtx.InvalidField("amount_usdc", "must be at least %s", MinWithdrawal)
	}
	dest, err := c.TokenAccountOf(wallet)
	if err != nil {
		return crtx.Withdrawal{}, crtx.Errorf(crtx.CodeInvalidRequest, "this wallet has no token account address: %v", err)
	}
	// The treasury never pays a token account's rent: a wallet that made
	// one, withdrew to it and closed it would take the rent each time.
	exists, err := c.HasTokenAccount(ctx, wallet)
	if err != nil {
		return crtx.Withdrawal{}, chainDown(env, err)
	}
	if !exists {
		return crtx.Withdrawal{}, crtx.Errorf(crtx.CodeInvalidRequest,
			"the wallet has no USDC token account (%s) on %s's chain: create it first (any Solana wallet does, or: spl-token create-account %s)", dest, env, c.Mint())
	}
	w := crtx.Withdrawal{ID: crtx.NewID("wd_"), Wallet: wallet, Environment: env, Amount: amount, Destination: dest,
		Status: crtx.WithdrawalPending, CreatedAt: m.now()}
	err = m.store.Update(ctx, func(tx crtx.Tx) error {
		err := m.queueWithdrawal(ctx, tx, w, nil)
		if errors.Is(err, crtx.ErrInsufficientFunds) {
			return &shortfall{env: env, wallet: wallet, need: amount,
				format: "the wallet has %[1]s USDC available on %[2]s; the withdrawal needs %[3]s USDC"}
		}
		return err
	})
	if err != nil {
		return crtx.Withdrawal{}, internal("withdraw", m.explain(ctx, err))
	}
	m.nudgeWithdrawals()
	return w, nil
}

// queueWithdrawal writes w and its Withdrawal ledger transaction, which
// takes its amount from the wallet's balance; data adds to the
// transaction's data.
func (m *core) queueWithdrawal(ctx context.Context, tx crtx.Tx, w crtx.Withdrawal, data map[string]string) error {
	acct := crtx.NewAccount(w.Environment, crtx.AccountWallet, w.Wallet, w.Wallet)
	out := crtx.NewAccount(w.Environment, crtx.AccountWithdrawals, crtx.WithdrawalsID, "")
	if err := tx.Funds.InsertWithdrawal(ctx, w); err != nil {
		return err
	}
	d := map[string]string{"wallet": w.Wallet, "withdrawal_id": w.ID, "destination": w.Destination}
	for k, v := range data {
		d[k] = v
	}
	_, err := m.post(ctx, tx, w.Environment, crtx.TxWithdrawal, d,
		[]crtx.Posting{{From: acct.Address, To: out.Address, Amount: w.Amount}}, acct, out)
	return err
}

// nudgeWithdrawals wakes RunWithdrawals: a withdrawal is waiting.
func (m *core) nudgeWithdrawals() {
	select {
	case m.nudge <- struct{}{}:
	default:
	}
}

// Withdrawal returns one of wallet's withdrawals.
func (m *Funds) Withdrawal(ctx context.Context, wallet, id string) (crtx.Withdrawal, error) {
	w, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) (crtx.Withdrawal, error) { return tx.Funds.Withdrawal(ctx, id) })
	if errors.Is(err, crtx.ErrNotFound) || (err == nil && w.Wallet != wallet) {
		return crtx.Withdrawal{}, crtx.Errorf(crtx.CodeWithdrawalNotFound, "no withdrawal %q for this wallet", id)
	}
	return w, internal("withdrawal", err)
}

// Withdrawals lists wallet's withdrawals in env, newest first, and counts them all.
func (m *Funds) Withdrawals(ctx context.Context, wallet string, env crtx.Environment, limit, offset int) ([]crtx.Withdrawal, int, error) {
	var ws []crtx.Withdrawal
	var n int
	err := m.store.View(ctx, func(tx crtx.Tx) (err error) {
		ws, n, err = tx.Funds.Withdrawals(ctx, wallet, env, limit, offset)
		return err
	})
	return ws, n, internal("withdrawals", err)
}

// RunWithdrawals pays withdrawals until ctx ends: every ChainPoll, or at
// once when one is requested here, it takes those whose lease ran out and
// moves each as far as the chain lets it.
func (m *Funds) RunWithdrawals(ctx context.Context) {
	t := time.NewTicker(m.cfg.ChainPoll)
	defer t.Stop()
	for {
		_, err := m.PayWithdrawals(ctx)
		m.failed(ctx, err, "pay withdrawals")
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-m.nudge:
		}
	}
}

// PayWithdrawals takes the withdrawals free to take and works on each until
// it is final or its lease nears its end; it returns how many it took.
func (m *Funds) PayWithdrawals(ctx context.Context) (int, error) {
	now := m.now()
	var ws []crtx.Withdrawal
	err := m.store.Update(ctx, func(tx crtx.Tx) (err error) {
		ws, err = tx.Funds.ClaimWithdrawals(ctx, m.replica, now, now.Add(m.cfg.Lease), withdrawalBatch)
		return err
	})
	if err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Go(func() {
			// Stop short of the lease's end, so no other process takes
			// the withdrawal over while this one still writes it (a write
			// after that is refused: UpdateWithdrawal checks the owner).
			wctx, cancel := context.WithTimeout(ctx, m.cfg.Lease*2/3)
			defer cancel()
			for ctx.Err() == nil {
				done, err := m.payStep(wctx, &w)
				if done || m.failed(ctx, err, "pay withdrawal", "withdrawal", w.ID) || wctx.Err() != nil {
					return
				}
				select {
				case <-wctx.Done():
					return
				case <-time.After(m.cfg.ChainPoll / 4):
				}
			}
		})
	}
	wg.Wait()
	return len(ws), nil
}

// payStep moves w one step: sign and store, send, or follow what was sent.
// It reports true once w is final. Each step is safe to repeat after a
// crash at any point, because the bytes sent are always the bytes stored,
// and they are signed on a durable nonce, so they never expire:
//   - no signature stored: sign, store, then send;
//   - the signature found on the chain and finalized: failed there,
//     refund; else confirm; found and not finalized yet: wait;
//   - not found: send the same bytes again. A "not found" proves nothing
//     (a node may lag, or no longer hold the slot), nor does a refusal of
//     the send (a node may refuse bytes it already holds), so neither ever
//     leads to a refund or to a second transfer.
func (m *core) payStep(ctx context.Context, w *crtx.Withdrawal) (bool, error) {
	c, err := m.chain(w.Environment)
	if err != nil {
		return false, err
	}
	if w.Signature == "" {
		return m.signAndSend(ctx, c, w)
	}
	st, err := c.Status(ctx, w.Signature)
	if err != nil {
		return false, err
	}
	switch {
	case st.Found && !st.Finalized:
		// Failed or not, it may yet be dropped with its fork, and the same
		// bytes land elsewhere: only a finalized outcome is final.
		return false, nil
	case st.Found && st.Err != "":
		// A wallet that closed its token account after asking has the
		// treasury pay a failed transfer's fee: the refund keeps
		// FailedTransferFee, so doing it again and again costs the wallet.
		fee, reason := crtx.USDC(0), "the transfer failed on the chain: "+st.Err
		if exists, err := c.HasTokenAccount(ctx, w.Wallet); err != nil {
			return false, err
		} else if !exists {
			fee = FailedTransferFee
			reason = fmt.Sprintf("the wallet's USDC token account was closed before the transfer landed; refunded less %s USDC, the failed transfer's cost (%s)", fee, st.Err)
		}
		return true, m.endWithdrawal(ctx, w, crtx.WithdrawalFailed, st.Slot, reason, fee)
	case st.Found:
		return true, m.endWithdrawal(ctx, w, crtx.WithdrawalConfirmed, st.Slot, "", 0)
	default:
		return false, m.send(ctx, c, w)
	}
}

// signAndSend signs w's transfer on a nonce account no other withdrawal in
// flight holds, stores its signature and bytes with the account (refused
// unless this process still holds w's lease and the account is still
// free), then sends them. With every account held, or the one it picked
// taken meanwhile by another replica, it waits: the next step tries again.
// A wallet whose token account is gone by then is refunded, and nothing is
// sent: the transfer would fail on the chain at the treasury's cost.
func (m *core) signAndSend(ctx context.Context, c crtx.Chain, w *crtx.Withdrawal) (bool, error) {
	exists, err := c.HasTokenAccount(ctx, w.Wallet)
	if err != nil {
		return false, err
	}
	if !exists {
		return true, m.endWithdrawal(ctx, w, crtx.WithdrawalFailed, 0,
			"the wallet's USDC token account no longer exists; nothing was sent", 0)
	}
	return false, m.sign(ctx, c, w)
}

// sign does signAndSend's work once the destination is known to exist.
func (m *core) sign(ctx context.Context, c crtx.Chain, w *crtx.Withdrawal) error {
	m.signing.Lock()
	defer m.signing.Unlock()
	var account string
	var after uint64
	err := m.store.View(ctx, func(tx crtx.Tx) error {
		held, err := tx.Funds.HeldNonceAccounts(ctx, w.Environment)
		if err != nil {
			return err
		}
		// Each withdrawal starts its search at its own place, so
		// replicas signing at once seldom pick the same account.
		free := slices.DeleteFunc(c.NonceAccounts(), func(a string) bool { return slices.Contains(held, a) })
		if len(free) == 0 {
			return nil
		}
		account = free[crc32.ChecksumIEEE([]byte(w.ID))%uint32(len(free))]
		after, err = tx.Funds.NonceSlot(ctx, w.Environment, account)
		return err
	})
	if err != nil || account == "" {
		return err
	}
	st, err := c.SignTransfer(ctx, crtx.Transfer{Wallet: w.Wallet, Amount: w.Amount, Memo: "crtx withdrawal " + w.ID,
		NonceAccount: account, After: after})
	if err != nil {
		return err
	}
	next := *w
	next.Signature, next.Raw, next.NonceAccount, next.Nonce, next.Reason = st.Signature, st.Raw, account, st.Nonce, ""
	err = m.store.Update(ctx, func(tx crtx.Tx) error {
		// Another replica's withdrawal may have taken the account, landed
		// and let it go since it was picked: these bytes would then be on
		// a spent nonce, and never land.
		if slot, err := tx.Funds.NonceSlot(ctx, w.Environment, account); err != nil || slot != after {
			return cmp.Or(err, errNonceMoved)
		}
		return tx.Funds.UpdateWithdrawal(ctx, next, m.replica)
	})
	if errors.Is(err, errNonceMoved) || (errors.Is(err, crtx.ErrConflict) && m.nonceTaken(ctx, w.Environment, account)) {
		// The bytes just signed are dropped unsent.
		return nil
	}
	if err != nil {
		return err
	}
	*w = next
	return m.send(ctx, c, w)
}

// errNonceMoved drops a transfer signed on a nonce account that another
// withdrawal used meanwhile.
var errNonceMoved = errors.New("the nonce account was used meanwhile")

// nonceTaken reports whether a withdrawal in flight holds account.
func (m *core) nonceTaken(ctx context.Context, env crtx.Environment, account string) bool {
	held, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) ([]string, error) { return tx.Funds.HeldNonceAccounts(ctx, env) })
	return err == nil && slices.Contains(held, account)
}

// send submits w's stored bytes and records that they left, or why the
// cluster refused them this time: said to the wallet while it waits, and
// never a reason to refund.
func (m *core) send(ctx context.Context, c crtx.Chain, w *crtx.Withdrawal) error {
	next := *w
	if err := c.Send(ctx, w.Raw); err != nil {
		if ctx.Err() != nil {
			return err
		}
		// The cause may name the RPC provider's URL: it goes to the log.
		m.cfg.Logger.Warn("withdrawal send refused; it is sent again", "withdrawal", w.ID, "error", err)
		next.Reason = "the cluster refused the last send of the transfer; it is sent again until it lands"
	} else {
		next.Status, next.Reason = crtx.WithdrawalSent, ""
	}
	if next.Status == w.Status && next.Reason == w.Reason {
		return nil
	}
	if err := m.store.Update(ctx, func(tx crtx.Tx) error { return tx.Funds.UpdateWithdrawal(ctx, next, m.replica) }); err != nil {
		return err
	}
	*w = next
	return nil
}

// endWithdrawal writes w's final status with its ledger transaction: paid
// out of the withdrawals account into issuance once confirmed, or back to
// the wallet once failed, less fee, which goes to the platform.
func (m *core) endWithdrawal(ctx context.Context, w *crtx.Withdrawal, status crtx.WithdrawalStatus, slot uint64, reason string, fee crtx.USDC) error {
	next := *w
	now := m.now()
	next.Status, next.Slot, next.Reason, next.CompletedAt = status, slot, reason, &now
	out := crtx.NewAccount(w.Environment, crtx.AccountWithdrawals, crtx.WithdrawalsID, "")
	to, kind := crtx.NewAccount(w.Environment, crtx.AccountIssuance, crtx.IssuanceID, ""), crtx.TxWithdrawalPaid
	if status == crtx.WithdrawalFailed {
		to, kind = crtx.NewAccount(w.Environment, crtx.AccountWallet, w.Wallet, w.Wallet), crtx.TxWithdrawalRefunded
	}
	postings := []crtx.Posting{{From: out.Address, To: to.Address, Amount: w.Amount - fee}}
	accounts := []crtx.Account{out, to}
	if fee > 0 {
		platform := crtx.NewAccount(w.Environment, crtx.AccountTreasury, crtx.TreasuryID, "")
		postings = append(postings, crtx.Posting{From: out.Address, To: platform.Address, Amount: fee})
		accounts = append(accounts, platform)
	}
	data := map[string]string{"wallet": w.Wallet, "withdrawal_id": w.ID, "signature": w.Signature}
	if slot > 0 {
		data["slot"] = strconv.FormatUint(slot, 10)
	}
	if reason != "" {
		data["reason"] = reason
	}
	if fee > 0 {
		data["fee_usdc"] = fee.String()
	}
	err := m.store.Update(ctx, func(tx crtx.Tx) error {
		if err := tx.Funds.UpdateWithdrawal(ctx, next, m.replica); err != nil {
			return err
		}
		_, err := m.post(ctx, tx, w.Environment, kind, data, postings, accounts...)
		return err
	})
	if err != nil {
		return err
	}
	*w = next
	m.cfg.Logger.Info("withdrawal "+string(status), "withdrawal", w.ID, "environment", w.Environment,
		"amount_usdc", w.Amount, "signature", w.Signature, "reason", reason)
	return nil
}
