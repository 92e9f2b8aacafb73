package api

import (
	"encoding/json"
	"time"

	"github.com/crtx-market/crtx"
)

// WebhookEvent is the body of a webhook delivery, in the Standard Webhooks
// shape: a thin event that names the final execution — its record without
// the result, which is at ipfs_url under result_hash (a private one's in
// GET /v1/executions/{execution_id}) — so that a delivery
// weighs about a kilobyte whatever the result.
type WebhookEvent struct {
	Type      string      `json:"type"` // execution.completed or execution.failed
	Timestamp time.Time   `json:"timestamp"`
	Data      WebhookData `json:"data"`
}

// WebhookBody makes the body of a webhook delivery: the event of e, a
// final execution, sent at now, its record's addresses l's.
func WebhookBody(l crtx.Links) func(e crtx.Execution, now time.Time) ([]byte, error) {
	return func(e crtx.Execution, now time.Time) ([]byte, error) {
		return json.Marshal(WebhookEvent{Type: "execution." + string(e.Status), Timestamp: now,
			Data: WebhookData{ExecutionRecord: NewExecutionRecord(e, "", l)}})
	}
}

// WebhookData is an execution record without its result: the field of the
// same name here hides the record's, and is never set.
type WebhookData struct {
	ExecutionRecord
	Result *string `json:"result,omitempty"`
}

// WebhookSecretResponse is a wallet's webhook signing secret, as
// Replicate's GET /v1/webhooks/default/secret answers it.
type WebhookSecretResponse struct {
	Key string `json:"key"` // whsec_ and the base64 secret
}
