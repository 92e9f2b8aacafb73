package api

import (
	"time"

	"github.com/crtx-market/crtx"
)

// CreatedKey is the answer of POST /v1/keys: the only time Key is shown.
type CreatedKey struct {
	ID          string           `json:"id"`
	Name        string           `json:"name"`
	Environment crtx.Environment `json:"environment"`
	Key         string           `json:"key"`
	Prefix      string           `json:"prefix"`
	CreatedAt   time.Time        `json:"created_at"`
	SpendLimit  *crtx.USDC       `json:"spend_limit_usdc"`
}

// KeyList is the answer of GET /v1/keys.
type KeyList struct {
	Keys []crtx.APIKey `json:"keys"`
}

// CreateKeyRequest is the body of POST /v1/keys.
type CreateKeyRequest struct {
	Name        string           `json:"name"`
	Environment crtx.Environment `json:"environment"`
	SpendLimit  *crtx.USDC       `json:"spend_limit_usdc,omitempty"`
}
