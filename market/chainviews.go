package market

import (
	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// DepositView is a deposit as the API serves it.
func (m *Funds) DepositView(d crtx.Deposit, ps []crtx.DepositPayment) api.Deposit {
	r := m.DepositRequest(d)
	v := api.Deposit{DepositID: d.ID, Environment: d.Environment, Amount: d.Amount, Recipient: r.Recipient, Mint: r.SPLToken,
		Reference: d.Reference, Memo: d.Memo, SolanaPayURL: r.URL(), TransactionRequestURL: "solana:" + m.cfg.PublicURL + "/v1/solana-pay/deposits/" + d.ID, Status: d.Status, CreatedAt: d.CreatedAt,
		ExpiresAt: d.ExpiresAt, Credited: d.Credited, Payments: []api.DepositPayment{}}
	for _, p := range ps {
		v.Payments = append(v.Payments, api.DepositPayment{Signature: p.Signature, Part: p.Part, Amount: p.Amount, Slot: p.Slot,
			TransactionID: p.TxID, CreditedAt: p.CreditedAt, ExplorerURL: m.chainURL(d.Environment, "tx", p.Signature)})
	}
	return v
}

// WithdrawalView is a withdrawal as the API serves it.
func (m *Funds) WithdrawalView(w crtx.Withdrawal) api.Withdrawal {
	v := api.Withdrawal{WithdrawalID: w.ID, Environment: w.Environment, Amount: w.Amount, Destination: w.Destination,
		Status: w.Status, CreatedAt: w.CreatedAt, CompletedAt: w.CompletedAt}
	if w.Signature != "" {
		sig, u := w.Signature, m.chainURL(w.Environment, "tx", w.Signature)
		v.Signature, v.ExplorerURL = &sig, &u
	}
	if w.Slot > 0 {
		slot := w.Slot
		v.Slot = &slot
	}
	if w.Reason != "" && w.Status == crtx.WithdrawalFailed {
		reason := w.Reason
		v.Reason = &reason
	}
	return v
}

// chainURL is the Solana explorer's page of a transaction or an address on
// env's cluster, empty without a chain.
func (m *core) chainURL(env crtx.Environment, kind, id string) string {
	if c := m.cfg.Chains[env]; c != nil {
		return crtx.SolanaExplorerURL(c, kind, id)
	}
	return ""
}
