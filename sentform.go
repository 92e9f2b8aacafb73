package crtx

import "time"

// SentForm is a form of the marketplace's pages as it was received: its
// one-time token, so that a replay (a reload, Back, a double click) does
// not act again, and what the first sending led to, which a replay is shown.
type SentForm struct {
	// Owner is the wallet whose session sent it, or OperatorOwner.
	Owner  string
	Token  string
	SentAt time.Time
	// Outcome is what the page it lands on shows, as JSON; nil while the
	// form's action runs.
	Outcome []byte
}

// OperatorOwner owns the forms of the operator's pages, which no wallet sends.
const OperatorOwner = "operator"
