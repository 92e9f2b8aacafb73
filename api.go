package crtx

import (
	"encoding/json"
	"sync"
	"time"
)

// Wire shapes of REST responses that are not domain types themselves. The
// http package writes them and the client package reads them.

// ErrorBody is the seed's error body.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the object inside ErrorBody.
type ErrorDetail struct {
	Code        string  `json:"code"`
	Message     string  `json:"message"`
	ExecutionID *string `json:"execution_id"`
}

// ChallengeResponse is the answer of POST /v1/auth/challenge.
type ChallengeResponse struct {
	Message   string    `json:"message"`
	ExpiresAt time.Time `json:"expires_at"`
}

// SessionResponse is the answer of POST /v1/auth/session.
type SessionResponse struct {
	SessionToken string    `json:"session_token"`
	Wallet       string    `json:"wallet"`
	ExpiresAt    time.Time `json:"expires_at"`
}

// CreatedKey is the answer of POST /v1/keys: the only time Key is shown.
type CreatedKey struct {
	ID          string      `json:"id"`
	Name        string      `json:"name"`
	Environment Environment `json:"environment"`
	Key         string      `json:"key"`
	Prefix      string      `json:"prefix"`
	CreatedAt   time.Time   `json:"created_at"`
	SpendLimit  *USDC       `json:"spend_limit_usdc"`
}

// KeyList is the answer of GET /v1/keys.
type KeyList struct {
	Keys []APIKey `json:"keys"`
}

// WalletResponse is the answer of GET /v1/wallet.
type WalletResponse struct {
	Wallet   string                  `json:"wallet"`
	Balances map[Environment]Balance `json:"balances"`
}

// FundingResponse is the answer of an airdrop, deposit or withdrawal.
type FundingResponse struct {
	TransactionID string      `json:"transaction_id"`
	Kind          TxKind      `json:"kind"`
	Environment   Environment `json:"environment"`
	Wallet        string      `json:"wallet"`
	Amount        USDC        `json:"amount_usdc"`
	Balance       Balance     `json:"balance"`
	ExplorerURL   string      `json:"explorer_url"`
}

// WellKnown is the document at /.well-known/json: what creators need to
// check requests from this marketplace.
type WellKnown struct {
	SigningPublicKey   string        `json:"signing_public_key"`
	AuthorityPublicKey string        `json:"ledger_authority_public_key"`
	PublicURL          string        `json:"public_url"`
	PlatformFeeBps     int           `json:"platform_fee_bps"`
	Environments       []Environment `json:"environments"`
}

// CreatorSummary is the creator of an agent in lists.
type CreatorSummary struct {
	Pubkey   string `json:"pubkey"`
	Verified bool   `json:"verified"`
}

// CreatorInfo is the creator of an agent in its full listing.
type CreatorInfo struct {
	Pubkey      string `json:"pubkey"`
	DisplayName string `json:"display_name"`
	Verified    bool   `json:"verified"`
}

// AgentSummary is an item of GET /v1/agents (seed "Agent summary").
type AgentSummary struct {
	AgentID            string         `json:"agent_id"`
	Name               string         `json:"name"`
	Tagline            string         `json:"tagline"`
	Tags               []string       `json:"tags"`
	Price              USDC           `json:"price_per_call_usdc"`
	TotalExecutions    int64          `json:"total_executions"`
	SuccessRate        float64        `json:"success_rate"`
	AvgExecutionTimeMS int64          `json:"avg_execution_time_ms"`
	Creator            CreatorSummary `json:"creator"`
	Status             AgentStatus    `json:"status"`
}

// AgentPage is the answer of GET /v1/agents.
type AgentPage struct {
	Agents []AgentSummary `json:"agents"`
	Total  int            `json:"total"`
	Limit  int            `json:"limit"`
	Offset int            `json:"offset"`

	// encoded is shared by the copies of a cached page, so that a page
	// served many times is encoded once.
	encoded *encodedJSON
}

