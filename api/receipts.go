package api

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
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
	// Metered states how a metered call was charged, as its record does;
	// absent for a call priced per call.
	Metered *MeteredView `json:"metered,omitempty"`
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

// NewReceipt is the receipt of e, a final execution with its payment,
// issued by l's marketplace and signed with its key.
func NewReceipt(e crtx.Execution, l crtx.Links, key ed25519.PrivateKey) (Receipt, error) {
	r := NewExecutionRecord(e, "", l)
	// A dispute is only ever opened on a completed execution, and its
	// outcome is a statement of its own (Ruling): the receipt states the
	// execution as it ended, the same bytes before and after a dispute.
	status := e.Status
	if status == crtx.ExecDisputed {
		status = crtx.ExecCompleted
	}
	rc := Receipt{Version: ReceiptVersion, Issuer: l.PublicURL, ExecutionID: e.ID, Environment: e.Environment,
		Wallet: e.Wallet, AgentID: e.AgentID, Status: status, Cost: r.Cost, CreatorAmount: r.CreatorAmount,
		PlatformAmount: r.PlatformAmount, Refunded: r.Refunded, ResultHash: r.ResultHash, CreatorSignature: r.Signature,
		SigningPublicKey: r.SigningPublicKey, ListingTransaction: r.ListingTransaction, LedgerTransaction: r.LedgerTransaction,
		InitiatedAt: e.InitiatedAt, CompletedAt: e.CompletedAt, Metered: r.Metered}
	if pd := e.Paid; pd != nil && pd.Status == crtx.PaymentSettled {
		// Only what never changes: the refund's id, not its progress.
		rc.Payment = &ReceiptPayment{Scheme: pd.Scheme, Network: pd.Network, Transaction: pd.Signature,
			Payer: pd.Payer, Amount: pd.Amount}
		if e.Refund != nil {
			rc.Payment.RefundWithdrawal = &e.Refund.ID
		}
	}
	var err error
	rc.Signature, err = sign(key, rc.SignedBytes)
	return rc, err
}

// sign signs the bytes of a statement with the marketplace's key, as
// "ed25519:" and base58.
func sign(key ed25519.PrivateKey, signed func() ([]byte, error)) (string, error) {
	b, err := signed()
	if err != nil {
		return "", fmt.Errorf("sign a statement: %w", err)
	}
	return "ed25519:" + crtx.SignBase58(key, b), nil
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
