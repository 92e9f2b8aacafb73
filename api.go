package crtx

import "time"

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
