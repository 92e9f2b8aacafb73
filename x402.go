package crtx

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// x402 (package x402 holds its wire format): a caller with no account pays
// one execution with a Solana transaction it signs and the marketplace,
// its own facilitator, completes, sends and settles.

// Error codes of x402 calls: CodePaymentRequired answers an execute
// request with neither an API key nor a payment; CodePaymentInvalid one
// whose payment was refused, with the x402 reason beside it.
const (
	CodePaymentRequired = "payment_required"
	CodePaymentInvalid  = "payment_invalid"
)

// X402Key stands as the API key of an execution paid with x402: the
// payment, not a key, authorized it.
const X402Key = "x402"

// PaidByX402 reports whether an x402 payment, not a wallet's balance,
// pays the execution.
func (e Execution) PaidByX402() bool { return e.KeyID == X402Key }

// ErrPaymentNeverLands is wrapped when the chain proves a payment's
// transaction can never land: it failed there, or its blockhash expired.
var ErrPaymentNeverLands = errors.New("the payment can never land")

// PaymentError is a payment refused: Reason is x402's reason code
// (invalidReason, errorReason), Message says it in words. It answers 402
// payment_invalid, and this request moved nothing. ExecutionID names the
// call a payment sent again was claimed by, whose own charge stands: such
// a refusal must not say that nothing was charged.
type PaymentError struct {
	Reason      string
	Message     string
	ExecutionID string
}

func (e *PaymentError) Error() string { return "payment refused: " + e.Reason + ": " + e.Message }

// Err is the error body a refused payment answers, on every transport.
func (e *PaymentError) Err() *Error {
	if e.ExecutionID != "" {
		return &Error{Code: CodePaymentInvalid, ExecutionID: e.ExecutionID, Message: fmt.Sprintf("%s (x402: %s)", e.Message, e.Reason)}
	}
	return Errorf(CodePaymentInvalid, "%s (x402: %s); nothing was charged", e.Message, e.Reason)
}

// PaymentRefused is a *PaymentError.
func PaymentRefused(reason, format string, args ...any) *PaymentError {
	return &PaymentError{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// PaymentTerms is what an x402 payment must pay: Amount to the treasury
// of the chain checking it.
type PaymentTerms struct {
	Amount USDC
}

// CheckedPayment is a payment's transaction as the chain read it:
// statically sound, then (Signed) completed with the fee payer's
// signature, whose signature is the transaction's.
type CheckedPayment struct {
	// Payer is the wallet that signed the transfer (its authority).
	Payer string
	// Source is the payer's token account the transfer debits, and Amount
	// what it moves.
	Source string
	Amount USDC
	// Raw is the transaction as the payer signed it.
	Raw []byte
	// Signature and Signed are the transaction with the fee payer's
	// signature, which names it on the chain.
	Signature string
	Signed    []byte
	// Keys are the account keys the transaction names beyond the ones
	// the scheme needs (a wallet's Lighthouse assertions).
	Keys []string
	// LastValid is a block height past which it can never land; Left
	// what Source holds once it lands, as simulated.
	LastValid uint64
	Left      USDC
}

// PaymentStatus is where an x402 payment stands.
type PaymentStatus string

const (
	// PaymentVerified: claimed and checked, not sent.
	PaymentVerified PaymentStatus = "verified"
	// PaymentSent: its signed bytes are stored and may have been sent.
	PaymentSent PaymentStatus = "sent"
	// PaymentSettled: it landed and is on the ledger.
	PaymentSettled PaymentStatus = "settled"
	// PaymentVoid: it was never sent, or can never land: nobody paid.
	PaymentVoid PaymentStatus = "void"
)

// PaymentMove reports whether a payment may move from one status to
// another: verified to sent (its bytes are about to leave) or void (they
// never will), sent to settled (they landed) or void (the chain proved they
// never will). Nothing moves back, and nothing skips sent to settle.
func PaymentMove(from, to PaymentStatus) bool {
	switch from {
	case PaymentVerified:
		return to == PaymentSent || to == PaymentVoid
	case PaymentSent:
		return to == PaymentSettled || to == PaymentVoid
	}
	return false
}

// Payment is an x402 payment for one execution. Its row claims its
// signature, so a payment header is used once; its signed bytes are stored
// before they are sent, so whoever finishes the execution after a crash
// learns from the chain whether it landed.
type Payment struct {
	// Scheme names the x402 scheme it pays by (package payment).
	Scheme      string
	Signature   string
	Environment Environment
	ExecutionID string
	Payer       string
	// Source is the token account it pays from: one payment of it is in
	// flight at a time.
	Source    string
	Amount    USDC
	Network   string
	Raw       []byte
	LastValid uint64
	Status    PaymentStatus
	// Reply is the creator's reply to a call settled after its result,
	// kept from the moment the payment is sent until it is settled or void.
	Reply     json.RawMessage
	Slot      uint64
	CreatedAt time.Time
	SettledAt *time.Time
}

// RefundID is the id of the withdrawal that refunds a failed x402
// execution on the chain.
func RefundID(executionID string) string { return "wd_refund_" + executionID }
