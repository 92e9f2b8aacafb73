package market

import (
	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// WellKnown is what /.well-known/crtx.json publishes: the keys a caller
// verifies executions with, and where the marketplace is.
func (m *Market) WellKnown() api.WellKnown {
	return api.WellKnown{
		SigningPublicKey:   crtx.Address(m.SigningPublicKey()),
		AuthorityPublicKey: crtx.Address(m.AuthorityPublicKey()),
		PublicURL:          m.cfg.PublicURL, PlatformFeeBps: m.cfg.FeeBps, Environments: crtx.Environments,
		X402DiscoveryURL: m.cfg.PublicURL + "/discovery/resources",
	}
}
