package crtx

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
)

// ExecuteParams is the execute request (seed "Execute request", CONTRACT §8).
type ExecuteParams struct {
	Task           string          `json:"task"`
	Parameters     json.RawMessage `json:"parameters"`
	Async          bool            `json:"async"`
	TimeoutSeconds *int            `json:"timeout_seconds"`
	MaxCost        *USDC           `json:"max_cost_usdc"`
	// MaxPrice lowers a metered call's most (the listing's
	// max_price_per_call_usdc) for this call.
	MaxPrice   *USDC  `json:"max_price_usdc"`
	WebhookURL string `json:"webhook_url"`
	// Private keeps the result off /ipfs/{cid} and its CID off the
	// ledger: only the caller reads it, through its record.
	Private bool `json:"private"`
	// Stream asks for the result as the creator writes it: Deltas, set by
	// the transport, is given each piece, as this process runs the call
	// (an asynchronous one's from the goroutine that runs it).
	Stream bool                           `json:"stream"`
	Deltas func(executionID, text string) `json:"-"`
}

// MaxTaskBytes bounds the task (CONTRACT §8).
const MaxTaskBytes = 32 << 10

// IdempotencyTTL is how long an Idempotency-Key is remembered.
const IdempotencyTTL = 24 * time.Hour

// Replay is returned (as an error) when an Idempotency-Key was seen before
// with the same request: the first answer is to be given again.
type Replay struct {
	Idempotency Idempotency
	Execution   Execution
}

func (r *Replay) Error() string { return "idempotent replay of " + r.Idempotency.Key }

// RequestHash identifies a request for idempotency: the agent and the body bytes.
func RequestHash(agentID string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(agentID))
	h.Write([]byte{0})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// ExecStatus is where an execution stands (seed "Execution statuses").
type ExecStatus string

const (
	ExecPending   ExecStatus = "pending"
	ExecRunning   ExecStatus = "running"
	ExecCompleted ExecStatus = "completed"
	ExecFailed    ExecStatus = "failed"
	ExecDisputed  ExecStatus = "disputed"
)

// Final reports whether the execution's money is settled or refunded.
func (s ExecStatus) Final() bool { return s == ExecCompleted || s == ExecFailed || s == ExecDisputed }

// Execution is one paid call to an agent. Its row is also its work item:
// LeaseUntil says until when a process owns the dispatch; when the lease
// runs out before the execution is final, any process may take it over.
type Execution struct {
	ID               string
	Environment      Environment
	Wallet           string
	KeyID            string
	AgentID          string
	AgentName        string
	Creator          string
	EndpointURL      string // as listed when the execution began
	SigningPublicKey string // likewise
	ListingTx        string // the listing transaction that registered SigningPublicKey
	Task             string
	Parameters       json.RawMessage
	TimeoutSeconds   int
	Async            bool
	WebhookURL       string
	// Cost is what the call costs: its price, or a metered call's most
	// until it completes and its charge after. Held is what its escrow
	// held; Base and Per1k its agent's prices as it opened (Per1k is 0
	// for a price per call).
	Cost           USDC
	Held, Base     USDC
	Per1k          USDC
	CreatorAmount  USDC
	PlatformAmount USDC
	Status         ExecStatus
	ErrorCode      string
	ErrorMessage   string
	ResultCID      string
	ResultHash     string
	Signature      string
	// UsageSignature is a metered call's creator's signature of its usage
	// (UsageStatement).
	UsageSignature string
	// RecordTx is the ExecutionRecord or EscrowRefunded that closed it.
	RecordTx        string
	TokensUsed      *int64
	ExecutionTimeMS *int64
	InitiatedAt     time.Time
	DispatchedAt    *time.Time
	CompletedAt     *time.Time
	Deadline        time.Time
	LeaseUntil      time.Time
	Attempts        int
	// Owner is the replica (each Market names itself when made) that holds
	// the lease: when it stops beating (Heartbeat), the others take the
	// execution over.
	Owner string
	// Private: the result is returned to the caller only (ExecuteParams).
	Private bool
	// Dispute and Result are attached by reads and by the settlement that
	// know them; they are not part of the row.
	Dispute *Dispute
	Result  string
	// Paid is an x402 execution's payment, and Refund the withdrawal that
	// returns it when the call failed after it settled.
	Paid   *Payment
	Refund *Withdrawal
}

