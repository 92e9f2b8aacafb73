package api

import (
	"crypto/ed25519"

	"github.com/crtx-market/crtx"
)

// WellKnown is the document at /.well-known/json: what creators need to
// check requests from this marketplace, and where x402 buyers find its
// agents.
type WellKnown struct {
	SigningPublicKey string `json:"signing_public_key"`
	// NextSigningPublicKey, during a rotation of the marketplace key, is
	// the key that will sign requests next: a creator accepts both until
	// the switch (docs/deploy.md, "Rotating secrets").
	NextSigningPublicKey string `json:"next_signing_public_key,omitempty"`
	// PreviousSigningPublicKey, for a while after the switch, is the key
	// that signed before it, which replicas not switched yet still sign
	// with: a creator accepts it too until it is gone from here.
	PreviousSigningPublicKey string             `json:"previous_signing_public_key,omitempty"`
	AuthorityPublicKey       string             `json:"ledger_authority_public_key"`
	PublicURL                string             `json:"public_url"`
	PlatformFeeBps           int                `json:"platform_fee_bps"`
	Environments             []crtx.Environment `json:"environments"`
	// X402DiscoveryURL lists every agent as an x402 resource, in the
	// Bazaar's format (GET /discovery/resources).
	X402DiscoveryURL string `json:"x402_discovery_url"`
}

// NewWellKnown is the document of a marketplace at publicURL, whose keys
// sign requests to creators (and will next, or did before, when next or
// previous is set) and ledger blocks, and whose fee is feeBps.
func NewWellKnown(signing, next, previous, authority ed25519.PublicKey, publicURL string, feeBps int) WellKnown {
	wk := WellKnown{SigningPublicKey: crtx.Address(signing), AuthorityPublicKey: crtx.Address(authority),
		PublicURL: publicURL, PlatformFeeBps: feeBps, Environments: crtx.Environments,
		X402DiscoveryURL: publicURL + "/discovery/resources"}
	if next != nil {
		wk.NextSigningPublicKey = crtx.Address(next)
	}
	if previous != nil {
		wk.PreviousSigningPublicKey = crtx.Address(previous)
	}
	return wk
}
