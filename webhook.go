package crtx

import (
	"crypto/rand"
	"encoding/base64"
	"time"
)

// Webhook is the delivery of an execution's final record to its webhook_url.
type Webhook struct {
	ExecutionID string
	URL         string
	Attempts    int
	NextAt      time.Time
	DeliveredAt *time.Time
	LastError   string
	CreatedAt   time.Time
}

// WebhookWindow is how long a delivery is retried (CONTRACT §8).
const WebhookWindow = 24 * time.Hour

// WebhookSecret is a wallet's symmetric webhook signing secret in one
// environment, for the Standard Webhooks "v1" scheme the usual libraries
// verify (package webhook signs with it). One per environment, so that a
// devnet key, which reads its environment's secret, cannot sign a mainnet
// delivery. After a rotation the previous
// secret signs too, for WebhookSecretOverlap, so that receivers can switch
// without losing a delivery; a second rotation within it ends that
// overlap (the secret two rotations back signs no more).
type WebhookSecret struct {
	Wallet        string
	Environment   Environment
	Key           []byte
	Previous      []byte // nil before the first rotation
	PreviousUntil time.Time
	RotatedAt     time.Time
}

// WebhookSecretOverlap is how long a rotated-out secret still signs.
const WebhookSecretOverlap = 24 * time.Hour

// webhookSecretBytes is the length of a secret (Standard Webhooks asks for
// 24 to 64 bytes).
const webhookSecretBytes = 32

// NewWebhookSecret is a wallet's first secret in env.
func NewWebhookSecret(wallet string, env Environment, now time.Time) WebhookSecret {
	return WebhookSecret{Wallet: wallet, Environment: env, Key: randomBytes(webhookSecretBytes), RotatedAt: now}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b) // never returns an error (crypto/rand, Go ≥ 1.24)
	return b
}

// Rotate replaces the secret with a new one; the old one signs on until
// now plus WebhookSecretOverlap.
func (s WebhookSecret) Rotate(now time.Time) WebhookSecret {
	s.Previous, s.PreviousUntil = s.Key, now.Add(WebhookSecretOverlap)
	s.Key, s.RotatedAt = randomBytes(webhookSecretBytes), now
	return s
}

// String is the secret as receivers configure it: "whsec_" and base64.
func (s WebhookSecret) String() string {
	return "whsec_" + base64.StdEncoding.EncodeToString(s.Key)
}

// Signing is the keys that sign a delivery at now: the secret, and the one
// it replaced while that still overlaps.
func (s WebhookSecret) Signing(now time.Time) [][]byte {
	keys := [][]byte{s.Key}
	if s.Previous != nil && now.Before(s.PreviousUntil) {
		keys = append(keys, s.Previous)
	}
	return keys
}
