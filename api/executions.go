package api

import (
	"time"

	"github.com/crtx-market/crtx"
)

// ExecutionRecord is the full execution record (seed "Execution", CONTRACT
// §9). Fields not known yet are null, never missing.
type ExecutionRecord struct {
	ExecutionID     string           `json:"execution_id"`
	AgentID         string           `json:"agent_id"`
	AgentName       string           `json:"agent_name"`
	Environment     crtx.Environment `json:"environment"`
	Status          crtx.ExecStatus  `json:"status"`
	Result          *string          `json:"result"`
	ResultHash      *string          `json:"result_hash"`
	Cost            crtx.USDC        `json:"cost_usdc"`
	CreatorAmount   crtx.USDC        `json:"creator_amount_usdc"`
	PlatformAmount  crtx.USDC        `json:"platform_amount_usdc"`
	TokensUsed      *int64           `json:"tokens_used"`
	ExecutionTimeMS *int64           `json:"execution_time_ms"`
	InitiatedAt     time.Time        `json:"initiated_at"`
	CompletedAt     *time.Time       `json:"completed_at"`
	OnChainRecord   string           `json:"on_chain_record"`
	IPFSURL         *string          `json:"ipfs_url"`
	Error           *ExecError       `json:"error"`
	Dispute         *DisputeView     `json:"dispute"`
	// Refunded is what the escrow returned to the caller: the cost when the
	// execution failed (and then the split is zero), else 0. A dispute's
	// refund is the dispute's own.
	Refunded crtx.USDC `json:"refunded_usdc"`
	// Signature is the creator's over result_hash, as committed on the
	// ledger; SigningPublicKey the listing's key it was checked against,
	// registered by ListingTransaction (mainnet ledger).
	Signature          *string `json:"signature"`
	SigningPublicKey   string  `json:"signing_public_key"`
	ListingTransaction *string `json:"listing_transaction"`
	// LedgerTransaction is the ExecutionRecord or EscrowRefunded that
	// closed the escrow, in this environment's ledger.
	LedgerTransaction *string `json:"ledger_transaction"`
	// Payment is how an x402 execution was paid; absent for one paid
	// from a wallet's balance.
	Payment *PaymentView `json:"payment,omitempty"`
	// Metered is how a metered call was charged; absent for a call priced
	// per call.
	Metered *MeteredView `json:"metered,omitempty"`
}

// MeteredView is how a metered call was charged (CONTRACT §8): its
// agent's prices as it opened, what its escrow held (its most) and
// returned, and the usage its creator signed, so that anyone can compute
// cost_usdc (base + tokens × price per 1k / 1,000, rounded down to the
// micro-USDC, at most held_usdc) and check usage_signature against
// signing_public_key (docs/creators.md, "Metered listings").
type MeteredView struct {
	Base     crtx.USDC `json:"price_per_call_usdc"`
	Per1k    crtx.USDC `json:"price_per_1k_tokens_usdc"`
	Held     crtx.USDC `json:"held_usdc"`
	Returned crtx.USDC `json:"returned_usdc"`
	// ReturnedTo is the wallet whose crtx balance got the returned part
	// in the record's environment: the caller's (an x402 payer's too,
	// read and withdrawn after SIGN-IN-WITH-X); null when nothing returned.
	ReturnedTo     *string `json:"returned_to"`
	TokensUsed     *int64  `json:"tokens_used"`
	UsageSignature *string `json:"usage_signature"`
}

// NewMeteredView is how e was charged, nil unless it was metered.
func NewMeteredView(e crtx.Execution) *MeteredView {
	p, ok := e.Metered()
	if !ok {
		return nil
	}
	v := &MeteredView{Base: p.Base, Per1k: p.Per1k, Held: p.Max, Returned: e.Returned(), TokensUsed: e.TokensUsed,
		UsageSignature: orNull(e.UsageSignature)}
	if v.Returned > 0 {
		v.ReturnedTo = &e.Wallet
	}
	return v
}