// Charge is what came back to e's caller of its price and what the call
// cost it in the end. A failure gets its price back, by its escrow or an
// x402 payment's refund; but an x402 payment that never landed neither
// charged nor refunded anything. An upheld dispute gives back its refund.
// It reads e.Paid for a failed x402 call and e.Dispute for a disputed one.
func (e Execution) Charge() (refunded, charged USDC) {
	switch {
	case e.Status == ExecFailed && e.Paid != nil && e.Paid.Status == PaymentVoid:
		return 0, 0
	case e.Status == ExecFailed:
		return e.Cost, 0
	case e.Dispute != nil:
		return e.Dispute.Refunded, max(e.Cost-e.Dispute.Refunded, 0)
	}
	return 0, e.Cost
}

// Metered is e's metered prices, its most being what its escrow held, and
// whether e was metered.
func (e Execution) Metered() (Metered, bool) {
	return Metered{Base: e.Base, Per1k: e.Per1k, Max: e.Held}, e.Per1k > 0
}

// Returned is what the escrow of a call that was charged gave back to
// its caller: the part of a metered call's most it did not use.
func (e Execution) Returned() USDC {
	if e.Status != ExecCompleted && e.Status != ExecDisputed {
		return 0
	}
	return max(e.Held-e.Cost, 0)
}

// Split divides a cost between creator and platform (CONTRACT §1): the
// platform takes floor(cost × bps / 10000), the creator the rest.
func Split(cost USDC, bps int) (creator, platform USDC) {
	platform = USDC(int64(cost) * int64(bps) / 10000)
	return cost - platform, platform
}

// ExecutionQuery selects a wallet's executions in one environment (CONTRACT §9).
type ExecutionQuery struct {
	Wallet      string // the caller's executions; or
	Creator     string // the executions of a creator's agents
	Environment Environment
	Status      ExecStatus
	AgentID     string
	// KeyID, when set, keeps the executions made with that key.
	KeyID string
	// NotByCreator, with Creator, leaves out the calls the creator paid
	// for itself, as public statistics do.
	NotByCreator bool
	From, To     *time.Time // initiated_at: from inclusive, to exclusive
	Limit        int
	Offset       int
}

// Idempotency keys of the three doors share a wallet's key space in the
// store: an MCP idempotency_key is stored under MCPKeys, an A2A messageId
// under A2AKeys, and a REST Idempotency-Key as it is sent, unless it
// starts with a door's prefix, when it is stored under restKeys
// (RESTIdempotencyKey). No key sent through one door is then a key of
// another: a REST "a2a:m-1" is not the A2A message m-1.
const (
	MCPKeys  = "mcp:"
	A2AKeys  = "a2a:"
	restKeys = "rest:"
)

// MaxIdempotencyKey is the longest key a caller sends (CONTRACT §8).
const MaxIdempotencyKey = 255

// MaxStoredIdempotencyKey is the longest key stored: a door's prefix and
// the key sent.
const MaxStoredIdempotencyKey = len(restKeys) + MaxIdempotencyKey

// RESTIdempotencyKey is how a REST Idempotency-Key is stored.
func RESTIdempotencyKey(key string) string {
	for _, door := range []string{MCPKeys, A2AKeys, restKeys} {
		if strings.HasPrefix(key, door) {
			return restKeys + key
		}
	}
	return key
}

// Idempotency remembers the first answer to an Idempotency-Key.
type Idempotency struct {
	// A key is the wallet's in one environment: the same key sent with a
	// devnet API key after a mainnet one is another request.
	Wallet      string
	Environment Environment
	Key         string
	RequestHash string
	ExecutionID string
	// Status and Body are the first response; Status 0 while it is in flight.
	Status    int
	Body      []byte
	CreatedAt time.Time
}

// DayEarnings is one UTC day of a creator's earnings.
type DayEarnings struct {
	Date       string `json:"date"`
	Earned     USDC   `json:"earned_usdc"`
	Executions int64  `json:"executions"`
}

// DaySpend is what a wallet spent on one agent on one UTC day: what its
// calls begun that day cost in the end (Execution.Charge), and how many
// calls it made.
type DaySpend struct {
	Date      string
	AgentID   string
	AgentName string
	Spent     USDC
	Calls     int64
}

// DayRuns are one UTC day of an agent's public runs in an environment:
// those that ended, and of them those that completed (the creator's own
// calls left out, as from every public statistic).
type DayRuns struct {
	Date      string
	Ended     int64
	Succeeded int64
}

// Earnings is the answer of GET /v1/creator/earnings.
type Earnings struct {
	Environment Environment   `json:"environment"`
	Total       USDC          `json:"total_usdc"`
	Executions  int64         `json:"executions"`
	Days        []DayEarnings `json:"days"`
}
