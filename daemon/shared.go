package daemon

import (
	"crypto/ed25519"
	"fmt"
	"strconv"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/market"
)

// marketplaceKey names the marketplace's request-signing key among the
// shared settings: creators check every request against it, so no
// restart changes it but a rotation, to the next key (nextKey) that the
// replicas published first.
const (
	marketplaceKey = "marketplace.json"
	nextKey        = "marketplace.next.json"
)

// shared returns the settings cfg gives that every replica on one store
// must hold alike (market.Join), each under the flag or file that sets it.
// Per-replica settings (addresses, limits, connections, RPC providers) are
// not among them.
func shared(cfg Config, signer, next ed25519.PublicKey, chains map[crtx.Environment]crtx.Chain) market.Shared {
	s := market.Shared{
		marketplaceKey:              crtx.Address(signer),
		nextKey:                     "",
		"--public-url":              strings.TrimRight(cfg.PublicURL, "/"),
		"--platform-fee-bps":        strconv.Itoa(cfg.PlatformFeeBps),
		"--allow-private-endpoints": strconv.FormatBool(cfg.AllowPrivateEndpoints),
		"--airdrops-per-hour":       strconv.Itoa(cfg.AirdropsPerHour),
	}
	if next != nil {
		s[nextKey] = crtx.Address(next)
	}
	for _, env := range crtx.Environments {
		chain := "none"
		if c := chains[env]; c != nil {
			chain = fmt.Sprintf("mint %s, treasury %s", c.Mint(), c.Treasury())
			if env == crtx.Devnet && cfg.DevnetNetwork != "" {
				chain += ", network " + cfg.DevnetNetwork
			}
		}
		s[fmt.Sprintf("the %s chain (--solana-rpc-%s, --usdc-mint-%s, --treasury-keypair)", env, env, env)] = chain
	}
	return s
}
