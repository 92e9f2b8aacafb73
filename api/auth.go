package api

import (
	"time"
)

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
