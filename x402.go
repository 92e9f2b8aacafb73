package crtx

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// x402 v2 (github.com/x402-foundation/x402, specs/x402-specification-v2.md,
// transports-v2/http.md, schemes/exact/scheme_exact_svm.md): a caller with
// no account pays one execution with a Solana transaction it signs and the
// marketplace, its own facilitator, completes, sends and settles.

// X402Version is the protocol version crtx speaks (spec §5.1.2: "must be 2").
const X402Version = 2

// The HTTP transport's headers, each a base64 JSON document
// (transports-v2/http.md, "Header Summary").
const (
	HeaderPaymentRequired  = "PAYMENT-REQUIRED"
	HeaderPaymentSignature = "PAYMENT-SIGNATURE"
	HeaderPaymentResponse  = "PAYMENT-RESPONSE"
)

// SchemeExact is the one scheme crtx accepts: a TransferChecked of the
// exact price (scheme_exact_svm.md).
const SchemeExact = "exact"

// Error codes of x402 calls: CodePaymentRequired answers an execute
// request with neither an API key nor a payment; CodePaymentInvalid one
// whose payment was refused, with the x402 reason beside it.
const (
	CodePaymentRequired = "payment_required"
	CodePaymentInvalid  = "payment_invalid"
)

// MaxPaymentHeader bounds a PAYMENT-SIGNATURE header: a Solana transaction
// is at most 1,232 bytes, so an honest payload is a few KiB.
const MaxPaymentHeader = 16 << 10

// PaymentRequired is the body of the PAYMENT-REQUIRED header (spec §5.1).
type PaymentRequired struct {
	X402Version int                   `json:"x402Version"`
	Error       string                `json:"error,omitempty"`
	Resource    ResourceInfo          `json:"resource"`
	Accepts     []PaymentRequirements `json:"accepts"`
	Extensions  map[string]any        `json:"extensions,omitempty"`
}

// Price is what pr's first way to pay asks, false when it asks nothing
// readable.
func (pr PaymentRequired) Price() (USDC, bool) {
	if len(pr.Accepts) == 0 {
		return 0, false
	}
	micro, err := strconv.ParseInt(pr.Accepts[0].Amount, 10, 64)
	if err != nil {
		return 0, false
	}
	return USDC(micro), true
}

// ResourceInfo describes what is paid for (spec §5.1.2).
type ResourceInfo struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// PaymentRequirements is one way to pay (spec §5.1.2); Extra carries the
// exact SVM scheme's feePayer.
type PaymentRequirements struct {
	Scheme            string       `json:"scheme"`
	Network           string       `json:"network"`
	Amount            string       `json:"amount"`
	Asset             string       `json:"asset"`
	PayTo             string       `json:"payTo"`
	MaxTimeoutSeconds int          `json:"maxTimeoutSeconds"`
	Extra             PaymentExtra `json:"extra"`
}

// PaymentExtra is the exact SVM scheme's extra field.
type PaymentExtra struct {
	FeePayer string `json:"feePayer"`
	Memo     string `json:"memo,omitempty"`
}

// PaymentPayload is the body of the PAYMENT-SIGNATURE header (spec §5.2);
// Payload.Transaction is the base64 partially signed transaction.
type PaymentPayload struct {
	X402Version int                 `json:"x402Version"`
	Resource    *ResourceInfo       `json:"resource,omitempty"`
	Accepted    PaymentRequirements `json:"accepted"`
	Payload     struct {
		Transaction string `json:"transaction"`
	} `json:"payload"`
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// SettleResponse is the body of the PAYMENT-RESPONSE header (spec §5.3).
type SettleResponse struct {
	Success     bool   `json:"success"`
	ErrorReason string `json:"errorReason,omitempty"`
	Payer       string `json:"payer,omitempty"`
	Transaction string `json:"transaction"`
	Network     string `json:"network"`
	Amount      string `json:"amount,omitempty"`
	// Extra is the scheme's: crtx names there the refund of a payment
	// that settled for a call that then failed.
	Extra *SettleExtra `json:"extra,omitempty"`
}

// SettleExtra is what a PAYMENT-RESPONSE adds to the spec's members.
type SettleExtra struct {
	// Refund is the id of the withdrawal that sends a settled payment
	// back to the payer's token account (GET /v1/executions/{id} follows
	// it), when the call it paid failed.
	Refund string `json:"refund,omitempty"`
}

// EncodeHeader is v as an x402 header value: base64 of its JSON.
func EncodeHeader(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only the wire structs above are encoded
	}
	return base64.StdEncoding.EncodeToString(b)
}

// DecodePaymentPayload reads a PAYMENT-SIGNATURE header. Anything that is
// not a version 2 exact payload with a transaction is invalid_request: the
// HTTP transport's "Invalid Payment" (400).
func DecodePaymentPayload(header string) (PaymentPayload, error) {
	if len(header) > MaxPaymentHeader {
		return PaymentPayload{}, InvalidField(HeaderPaymentSignature, "at most %d bytes", MaxPaymentHeader)
	}
	raw, err := base64.StdEncoding.DecodeString(header)
	if err != nil {
		// Some clients drop the padding.
		if raw, err = base64.RawStdEncoding.DecodeString(header); err != nil {
			return PaymentPayload{}, InvalidField(HeaderPaymentSignature, "not base64")
		}
	}
	p, err := ReadPaymentPayload(raw)
	var pe *PaymentError
	if errors.As(err, &pe) {
		return PaymentPayload{}, InvalidField(HeaderPaymentSignature, "%s", pe.Message)
	}
	return p, err
}

// ReadPaymentPayload reads a PaymentPayload in JSON, as transports other
// than HTTP carry it (MCP's _meta["x402/payment"]). Anything that is not a
// version 2 exact payload with a transaction is a *PaymentError, its reason
// the spec's (§9): those transports answer a malformed payment as any other
// refused one.
func ReadPaymentPayload(raw []byte) (PaymentPayload, error) {
	var p PaymentPayload
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&p); err != nil {
		return PaymentPayload{}, PaymentRefused("invalid_payload", "not a PaymentPayload in JSON: %v", err)
	}
	switch {
	case p.X402Version != X402Version:
		return PaymentPayload{}, PaymentRefused("invalid_x402_version", "x402Version %d: this server speaks version %d", p.X402Version, X402Version)
	case p.Accepted.Scheme != SchemeExact:
		return PaymentPayload{}, PaymentRefused("unsupported_scheme", "scheme %q: only %q is accepted", p.Accepted.Scheme, SchemeExact)
	case p.Payload.Transaction == "":
		return PaymentPayload{}, PaymentRefused("invalid_payload", "payload.transaction is required")
	}
	return p, nil
}

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
