package crtx

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// SignInMessage is the plain-text message a wallet signs to start a session,
// in the Sign-In-With-Solana layout (CAIP-122) that wallets display readably.
type SignInMessage struct {
	Domain         string
	Wallet         string
	URI            string
	Nonce          string
	IssuedAt       time.Time
	ExpirationTime time.Time
}

const signInStatement = "Sign in to the crtx marketplace."

// ErrSignInMessage is wrapped by every parse failure.
var ErrSignInMessage = errors.New("malformed sign-in message")

// String is the exact text the wallet signs.
func (m SignInMessage) String() string {
	return fmt.Sprintf("%s wants you to sign in with your Solana account:\n%s\n\n%s\n\nURI: %s\nVersion: 1\nNonce: %s\nIssued At: %s\nExpiration Time: %s",
		m.Domain, m.Wallet, signInStatement, m.URI, m.Nonce,
		m.IssuedAt.UTC().Format(time.RFC3339), m.ExpirationTime.UTC().Format(time.RFC3339))
}

// ParseSignInMessage reads a message written by String. It accepts exactly
// that layout, so what was parsed prints back to the same bytes.
func ParseSignInMessage(text string) (SignInMessage, error) {
	var m SignInMessage
	bad := func(why string) (SignInMessage, error) {
		return SignInMessage{}, fmt.Errorf("%w: %s", ErrSignInMessage, why)
	}
	lines := strings.Split(text, "\n")
	if len(lines) != 10 {
		return bad("expected 10 lines")
	}
	domain, ok := strings.CutSuffix(lines[0], " wants you to sign in with your Solana account:")
	if !ok || domain == "" || strings.ContainsAny(domain, " \r\t") {
		return bad("first line must name the domain")
	}
	m.Domain = domain
	m.Wallet = lines[1]
	if lines[2] != "" || lines[3] != signInStatement || lines[4] != "" {
		return bad("unexpected statement")
	}
	fields := []struct {
		name string
		dst  *string
	}{{"URI", &m.URI}, {"Version", nil}, {"Nonce", &m.Nonce}}
	for i, f := range fields {
		v, ok := strings.CutPrefix(lines[5+i], f.name+": ")
		if !ok || v == "" {
			return bad("missing " + f.name)
		}
		if f.dst == nil {
			if v != "1" {
				return bad("unsupported version")
			}
			continue
		}
		*f.dst = v
	}
	if len(m.Nonce) < 8 || !isBase62(m.Nonce) {
		return bad("nonce must be at least 8 alphanumeric characters")
	}
	times := []struct {
		name string
		dst  *time.Time
	}{{"Issued At", &m.IssuedAt}, {"Expiration Time", &m.ExpirationTime}}
	for i, f := range times {
		v, ok := strings.CutPrefix(lines[8+i], f.name+": ")
		if !ok {
			return bad("missing " + f.name)
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil || t.Format(time.RFC3339) != v || t.Location() != time.UTC {
			return bad(f.name + " must be an RFC 3339 UTC time")
		}
		*f.dst = t
	}
	return m, nil
}
