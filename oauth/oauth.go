// Package oauth is the OAuth 2.1 wire format of an authorization server
// for MCP (the MCP authorization spec): its metadata documents (RFC 8414,
// RFC 9728), client registration (RFC 7591) and Client ID Metadata
// Documents, PKCE (RFC 7636), the token answer and its errors (RFC 6749).
// Who may have a token, and for what, is the market's.
package oauth

import (
	"fmt"
	"strings"
)

// The scopes offered.
const (
	// Scope is the one scope: call the marketplace as the key's wallet.
	Scope = "mcp"
	// OfflineAccess is asked for by clients that want a refresh token;
	// one is given either way.
	OfflineAccess = "offline_access"
)

// Error is an OAuth refusal in the protocol's own words (RFC 6749
// §5.2, RFC 7591 §3.2.2, RFC 8707 §2): Code is the "error" member.
type Error struct {
	Code        string
	Description string
}

func (e *Error) Error() string { return e.Code + ": " + e.Description }

// Errorf makes an Error.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Description: fmt.Sprintf(format, args...)}
}

// OAuth error codes.
const (
	InvalidRequest        = "invalid_request"
	InvalidClient         = "invalid_client"
	InvalidGrant          = "invalid_grant"
	UnsupportedGrantType  = "unsupported_grant_type"
	UnsupportedResponse   = "unsupported_response_type"
	InvalidScope          = "invalid_scope"
	InvalidTarget         = "invalid_target"
	AccessDenied          = "access_denied"
	InvalidRedirectURI    = "invalid_redirect_uri"
	InvalidClientMetadata = "invalid_client_metadata"
)

// CheckScope accepts a requested scope made of Scope and
// OfflineAccess (empty asks for Scope).
func CheckScope(scope string) error {
	for _, s := range strings.Fields(scope) {
		if s != Scope && s != OfflineAccess {
			return Errorf(InvalidScope, "scope %q is not offered; ask for %q (and %q for a refresh token)", s, Scope, OfflineAccess)
		}
	}
	return nil
}
