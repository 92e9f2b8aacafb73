package crtx

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

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
	case TxListingUpdated:
		return []string{"agent_id", "creator", "signing_public_key"}
	}
	return nil
}

// ListingStatement returns the listing statement of a listing transaction
// that registers a signing key: the bytes the creator's wallet signs, as
// creator_signature, to authorise the key (docs/creators.md, "The listing
// statement"). kind is TxAgentListed or TxListingUpdated and data is the
// transaction's data, as the ledger serves it or as it will be written: the
// statement is the RFC 8785 canonical JSON of the members it names, all
// strings, plus "kind". So anyone can check a listing transaction from
// public ledger data alone:
//
//	stmt, err := crtx.ListingStatement(tx.Kind, tx.Data)
//	ok := err == nil && crtx.VerifyBase58(creatorKey, stmt, tx.Data["creator_signature"])
//
// price_per_call_usdc must be written as USDC.String writes it ("0.05",
// "1"), which is also what JavaScript's Number#toString gives: a statement
// signs one spelling of the price, not a number.
func ListingStatement(kind TxKind, data map[string]string) ([]byte, error) {
	members := statementMembers(kind)
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
	if p, ok := stmt["price_per_call_usdc"]; ok {
		if u, err := ParseUSDC(p); err != nil || u.String() != p {
			return nil, fmt.Errorf("%w: price_per_call_usdc %q is not an amount as USDC.String writes it", ErrListingStatement, p)
		}
	}
	b, err := Canonical(stmt)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrListingStatement, err)
	}
	return b, nil
}
