package crtx

import (
	"strings"
	"time"
)

// Token prefixes. An API key's prefix fixes its environment (seed
// "Authentication"); session tokens act for a wallet in the dashboards.
const (
	LiveKeyPrefix = "crtx_live_"
	TestKeyPrefix = "crtx_test_"
	SessionPrefix = "crtx_sess_"
	// OperatorPrefix starts an operator's dashboard session, which the
	// operator's cookie holds instead of the admin token itself.
	OperatorPrefix     = "crtx_op_"
	OperatorSessionTTL = 8 * time.Hour
	SecretLen          = 32
	SessionTTL         = 24 * time.Hour
	ChallengeTTL       = 5 * time.Minute
	KeyTouchPeriod     = time.Minute
)

// Nonce is a one-time sign-in challenge.
type Nonce struct {
	Nonce     string
	Wallet    string
	ExpiresAt time.Time
}

// Session lets a wallet manage keys, funds and listings. Only the hash of
// its token is stored.
type Session struct {
	Hash      string
	Wallet    string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// APIKey is a caller's credential for one environment (CONTRACT §4). Only the
// hash of the secret is stored; the secret is shown once, at creation.
type APIKey struct {
	ID             string      `json:"id"`
	Name           string      `json:"name"`
	Environment    Environment `json:"environment"`
	Prefix         string      `json:"prefix"`
	CreatedAt      time.Time   `json:"created_at"`
	LastUsedAt     *time.Time  `json:"last_used_at"`
	ExecutionCount int64       `json:"execution_count"`
	TotalSpent     USDC        `json:"total_spent_usdc"`
	SpendLimit     *USDC       `json:"spend_limit_usdc"`
	RevokedAt      *time.Time  `json:"revoked_at"`
	// Client is the OAuth client_id of the MCP connector the key was made
	// for when its person consented; empty for a key made by hand.
	Client string `json:"oauth_client_id,omitempty"`
	Wallet string `json:"-"`
	Hash   string `json:"-"`
	// ExpiresAt ends a connector's access token (the key's secret, until a
	// refresh replaces it); nil for a key made by hand.
	ExpiresAt *time.Time `json:"-"`
	// RefreshHash is the hash of a connector's refresh token.
	RefreshHash string `json:"-"`
}

// Principal is who a request acts for: a wallet through a session, or a
// wallet in one environment through an API key.
type Principal struct {
	Wallet string
	// Key is set when the credential was an API key.
	Key *APIKey
	// Signed is the environment a sign-in-with-x proof named (the chain
	// the wallet paid on); it reads that environment's executions.
	Signed Environment
}

// Environment of an API key principal, or of a sign-in-with-x proof;
// empty for a session.
func (p Principal) Environment() Environment {
	if p.Key == nil {
		return p.Signed
	}
	return p.Key.Environment
}

// Connector is the key's id when the request acts through an MCP
// connector's key, which reaches only the executions it made itself;
// empty otherwise. A connector is someone else's service acting for the
// wallet: another connector's calls, or the person's own, are not its to
// read.
func (p Principal) Connector() string {
	if p.Key == nil || p.Key.Client == "" {
		return ""
	}
	return p.Key.ID
}

// NewKeySecret returns a fresh API key for env: its prefix and 32 base62 characters.
func NewKeySecret(env Environment) string {
	if env == Mainnet {
		return LiveKeyPrefix + RandomBase62(SecretLen)
	}
	return TestKeyPrefix + RandomBase62(SecretLen)
}

// KeyEnvironment checks an API key's shape and returns its environment.
func KeyEnvironment(key string) (Environment, bool) {
	var env Environment
	var rest string
	switch {
	case strings.HasPrefix(key, LiveKeyPrefix):
		env, rest = Mainnet, key[len(LiveKeyPrefix):]
	case strings.HasPrefix(key, TestKeyPrefix):
		env, rest = Devnet, key[len(TestKeyPrefix):]
	default:
		return "", false
	}
	return env, len(rest) == SecretLen && isBase62(rest)
}
