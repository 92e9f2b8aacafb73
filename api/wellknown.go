package api

import (
	"crypto/ed25519"

	"github.com/crtx-market/crtx"
)

// WellKnown is the document at /.well-known/json: what creators need to
// check requests from this marketplace, and where x402 buyers find its
// agents.
type WellKnown struct {
	SigningPublicKey   string             `json:"signing_public_key"`
	AuthorityPublicKey string             `json:"ledger_authority_public_key"`
	PublicURL          string             `json:"public_url"`
	PlatformFeeBps     int                `json:"platform_fee_bps"`
	Environments       []crtx.Environment `json:"environments"`
	// X402DiscoveryURL lists every agent as an x402 resource, in the
	// Bazaar's format (GET /discovery/resources).
	X402DiscoveryURL string `json:"x402_discovery_url"`
}

// NewWellKnown is the document of a marketplace at publicURL, whose keys
// sign requests to creators and ledger blocks, and whose fee is feeBps.
func NewWellKnown(signing, authority ed25519.PublicKey, publicURL string, feeBps int) WellKnown {
	return WellKnown{SigningPublicKey: crtx.Address(signing), AuthorityPublicKey: crtx.Address(authority),
		PublicURL: publicURL, PlatformFeeBps: feeBps, Environments: crtx.Environments,
		X402DiscoveryURL: publicURL + "/discovery/resources"}
}