type encodedJSON struct {
	once sync.Once
	b    []byte
	err  error

	compressOnce sync.Once
	compressed   []byte
}

// Kept returns the page marked for keeping: it and every copy of it share
// one encoding.
func (p AgentPage) Kept() AgentPage {
	p.encoded = &encodedJSON{}
	return p
}

// JSON returns the page encoded as JSON with a trailing newline,
// encoding it at most once per cached page. The bytes are shared: callers
// must not change them.
func (p AgentPage) JSON() ([]byte, error) {
	enc := func() ([]byte, error) {
		b, err := json.Marshal(p)
		return append(b, '\n'), err
	}
	if p.encoded == nil {
		return enc()
	}
	p.encoded.once.Do(func() { p.encoded.b, p.encoded.err = enc() })
	return p.encoded.b, p.encoded.err
}

// CompressedJSON returns compress applied to the page's JSON, at most once
// per cached page, so that a page served many times is compressed once.
// Every caller must pass the same compression; the bytes are shared.
func (p AgentPage) CompressedJSON(compress func([]byte) []byte) ([]byte, error) {
	b, err := p.JSON()
	if err != nil {
		return nil, err
	}
	if p.encoded == nil {
		return compress(b), nil
	}
	p.encoded.compressOnce.Do(func() { p.encoded.compressed = compress(b) })
	return p.encoded.compressed, nil
}

// AgentListing is the full listing of GET /v1/agents/{id} (seed "Agent").
// Statistics are those of Environment.
type AgentListing struct {
	AgentID              string          `json:"agent_id"`
	Name                 string          `json:"name"`
	Tagline              string          `json:"tagline"`
	Tags                 []string        `json:"tags"`
	Price                USDC            `json:"price_per_call_usdc"`
	TotalExecutions      int64           `json:"total_executions"`
	SuccessRate          float64         `json:"success_rate"`
	AvgExecutionTimeMS   int64           `json:"avg_execution_time_ms"`
	Creator              CreatorInfo     `json:"creator"`
	Status               AgentStatus     `json:"status"`
	Description          string          `json:"description"`
	InputSchema          json.RawMessage `json:"input_schema"`
	OutputSchema         json.RawMessage `json:"output_schema"`
	SuccessfulExecutions int64           `json:"successful_executions"`
	DisputeCount         int64           `json:"dispute_count"`
	OnChainListing       string          `json:"on_chain_listing"`
	CreatedAt            time.Time       `json:"created_at"`
	PricingModel         string          `json:"pricing_model"`
	TimeoutSeconds       int             `json:"timeout_seconds"`
	Environment          Environment     `json:"environment"`
}

// CreatorAgent is a listing as its creator sees it: the full listing and
// what only the creator may read.
type CreatorAgent struct {
	AgentListing
	EndpointURL      string    `json:"endpoint_url"`
	SigningPublicKey string    `json:"signing_public_key"`
	Collateral       USDC      `json:"collateral_usdc"`
	UpdatedAt        time.Time `json:"updated_at"`
	// Suspended is true while the operator keeps the agent out of the catalog.
	Suspended bool `json:"suspended"`
}

// CreatorAgentList is the answer of GET /v1/creator/agents.
type CreatorAgentList struct {
	Agents []CreatorAgent `json:"agents"`
}

// CreatorProfile is the answer of PUT /v1/creator/profile.
type CreatorProfile struct {
	Wallet      string `json:"wallet"`
	DisplayName string `json:"display_name"`
	Verified    bool   `json:"verified"`
}

// TestReport is the answer of POST /v1/creator/test-execution and what the
// reachability test of a listing found.
type TestReport struct {
	Reachable   bool     `json:"reachable"`
	LatencyMS   int64    `json:"latency_ms"`
	ShapeOK     bool     `json:"shape_ok"`
	SignatureOK bool     `json:"signature_ok"`
	Status      string   `json:"status"`
	Problems    []string `json:"problems"`
}

