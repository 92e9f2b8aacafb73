// Package x402 is x402 v2's wire format (github.com/x402-foundation/x402,
// specs/x402-specification-v2.md, transports-v2/http.md,
// schemes/exact/scheme_exact_svm.md) as crtx speaks it: the documents its
// headers carry, their codecs and the rules a payload must meet before a
// chain reads its transaction. A caller with no account pays one execution
// with a Solana transaction it signs and the marketplace, its own
// facilitator, completes, sends and settles.
package x402

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/crtx-market/crtx"
)

// Version is the protocol version crtx speaks (spec §5.1.2: "must be 2").
const Version = 2

// The HTTP transport's headers, each a base64 JSON document
// (transports-v2/http.md, "Header Summary").
const (
	HeaderPaymentRequired  = "PAYMENT-REQUIRED"
	HeaderPaymentSignature = "PAYMENT-SIGNATURE"
	HeaderPaymentResponse  = "PAYMENT-RESPONSE"
)

// The MCP transport's _meta keys (transports-v2/mcp.md): "Payment Payload
// Transmission" and "Settlement Response Delivery".
const (
	MetaPayment         = "x402/payment"
	MetaPaymentResponse = "x402/payment-response"
)

// SchemeExact is the one scheme crtx accepts: a TransferChecked of the
// exact price (scheme_exact_svm.md).
const SchemeExact = "exact"

// MaxHeader bounds a PAYMENT-SIGNATURE header: a Solana transaction
// is at most 1,232 bytes, so an honest payload is a few KiB.
const MaxHeader = 16 << 10

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
func (pr PaymentRequired) Price() (crtx.USDC, bool) {
	if len(pr.Accepts) == 0 {
		return 0, false
	}
	micro, err := strconv.ParseInt(pr.Accepts[0].Amount, 10, 64)
	if err != nil {
		return 0, false
	}
	return crtx.USDC(micro), true
}

// Required is the PaymentRequired of resource before its ways to pay: it
// declares the payment-identifier extension, and says what the request
// lacked.
func Required(resource ResourceInfo) PaymentRequired {
	return PaymentRequired{X402Version: Version,
		Error:      "PAYMENT-SIGNATURE header is required: pay this call with x402, or use an API key",
		Resource:   resource,
		Extensions: map[string]any{PaymentIdentifier: paymentIdentifierDeclared()}}
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
	// A metered call's payment is of its most: Charged is what the call
	// cost and Returned the rest, in base units, credited to the crtx
	// wallet of the payer (ReturnedTo: "crtx_wallet"), where it pays the
	// next calls or is withdrawn after SIGN-IN-WITH-X.
	Charged    string `json:"charged,omitempty"`
	Returned   string `json:"returned,omitempty"`
	ReturnedTo string `json:"returnedTo,omitempty"`
}

// ReturnedToWallet is SettleExtra.ReturnedTo for the payer's crtx wallet.
const ReturnedToWallet = "crtx_wallet"

// Settlement is the PAYMENT-RESPONSE of execution e paid by p, as they
// stand; refund names the withdrawal that returns p to its payer, which a
// settled payment of a failed call has.
func Settlement(e crtx.Execution, p crtx.Payment, refund string) SettleResponse {
	r := SettleResponse{Network: p.Network, Payer: e.Wallet}
	switch p.Status {
	case crtx.PaymentSettled:
		r.Success, r.Transaction, r.Amount = true, p.Signature, strconv.FormatInt(int64(p.Amount), 10)
		if e.Status == crtx.ExecFailed {
			// Settled first, then failed: closing it queued the refund.
			r.Extra = &SettleExtra{Refund: refund}
		}
		if back := e.Returned(); back > 0 {
			r.Extra = &SettleExtra{Charged: strconv.FormatInt(int64(e.Cost), 10),
				Returned: strconv.FormatInt(int64(back), 10), ReturnedTo: ReturnedToWallet}
		}
	case crtx.PaymentVoid:
		r.ErrorReason = "transaction_failed"
		if e.Status == crtx.ExecFailed && e.ErrorCode != crtx.CodePaymentInvalid {
			// The call failed, so the payment was never sent.
			r.ErrorReason = "execution_failed"
		}
	default:
		r.ErrorReason = "settlement_pending"
	}
	return r
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
	if len(header) > MaxHeader {
		return PaymentPayload{}, crtx.InvalidField(HeaderPaymentSignature, "at most %d bytes", MaxHeader)
	}
	raw, err := base64.StdEncoding.DecodeString(header)
	if err != nil {
		// Some clients drop the padding.
		if raw, err = base64.RawStdEncoding.DecodeString(header); err != nil {
			return PaymentPayload{}, crtx.InvalidField(HeaderPaymentSignature, "not base64")
		}
	}
	p, err := ReadPaymentPayload(raw)
	var pe *crtx.PaymentError
	if errors.As(err, &pe) {
		return PaymentPayload{}, crtx.InvalidField(HeaderPaymentSignature, "%s", pe.Message)
	}
	return p, err
}

// ReadPaymentPayload reads a PaymentPayload in JSON, as transports other
// than HTTP carry it (MCP's _meta["x402/payment"]). Anything that is not a
// version 2 exact payload with a transaction is a *crtx.PaymentError, its reason
// the spec's (§9): those transports answer a malformed payment as any other
// refused one.
func ReadPaymentPayload(raw []byte) (PaymentPayload, error) {
	var p PaymentPayload
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&p); err != nil {
		return PaymentPayload{}, crtx.PaymentRefused("invalid_payload", "not a PaymentPayload in JSON: %v", err)
	}
	switch {
	case p.X402Version != Version:
		return PaymentPayload{}, crtx.PaymentRefused("invalid_x402_version", "x402Version %d: this server speaks version %d", p.X402Version, Version)
	case p.Accepted.Scheme != SchemeExact:
		return PaymentPayload{}, crtx.PaymentRefused("unsupported_scheme", "scheme %q: only %q is accepted", p.Accepted.Scheme, SchemeExact)
	case p.Payload.Transaction == "":
		return PaymentPayload{}, crtx.PaymentRefused("invalid_payload", "payload.transaction is required")
	}
	return p, nil
}
