package crtx

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// A listing nonce is issued by the marketplace to a creator's wallet for one
// listing statement: it is written into the statement both signatures
// cover and used up with the transaction that carries them, so that a
// statement read from the ledger never registers a key again.
const (
	ListingNoncePrefix = "lst_"
	ListingNonceTTL    = time.Hour
)

// ListingNonce is a one-time nonce for the listing statement of one
// listing or key change, and the marketplace the statement names: the host
// of its public URL.
type ListingNonce struct {
	Nonce       string
	ExpiresAt   time.Time
	Marketplace string
}

// IsListingNonce reports whether s has the form of a listing nonce, so that
// no sign-in nonce (base62, no prefix) is ever taken for one.
func IsListingNonce(s string) bool {
	return strings.HasPrefix(s, ListingNoncePrefix) && len(s) <= 64 && isBase62(strings.TrimPrefix(s, ListingNoncePrefix)) && len(s) > len(ListingNoncePrefix)
}

// ErrListingStatement is wrapped by every failure of ListingStatement.
var ErrListingStatement = errors.New("no listing statement")

// statementMembers are, for each kind of listing transaction that registers
// a signing key, the members of its data that the creator signs; nil for any
// other kind. An AgentListed leaves agent_id out: the creator signs before
// the marketplace names the agent. A ListingUpdated signs only the key and
// whose agent it is for: the rest of the listing may change without the
// wallet.
func statementMembers(kind TxKind) []string {
	switch kind {
	case TxAgentListed:
		return []string{"creator", "name", "price_per_call_usdc", "signing_public_key"}
	case TxAgentListed + "+" + PricingMetered:
		// A metered listing's prices are all signed; a listing priced
		// per call has the statement it always had.
		return []string{"creator", "name", "price_per_call_usdc", "signing_public_key",
			"pricing_model", "price_per_1k_tokens_usdc", "max_price_per_call_usdc"}
	case TxListingUpdated:
		return []string{"agent_id", "creator", "signing_public_key"}
	}
	return nil
}

// boundMembers are the members that bind a statement of kind to one
// marketplace and, for a key change, to the key it replaces: in the
// statement when the data has them, as listing_nonce.
func boundMembers(kind TxKind) []string {
	if kind == TxListingUpdated {
		return []string{"marketplace", "replaces"}
	}
	return []string{"marketplace"}
}

// ListingStatement returns the listing statement of a listing transaction
// that registers a signing key: the bytes the creator's wallet signs, as
// creator_signature, to authorise the key (docs/creators.md, "The listing
// statement"). kind is TxAgentListed or TxListingUpdated and data is the
// transaction's data, as the ledger serves it or as it will be written: the
// statement is the RFC 8785 canonical JSON of the members it names, all
// strings, plus "kind", plus "listing_nonce", "marketplace" and, for a
// ListingUpdated, "replaces" when data has them (every transaction written
// since each was required; older ones have none and are checked as they
// were signed). marketplace is the host of the marketplace's public URL, so
// that a signature made for one marketplace is refused by another;
// replaces is the id of the transaction that registered the key the change
// replaces, so that a key change is bound to the listing as it stood. So
// anyone can check a listing transaction from public ledger data alone:
//
//	stmt, err := crtx.ListingStatement(tx.Kind, tx.Data)
//	ok := err == nil && crtx.VerifyBase58(creatorKey, stmt, tx.Data["creator_signature"])
//
// A metered listing's statement (data's pricing_model is "metered") also
// signs pricing_model, price_per_1k_tokens_usdc and max_price_per_call_usdc.
// Prices must be written as USDC.String writes them ("0.05", "1"), which is
// also what JavaScript's Number#toString gives: a statement signs one
// spelling of a price, not a number.
func ListingStatement(kind TxKind, data map[string]string) ([]byte, error) {
	members := statementMembers(kind)
	if kind == TxAgentListed && data["pricing_model"] == PricingMetered {
		members = statementMembers(TxAgentListed + "+" + PricingMetered)
	}
	if members == nil {
		return nil, fmt.Errorf("%w: a %s transaction registers no signing key", ErrListingStatement, kind)
	}
	stmt := map[string]string{"kind": string(kind)}
	for _, m := range members {
		v := data[m]
		if v == "" {
			return nil, fmt.Errorf("%w: %s is missing", ErrListingStatement, m)
		}
		// encoding/json would replace invalid UTF-8 with U+FFFD, and the
		// signature would then be over other text than the data's.
		if !utf8.ValidString(v) {
			return nil, fmt.Errorf("%w: %s is not UTF-8", ErrListingStatement, m)
		}
		stmt[m] = v
	}
	if n, ok := data["listing_nonce"]; ok {
		if !IsListingNonce(n) {
			return nil, fmt.Errorf("%w: listing_nonce %q is not a listing nonce", ErrListingStatement, n)
		}
		stmt["listing_nonce"] = n
	}
	for _, m := range boundMembers(kind) {
		v, ok := data[m]
		if !ok {
			continue
		}
		if v == "" || len(v) > 255 || !utf8.ValidString(v) || strings.ContainsAny(v, " \t\r\n/") {
			return nil, fmt.Errorf("%w: %s %q is not a host or transaction id", ErrListingStatement, m, v)
		}
		stmt[m] = v
	}
	for _, m := range []string{"price_per_call_usdc", "price_per_1k_tokens_usdc", "max_price_per_call_usdc"} {
		p, ok := stmt[m]
		if u, err := ParseUSDC(p); ok && (err != nil || u.String() != p) {
			return nil, fmt.Errorf("%w: %s %q is not an amount as USDC.String writes it", ErrListingStatement, m, p)
		}
	}
	b, err := Canonical(stmt)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrListingStatement, err)
	}
	return b, nil
}