// ExecutionRecord is the full execution record (seed "Execution", CONTRACT
// §9). Fields not known yet are null, never missing.
type ExecutionRecord struct {
	ExecutionID     string       `json:"execution_id"`
	AgentID         string       `json:"agent_id"`
	AgentName       string       `json:"agent_name"`
	Environment     Environment  `json:"environment"`
	Status          ExecStatus   `json:"status"`
	Result          *string      `json:"result"`
	ResultHash      *string      `json:"result_hash"`
	Cost            USDC         `json:"cost_usdc"`
	CreatorAmount   USDC         `json:"creator_amount_usdc"`
	PlatformAmount  USDC         `json:"platform_amount_usdc"`
	TokensUsed      *int64       `json:"tokens_used"`
	ExecutionTimeMS *int64       `json:"execution_time_ms"`
	InitiatedAt     time.Time    `json:"initiated_at"`
	CompletedAt     *time.Time   `json:"completed_at"`
	OnChainRecord   string       `json:"on_chain_record"`
	IPFSURL         *string      `json:"ipfs_url"`
	Error           *ExecError   `json:"error"`
	Dispute         *DisputeView `json:"dispute"`
}

// ExecError says why an execution failed.
type ExecError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// DisputeView is the dispute of a disputed execution (CONTRACT §9).
type DisputeView struct {
	DisputeID  string     `json:"dispute_id"`
	Status     string     `json:"status"`
	Reason     string     `json:"reason"`
	OpenedAt   time.Time  `json:"opened_at"`
	ResolvedAt *time.Time `json:"resolved_at"`
	Slashed    USDC       `json:"slashed_usdc"`
	Refunded   USDC       `json:"refunded_usdc"`
}

// ExecutionSummary is an item of GET /v1/executions.
type ExecutionSummary struct {
	ExecutionID   string      `json:"execution_id"`
	AgentID       string      `json:"agent_id"`
	AgentName     string      `json:"agent_name"`
	Status        ExecStatus  `json:"status"`
	Cost          USDC        `json:"cost_usdc"`
	InitiatedAt   time.Time   `json:"initiated_at"`
	CompletedAt   *time.Time  `json:"completed_at"`
	OnChainRecord string      `json:"on_chain_record"`
	Environment   Environment `json:"environment"`
}

// ExecutionPage is the answer of GET /v1/executions.
type ExecutionPage struct {
	Executions []ExecutionSummary `json:"executions"`
	Total      int                `json:"total"`
	Limit      int                `json:"limit"`
	Offset     int                `json:"offset"`
}

// Accepted is the immediate answer to an asynchronous execute.
type Accepted struct {
	ExecutionID string     `json:"execution_id"`
	Status      ExecStatus `json:"status"`
}

// DisputeInfo is a dispute as its parties and the operator read it.
type DisputeInfo struct {
	DisputeID    string          `json:"dispute_id"`
	ExecutionID  string          `json:"execution_id"`
	AgentID      string          `json:"agent_id"`
	Environment  Environment     `json:"environment"`
	Status       string          `json:"status"`
	Reason       string          `json:"reason"`
	Description  string          `json:"description"`
	Evidence     json.RawMessage `json:"evidence"`
	EvidenceHash string          `json:"evidence_hash"`
	OpenedAt     time.Time       `json:"opened_at"`
	RespondBy    time.Time       `json:"respond_by"`
	Response     *string         `json:"response"`
	RespondedAt  *time.Time      `json:"responded_at"`
	ResolvedAt   *time.Time      `json:"resolved_at"`
	Slashed      USDC            `json:"slashed_usdc"`
	Refunded     USDC            `json:"refunded_usdc"`
}

// DisputeList is the answer of the dispute lists.
type DisputeList struct {
	Disputes []DisputeInfo `json:"disputes"`
}
