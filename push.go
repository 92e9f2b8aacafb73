package crtx

import (
	"strings"
	"time"
	"unicode"
)

// PushConfig is an A2A push-notification config of one task (an
// execution): where to POST the task once it has ended. The row is also
// its delivery's work item, claimed and retried like a webhook.
type PushConfig struct {
	TaskID string
	ID     string
	// Wallet owns the task; its webhook secret signs the delivery.
	Wallet string
	URL    string
	// Token is sent back as A2A-Notification-Token, for the receiver to
	// tell its own notifications.
	Token string
	// AuthScheme (Bearer or Basic) and AuthCredentials make the delivery's
	// Authorization header.
	AuthScheme, AuthCredentials string
	CreatedAt                   time.Time
	Attempts                    int
	NextAt                      time.Time
	DeliveredAt                 *time.Time
	LastError                   string
}

// Push-config bounds: configs per task, and the size of what a client
// gives to be sent back.
const (
	MaxPushConfigs     = 10
	MaxPushSecretLen   = 1024
	MaxPushConfigIDLen = 100
)

// CheckPushConfig checks what a client sets in a push config, field by
// field, so that every config accepted can be delivered: each goes into a
// header (the id into webhook-id), so none holds a control character, and
// the id is of the characters a URL path keeps as they are. The URL is
// checked by the Caller, as a webhook's is.
func CheckPushConfig(p PushConfig) error {
	switch {
	case len(p.ID) > MaxPushConfigIDLen || strings.Trim(p.ID, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~") != "":
		return InvalidField("id", "must be at most %d letters, digits and -._~", MaxPushConfigIDLen)
	case len(p.Token) > MaxPushSecretLen || !headerText(p.Token):
		return InvalidField("token", "must be at most %d bytes of text without control characters", MaxPushSecretLen)
	case len(p.AuthCredentials) > MaxPushSecretLen || !headerText(p.AuthCredentials):
		return InvalidField("authentication.credentials", "must be at most %d bytes of text without control characters", MaxPushSecretLen)
	case p.AuthScheme != "" && !strings.EqualFold(p.AuthScheme, "Bearer") && !strings.EqualFold(p.AuthScheme, "Basic"):
		return InvalidField("authentication.scheme", "must be Bearer or Basic")
	case p.AuthCredentials != "" && p.AuthScheme == "":
		return InvalidField("authentication.scheme", "is needed with credentials: Bearer or Basic")
	}
	return nil
}

// headerText says s can be a header's value: text without control
// characters.
func headerText(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return IsText(s)
}
