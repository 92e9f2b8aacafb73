package api

import (
	"time"

	"github.com/crtx-market/crtx"
)

// Deposit is a Solana Pay transfer request and what was credited to it:
// the answer of POST and GET /v1/wallet/deposits.
type Deposit struct {
	DepositID    string           `json:"deposit_id"`
	Environment  crtx.Environment `json:"environment"`
	Amount       crtx.USDC        `json:"amount_usdc"`
	Recipient    string           `json:"recipient"`
	Mint         string           `json:"mint"`
	Reference    string           `json:"reference"`
	Memo         string           `json:"memo"`
	SolanaPayURL string           `json:"solana_pay_url"`
	// TransactionRequestURL is the same payment as a Solana Pay
	// transaction request: the wallet fetches the transaction to sign.
	TransactionRequestURL string             `json:"transaction_request_url"`
	Status                crtx.DepositStatus `json:"status"`
	CreatedAt             time.Time          `json:"created_at"`
	ExpiresAt             time.Time          `json:"expires_at"`
	Credited              crtx.USDC          `json:"credited_usdc"`
	Payments              []DepositPayment   `json:"payments"`
}

// DepositPayment is one transfer credited to a deposit.
type DepositPayment struct {
	Signature     string    `json:"signature"`
	Part          int       `json:"part"`
	Amount        crtx.USDC `json:"amount_usdc"`
	Slot          uint64    `json:"slot"`
	TransactionID string    `json:"transaction_id"`
	CreditedAt    time.Time `json:"credited_at"`
	ExplorerURL   string    `json:"explorer_url"`
}

// DepositPage is the answer of GET /v1/wallet/deposits.
type DepositPage struct {
	Deposits []Deposit `json:"deposits"`
	Page
}

// Withdrawal is the answer of POST and GET /v1/wallet/withdrawals.
type Withdrawal struct {
	WithdrawalID string                `json:"withdrawal_id"`
	Environment  crtx.Environment      `json:"environment"`
	Amount       crtx.USDC             `json:"amount_usdc"`
	Destination  string                `json:"destination"`
	Status       crtx.WithdrawalStatus `json:"status"`
	// Signature is the transfer's, once signed; it may change while the
	// status is pending or sent (a transfer whose blockhash expired
	// unsent is signed anew), never after.
	Signature   *string    `json:"signature"`
	Slot        *uint64    `json:"slot"`
	Reason      *string    `json:"reason"`
	CreatedAt   time.Time  `json:"created_at"`
	CompletedAt *time.Time `json:"completed_at"`
	ExplorerURL *string    `json:"explorer_url"`
}

// WithdrawalPage is the answer of GET /v1/wallet/withdrawals.
type WithdrawalPage struct {
	Withdrawals []Withdrawal `json:"withdrawals"`
	Page
}

// Reserves is the answer of GET /v1/reserves.
type Reserves struct {
	Reserves []crtx.Reserve `json:"reserves"`
}

// ChainTransfer is a transfer into the treasury seen on the chain.
type ChainTransfer struct {
	Signature string    `json:"signature"`
	Part      int       `json:"part"`
	Slot      uint64    `json:"slot"`
	Amount    crtx.USDC `json:"amount_usdc"`
	From      string    `json:"from"`
	Finalized bool      `json:"finalized"`
}

// Unattributed is the answer of GET /v1/admin/deposits/unattributed: USDC
// that reached the treasury carrying no deposit's reference.
type Unattributed struct {
	Transfers []ChainTransfer `json:"transfers"`
}

// SolanaPayLabel is the answer of GET on a Solana Pay transaction request.
type SolanaPayLabel struct {
	Label string `json:"label"`
	Icon  string `json:"icon"`
}

// SolanaPayTransaction is the answer of POST on a Solana Pay transaction
// request: a transaction, base64 of its wire bytes, for the wallet to sign.
type SolanaPayTransaction struct {
	Transaction string `json:"transaction"`
	Message     string `json:"message"`
}

// NewDeposit is a deposit as the API serves it, with the payments
// credited to it.
func NewDeposit(d crtx.Deposit, ps []crtx.DepositPayment, l crtx.Links) Deposit {
	r := d.Request(l.Chains[d.Environment])
	v := Deposit{DepositID: d.ID, Environment: d.Environment, Amount: d.Amount, Recipient: r.Recipient, Mint: r.SPLToken,
		Reference: d.Reference, Memo: d.Memo, SolanaPayURL: r.URL(), TransactionRequestURL: "solana:" + l.PublicURL + "/v1/solana-pay/deposits/" + d.ID, Status: d.Status, CreatedAt: d.CreatedAt,
		ExpiresAt: d.ExpiresAt, Credited: d.Credited, Payments: []DepositPayment{}}
	for _, p := range ps {
		v.Payments = append(v.Payments, DepositPayment{Signature: p.Signature, Part: p.Part, Amount: p.Amount, Slot: p.Slot,
			TransactionID: p.TxID, CreditedAt: p.CreditedAt, ExplorerURL: l.Chain(d.Environment, "tx", p.Signature)})
	}
	return v
}

// NewWithdrawal is a withdrawal as the API serves it.
func NewWithdrawal(w crtx.Withdrawal, l crtx.Links) Withdrawal {
	v := Withdrawal{WithdrawalID: w.ID, Environment: w.Environment, Amount: w.Amount, Destination: w.Destination,
		Status: w.Status, CreatedAt: w.CreatedAt, CompletedAt: w.CompletedAt}
	if w.Signature != "" {
		sig, u := w.Signature, l.Chain(w.Environment, "tx", w.Signature)
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
