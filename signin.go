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

// SignInChainID is the message's Chain ID, which CAIP-122 requires: the
// CAIP-2 id of what the session acts on. That is the marketplace's own
// ledger, not a Solana cluster, so it is not SIWS's short form ("mainnet",
// "devnet"), which wallets take for Solana's clusters and which has no
// CAIP-2 namespace. A session acts in both environments, mainnet and
// devnet, so it names neither: "crtx:mainnet" would tell the signer the
// session reaches mainnet only. Namespace "crtx", reference "marketplace":
// valid CAIP-2 ([-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}); the domain and URI
// lines say which marketplace.
const SignInChainID = "crtx:marketplace"

// ErrSignInMessage is wrapped by every parse failure.
var ErrSignInMessage = errors.New("malformed sign-in message")

// String is the exact text the wallet signs, with the fields in the order
// of @solana/wallet-standard-util's createSignInMessageText.
func (m SignInMessage) String() string {
	return fmt.Sprintf("%s wants you to sign in with your Solana account:\n%s\n\n%s\n\nURI: %s\nVersion: 1\nChain ID: %s\nNonce: %s\nIssued At: %s\nExpiration Time: %s",
		m.Domain, m.Wallet, signInStatement, m.URI, SignInChainID, m.Nonce,
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
	if len(lines) != 11 {
		return bad("expected 11 lines")
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
	// A field with a fixed value (dst nil) must have exactly that value.
	fields := []struct {
		name, want string
		dst        *string
	}{{"URI", "", &m.URI}, {"Version", "1", nil}, {"Chain ID", SignInChainID, nil}, {"Nonce", "", &m.Nonce}}
	for i, f := range fields {
		v, ok := strings.CutPrefix(lines[5+i], f.name+": ")
		if !ok || v == "" {
			return bad("missing " + f.name)
		}
		if f.dst == nil {
			if v != f.want {
				return bad(f.name + " must be " + f.want)
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
		v, ok := strings.CutPrefix(lines[9+i], f.name+": ")
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
