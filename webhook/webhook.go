// Package webhook is the Standard Webhooks signing scheme
// (standardwebhooks.com) as crtx signs its deliveries: the headers, and
// signatures over "id.timestamp.body" that the usual libraries (svix,
// standardwebhooks) verify. Which secrets sign a delivery, and when, is
// the domain's (crtx.WebhookSecret).
package webhook

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
)

// The scheme's headers: the delivery's id, its Unix time, and its
// signatures, space-separated.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// Signature signs a webhook for the scheme's asymmetric form with an
// Ed25519 key: "v1a," and the base64 signature of "id.timestamp.body".
func Signature(key ed25519.PrivateKey, id, timestamp string, body []byte) string {
	msg := append([]byte(id+"."+timestamp+"."), body...)
	return "v1a," + base64.StdEncoding.EncodeToString(ed25519.Sign(key, msg))
}

// HMAC signs a webhook for the scheme's symmetric form: "v1," and the
// base64 HMAC-SHA256 of "id.timestamp.body".
func HMAC(key []byte, id, timestamp string, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + timestamp + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