// NewExecutionRecord is the record callers read of e, with its result.
func NewExecutionRecord(e crtx.Execution, result string, l crtx.Links) ExecutionRecord {
	r := ExecutionRecord{ExecutionID: e.ID, AgentID: e.AgentID, AgentName: e.AgentName, Environment: e.Environment,
		Status: e.Status, Cost: e.Cost, CreatorAmount: e.CreatorAmount, PlatformAmount: e.PlatformAmount,
		TokensUsed: e.TokensUsed, ExecutionTimeMS: e.ExecutionTimeMS, InitiatedAt: e.InitiatedAt,
		CompletedAt: e.CompletedAt, OnChainRecord: l.Record(e)}
	if e.ResultCID != "" {
		res, hash := result, e.ResultHash
		r.Result, r.ResultHash = &res, &hash
		if !e.Private {
			url := l.PublicURL + "/ipfs/" + e.ResultCID
			r.IPFSURL = &url
		}
	}
	if e.ErrorCode != "" {
		r.Error = &ExecError{Code: e.ErrorCode, Message: e.ErrorMessage}
	}
	if e.Dispute != nil {
		r.Dispute = NewDisputeView(*e.Dispute)
	}
	r.SigningPublicKey = e.SigningPublicKey
	r.Signature, r.ListingTransaction, r.LedgerTransaction = orNull(e.Signature), orNull(e.ListingTx), orNull(e.RecordTx)
	if e.Status == crtx.ExecFailed {
		// Nobody was paid; the price went back, unless nobody paid it.
		r.CreatorAmount, r.PlatformAmount = 0, 0
		r.Refunded, _ = e.Charge()
	}
	r.Metered = NewMeteredView(e)
	if p := e.Paid; p != nil {
		r.Payment = &PaymentView{Scheme: p.Scheme, Network: p.Network, Payer: p.Payer, Amount: p.Amount, Status: p.Status}
		if p.Status == crtx.PaymentSettled || p.Status == crtx.PaymentSent {
			r.Payment.Transaction = &p.Signature
		}
		if e.Refund != nil {
			w := NewWithdrawal(*e.Refund, l)
			r.Payment.Refund = &w
		}
	}
	return r
}

// orNull is s, or null when empty.
func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ExecError says why an execution failed.
type ExecError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ExecutionSummary is an item of GET /v1/executions.
type ExecutionSummary struct {
	ExecutionID   string           `json:"execution_id"`
	AgentID       string           `json:"agent_id"`
	AgentName     string           `json:"agent_name"`
	Status        crtx.ExecStatus  `json:"status"`
	Cost          crtx.USDC        `json:"cost_usdc"`
	InitiatedAt   time.Time        `json:"initiated_at"`
	CompletedAt   *time.Time       `json:"completed_at"`
	OnChainRecord string           `json:"on_chain_record"`
	Environment   crtx.Environment `json:"environment"`
	// Held is what a metered call's escrow held (its most), of which
	// cost_usdc is the charge once it completed; absent for a price per
	// call.
	Held *crtx.USDC `json:"held_usdc,omitempty"`
}

// NewExecutionSummary is the list item of e.
func NewExecutionSummary(e crtx.Execution, l crtx.Links) ExecutionSummary {
	s := ExecutionSummary{ExecutionID: e.ID, AgentID: e.AgentID, AgentName: e.AgentName, Status: e.Status, Cost: e.Cost,
		InitiatedAt: e.InitiatedAt, CompletedAt: e.CompletedAt, OnChainRecord: l.Record(e), Environment: e.Environment}
	if p, ok := e.Metered(); ok {
		s.Held = &p.Max
	}
	return s
}

// ExecutionPage is the answer of GET /v1/executions.
type ExecutionPage struct {
	Executions []ExecutionSummary `json:"executions"`
	Page
}

// Accepted is the immediate answer to an asynchronous execute.
type Accepted struct {
	ExecutionID string          `json:"execution_id"`
	Status      crtx.ExecStatus `json:"status"`
	// Poll is set for an x402 call: how its payer follows it.
	Poll *Poll `json:"poll,omitempty"`
}
