package crtx

import (
	"crypto/ed25519"
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

// WebhookSignature signs a webhook for the Standard Webhooks scheme with an
// Ed25519 key: "v1a," and the base64 signature of "id.timestamp.body".
func WebhookSignature(key ed25519.PrivateKey, id, timestamp string, body []byte) string {
	msg := append([]byte(id+"."+timestamp+"."), body...)
	return "v1a," + base64.StdEncoding.EncodeToString(ed25519.Sign(key, msg))
}
