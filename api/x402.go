package api

import (
	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/siwx"
)

// PaymentView is how an x402 execution was paid (ExecutionRecord.Payment):
// the payment's transaction on its network, and for one settled before a
// call that failed, the withdrawal that returns it on the chain.
type PaymentView struct {
	Scheme  string    `json:"scheme"`
	Network string    `json:"network"`
	Payer   string    `json:"payer"`
	Amount  crtx.USDC `json:"amount_usdc"`
	// Status is settled (it landed and paid the call), void (never sent,
	// or it never landed: nobody paid), or sent/verified while in flight.
	Status      crtx.PaymentStatus `json:"status"`
	Transaction *string            `json:"transaction"`
	Refund      *Withdrawal        `json:"refund"`
}

// ReceiptPayment names an x402 call's settlement in its receipt: the
// transaction that paid, and the withdrawal that refunds a failed call.
type ReceiptPayment struct {
	Scheme           string    `json:"scheme"`
	Network          string    `json:"network"`
	Transaction      string    `json:"transaction"`
	Payer            string    `json:"payer"`
	Amount           crtx.USDC `json:"amount_usdc"`
	RefundWithdrawal *string   `json:"refund_withdrawal"`
}

// Poll tells the caller of an asynchronous x402 call how to follow it
// without an API key: GET URL with a SIGN-IN-WITH-X header signed by the
// paying wallet over SignInWithX (a fresh one: GET ChallengeURL).
type Poll struct {
	URL          string          `json:"url"`
	ChallengeURL string          `json:"challenge_url"`
	SignInWithX  *siwx.Extension `json:"sign_in_with_x"`
}
