package crtx

import (
	"strings"
	"time"
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
// field; the URL is checked by the Caller, as a webhook's is.
func CheckPushConfig(p PushConfig) error {
	switch {
	case len(p.ID) > MaxPushConfigIDLen || !IsText(p.ID):
		return InvalidField("id", "must be text of at most %d bytes", MaxPushConfigIDLen)
	case len(p.Token) > MaxPushSecretLen || !IsText(p.Token) || strings.ContainsAny(p.Token, "\r\n"):
		return InvalidField("token", "must be one line of at most %d bytes", MaxPushSecretLen)
	case len(p.AuthCredentials) > MaxPushSecretLen || !IsText(p.AuthCredentials) || strings.ContainsAny(p.AuthCredentials, "\r\n"):
		return InvalidField("authentication.credentials", "must be one line of at most %d bytes", MaxPushSecretLen)
	case p.AuthCredentials != "" && !strings.EqualFold(p.AuthScheme, "Bearer") && !strings.EqualFold(p.AuthScheme, "Basic"):
		return InvalidField("authentication.scheme", "must be Bearer or Basic")
	}
	return nil
}
