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

// receiptMembers are the names of Receipt's members, from its tags.
func receiptMembers() []string {
	t := reflect.TypeFor[Receipt]()
	names := make([]string, t.NumField())
	for i := range names {
		names[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return names
}

// ReadReceipt reads a receipt as it was received, for checking its
// signature: it returns the receipt, the bytes its signature must sign
// (the RFC 8785 form of exactly what was received, without the
// signature) and the signature. It refuses a member the layout does not
// have, a name given twice (or twice but for case, which encoding/json
// would take as one), and a receipt whose members do not read back as
// the same receipt, so what it returns is what the signature covers.
func ReadReceipt(data []byte) (r Receipt, signed []byte, signature string, err error) {
	signed, signature, err = crtx.SignedJSON(data, receiptMembers(), "signature")
	if err != nil {
		return Receipt{}, nil, "", err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return Receipt{}, nil, "", err
	}
	if again, err := r.SignedBytes(); err != nil || !bytes.Equal(again, signed) {
		return Receipt{}, nil, "", errors.New("the receipt's members do not read back as it was received")
	}
	return r, signed, signature, nil
}
