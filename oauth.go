package crtx

import "time"

// OAuth (its wire format is package oauth's): crtx is the authorization
// server of its own MCP endpoint, so that an MCP host adds it as a
// connector (the MCP authorization spec). What a connector is given is an
// API key like any other (APIKey.Client names the client), made when its
// person consents; its secret is the access token and is replaced at each
// refresh.
const (
	RefreshPrefix  = "crtx_rt_"
	OAuthCodeTTL   = 5 * time.Minute
	AccessTokenTTL = time.Hour
	// UnusedClientTTL is how long a registered client that never completed
	// an authorization is kept.
	UnusedClientTTL = 24 * time.Hour
)

// OAuthClient is a client registered dynamically (RFC 7591), or read from
// its Client ID Metadata Document (then ID is the document's https URL).
type OAuthClient struct {
	ID           string
	Name         string
	RedirectURIs []string
	CreatedAt    time.Time
	// UsedAt is when it first obtained a token; nil, it expires at
	// CreatedAt+UnusedClientTTL.
	UsedAt *time.Time
}

// Expired says an unused registration has lapsed at now.
func (c OAuthClient) Expired(now time.Time) bool {
	return c.UsedAt == nil && !now.Before(c.CreatedAt.Add(UnusedClientTTL))
}

// OAuthCode is an authorization code waiting to be exchanged, with what the
// person consented to. Only the hash of the code is stored.
type OAuthCode struct {
	Hash        string
	ClientID    string
	ClientName  string
	RedirectURI string
	// Challenge is the PKCE S256 code challenge.
	Challenge   string
	Wallet      string
	Environment Environment
	SpendLimit  *USDC
	ExpiresAt   time.Time
	// Spent is set once the code was presented: to the id of the key it
	// gave, or to "" when it gave none (a failed exchange). A code
	// presented again revokes the key it gave (RFC 6749 §4.1.2). SpentAt
	// is when.
	Spent   *string
	SpentAt *time.Time
}
