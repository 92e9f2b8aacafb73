package x402

import (
	"encoding/json"
	"regexp"

	"github.com/crtx-market/crtx"
)

// PaymentIdentifier is x402's payment-identifier extension
// (specs/extensions/payment_identifier.md): an id the client reuses on
// retries, which crtx treats as an Idempotency-Key.
const PaymentIdentifier = "payment-identifier"

var paymentIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{16,128}$`)

// paymentIdentifierDeclared is the extension as a PaymentRequired declares
// it: an id is welcome, not required.
func paymentIdentifierDeclared() map[string]any {
	return map[string]any{
		"info": map[string]any{"required": false},
		"schema": map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
			"properties": map[string]any{"required": map[string]any{"type": "boolean"},
				"id": map[string]any{"type": "string", "minLength": 16, "maxLength": 128}},
			"required": []string{"required"}},
	}
}

// PaymentID is the payment-identifier extension's id, if p carries one.
func (p PaymentPayload) PaymentID() (string, error) {
	ext, ok := p.Extensions[PaymentIdentifier]
	if !ok {
		return "", nil
	}
	var v struct {
		Info struct {
			ID string `json:"id"`
		} `json:"info"`
	}
	if err := json.Unmarshal(ext, &v); err != nil {
		return "", crtx.InvalidField(HeaderPaymentSignature, "extensions.payment-identifier: %v", err)
	}
	if v.Info.ID != "" && !paymentIDPattern.MatchString(v.Info.ID) {
		return "", crtx.InvalidField(HeaderPaymentSignature, "extensions.payment-identifier.info.id: 16 to 128 letters, digits, '-' or '_'")
	}
	return v.Info.ID, nil
}
