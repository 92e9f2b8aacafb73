package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
)

// ReceiptVersion is the layout of Receipt.
const ReceiptVersion = 1

// Receipt is what the marketplace attests about a final execution
// (GET /v1/executions/{execution_id}/receipt), signed with its signing key (the
// signing_public_key of /.well-known/crtx.json), so that a caller can keep
// it and check it offline (docs/verify.md).
type Receipt struct {
	Version            int              `json:"version"`
	Issuer             string           `json:"issuer"` // the marketplace's public URL
	ExecutionID        string           `json:"execution_id"`
	Environment        crtx.Environment `json:"environment"`
	Wallet             string           `json:"wallet"` // the caller's
	AgentID            string           `json:"agent_id"`
	Status             crtx.ExecStatus  `json:"status"`
	Cost               crtx.USDC        `json:"cost_usdc"`
	CreatorAmount      crtx.USDC        `json:"creator_amount_usdc"`
	PlatformAmount     crtx.USDC        `json:"platform_amount_usdc"`
	Refunded           crtx.USDC        `json:"refunded_usdc"`
	ResultHash         *string          `json:"result_hash"`
	CreatorSignature   *string          `json:"creator_signature"`
	SigningPublicKey   string           `json:"signing_public_key"`
	ListingTransaction *string          `json:"listing_transaction"`
	LedgerTransaction  *string          `json:"ledger_transaction"`
	InitiatedAt        time.Time        `json:"initiated_at"`
	CompletedAt        *time.Time       `json:"completed_at"`
	// Payment names the settlement of an x402 call: with the result hash
	// and the ledger transaction, one document proves payment and
	// delivery. Absent for a call paid from a wallet's balance.
	Payment *ReceiptPayment `json:"payment,omitempty"`
	// Signature is "ed25519:" and base58 of the marketplace's signature
	// over SignedBytes.
	Signature string `json:"signature,omitempty"`
}

// SignedBytes is what Signature signs: the RFC 8785 form of the receipt
// without its signature.
func (r Receipt) SignedBytes() ([]byte, error) {
	r.Signature = ""
	return crtx.Canonical(r)
}

// membersOf are the names of T's members, from its tags.
func membersOf[T any]() []string {
	t := reflect.TypeFor[T]()
	names := make([]string, t.NumField())
	for i := range names {
		names[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return names
}

// signedStatement is a statement the marketplace signs as a whole: a
// receipt or a ruling.
type signedStatement interface {
	Receipt | Ruling
	SignedBytes() ([]byte, error)
}

// readSigned reads a signed statement as it was received, for checking
// its signature: it returns the statement, the bytes its signature must
// sign (the RFC 8785 form of exactly what was received, without the
// signature) and the signature. It refuses a member the layout does not
// have, a name given twice (or twice but for case, which encoding/json
// would take as one), and a statement whose members do not read back as
// the same statement, so what it returns is what the signature covers.
func readSigned[T signedStatement](data []byte, what string) (v T, signed []byte, signature string, err error) {
	signed, signature, err = crtx.SignedJSON(data, membersOf[T](), "signature")
	if err != nil {
		return v, nil, "", err
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return v, nil, "", err
	}
	if again, err := v.SignedBytes(); err != nil || !bytes.Equal(again, signed) {
		var zero T
		return zero, nil, "", errors.New("the " + what + "'s members do not read back as it was received")
	}
	return v, signed, signature, nil
}

// ReadReceipt reads a receipt as it was received (readSigned).
func ReadReceipt(data []byte) (r Receipt, signed []byte, signature string, err error) {
	return readSigned[Receipt](data, "receipt")
}
