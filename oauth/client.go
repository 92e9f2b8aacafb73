package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxRedirectURIs bounds a registration.
const MaxRedirectURIs = 10

// ClientMetadata is what a client says of itself: the body of a dynamic
// registration (RFC 7591 §2) or a Client ID Metadata Document. Members
// this server has no use for are ignored.
type ClientMetadata struct {
	ClientID                string   `json:"client_id,omitempty"`
	ClientName              string   `json:"client_name,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types,omitempty"`
	ResponseTypes           []string `json:"response_types,omitempty"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method,omitempty"`
	ClientURI               string   `json:"client_uri,omitempty"`
	Scope                   string   `json:"scope,omitempty"`
}

// ErrClientMetadata is wrapped by every refusal of client metadata; the
// message says which member and why.
var ErrClientMetadata = errors.New("invalid client metadata")

// ErrRedirectURI is wrapped when a redirect URI is refused (RFC 7591's
// invalid_redirect_uri).
var ErrRedirectURI = errors.New("invalid redirect_uri")

// ParseClientMetadata reads and checks client metadata. Clients are public
// (PKCE proves the code's requester): a client that asks to authenticate
// at the token endpoint with a secret is registered as public all the
// same, which RFC 7591 §3.2.1 lets a server answer, and grant and response
// types this server does not offer are left out rather than refused.
func ParseClientMetadata(body []byte) (ClientMetadata, error) {
	var m ClientMetadata
	if err := json.Unmarshal(body, &m); err != nil {
		return m, fmt.Errorf("%w: the body is not a JSON object of client metadata", ErrClientMetadata)
	}
	if utf8.RuneCountInString(m.ClientName) > 100 || !displayable(m.ClientName) {
		return m, fmt.Errorf("%w: client_name must be at most 100 characters, none of them control or format characters", ErrClientMetadata)
	}
	if len(m.RedirectURIs) == 0 || len(m.RedirectURIs) > MaxRedirectURIs {
		return m, fmt.Errorf("%w: give 1 to %d redirect_uris", ErrRedirectURI, MaxRedirectURIs)
	}
	for _, u := range m.RedirectURIs {
		if err := CheckRedirectURI(u); err != nil {
			return m, err
		}
	}
	m.GrantTypes = slices.DeleteFunc(m.GrantTypes, func(g string) bool { return g != "authorization_code" && g != "refresh_token" })
	m.ResponseTypes = slices.DeleteFunc(m.ResponseTypes, func(r string) bool { return r != "code" })
	m.TokenEndpointAuthMethod = "none"
	return m, nil
}

// displayable says a name shows as what it spells: no control characters,
// and no format characters (bidirectional overrides) that would make a
// consent page show another name than the one registered.
func displayable(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.Cc, unicode.Cf) {
			return false
		}
	}
	return true
}

// CheckRedirectURI accepts an absolute https URL on a host name or
// address, an http URL on a loopback address (a native app's, RFC 8252
// §7.3), or an app's own scheme (RFC 8252 §7.1: cursor://…, claude://…,
// com.example.app:/cb); never a fragment (RFC 6749 §3.1.2). Plain http
// elsewhere would carry the code in clear, and the schemes a browser runs
// or reads itself (javascript:, data:, file: …) are no app's.
func CheckRedirectURI(raw string) error {
	bad := func(why string) error { return fmt.Errorf("%w: %q %s", ErrRedirectURI, raw, why) }
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || len(raw) > 2000 {
		return bad("is not an absolute URL")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return bad("must not have a fragment")
	}
	if u.User != nil {
		return bad("must not carry a user name or password")
	}
	switch u.Scheme {
	case "https":
		if !hostName(u.Hostname()) {
			return bad("must name a host")
		}
	case "http":
		if !loopback(u.Hostname()) {
			return bad("must use https (plain http only on a loopback address)")
		}
	case "javascript", "data", "file", "vbscript", "blob", "about", "filesystem", "ftp", "ws", "wss", "mailto", "tel", "sms":
		return bad("must be https, loopback http or an app's own scheme")
	}
	return nil
}

// hostName says h is an IP address or a DNS name of letters, digits and
// hyphens.
func hostName(h string) bool {
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if label == "" || len(label) > 63 || strings.Trim(label, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") != "" {
			return false
		}
	}
	return true
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// RedirectAllowed says whether uri is one of registered. Loopback URIs
// match on any port, as RFC 8252 §7.3 asks: a native app listens wherever
// the system lets it.
func RedirectAllowed(registered []string, uri string) bool {
	if slices.Contains(registered, uri) {
		return true
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "http" || !loopback(u.Hostname()) {
		return false
	}
	for _, r := range registered {
		ru, err := url.Parse(r)
		if err == nil && ru.Scheme == "http" && ru.Hostname() == u.Hostname() && ru.Path == u.Path && ru.RawQuery == u.RawQuery {
			return true
		}
	}
	return false
}

// ClientIDIsURL says client_id names a Client ID Metadata Document: a URL
// with a path (the document's own address). It is fetched as creators'
// endpoints are, so only https unless the marketplace allows private
// endpoints (development and tests).
func ClientIDIsURL(clientID string) bool {
	u, err := url.Parse(clientID)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.Path != "" && u.Path != "/" && u.Fragment == "" && u.User == nil
}
