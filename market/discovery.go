package market

import (
	"context"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/x402"
)

// x402's discovery list (x402-specification-v2.md §8, "Bazaars"): every
// active agent as an x402 resource, its execute URL, which anyone pays per
// call with x402 where an environment has a chain (docs/discovery.md).

// DiscoveryFilter is what Bazaar clients filter a list by besides a page
// (@x402/extensions' ListDiscoveryResourcesParams): the resource type, the
// network, scheme and recipient of a way to pay, and an extension each
// resource declares. Empty fields filter nothing. Every agent is an HTTP
// resource paid the same ways, at its own price, and declares the same
// extension: each filter keeps every agent or none, and narrows the accepts
// to the ways it names, so a list's pages and total stay the catalog
// query's.
type DiscoveryFilter struct {
	Type, Network, Scheme, PayTo, Extension string
}

// Discovered is a page of the discovery list: the agents of a catalog
// query, each with the ways x402 pays for it.
type Discovered struct {
	// Query is the catalog query, with its defaults: the page's limit and
	// offset, and the environment whose statistics the items carry.
	Query crtx.AgentQuery
	Total int
	Items []Discoverable
}

// Discoverable is one agent as an x402 resource: its listing, the ways to
// pay for a call, and its Bazaar extension.
type Discoverable struct {
	Listing crtx.AgentListItem
	Accepts []x402.PaymentRequirements
	Bazaar  x402.Bazaar
}

// Discovery lists the agents of the catalog query q as x402 resources, each
// paid in every environment with a chain that f admits. With no such
// environment the list is empty: no agent can be paid with x402 here.
func (m *Catalog) Discovery(ctx context.Context, q crtx.AgentQuery, f DiscoveryFilter) (Discovered, error) {
	q = catalogDefaults(q)
	page := Discovered{Query: q}
	chains, err := m.payingChains(ctx, f)
	if err != nil || len(chains) == 0 {
		return page, err
	}
	items, total, err := m.listing(ctx, q)
	if err != nil {
		return page, err
	}
	page.Total = total
	for _, it := range items {
		accepts := make([]x402.PaymentRequirements, 0, len(chains))
		for _, c := range chains {
			r, err := m.requirements(ctx, c.chain, it.Agent)
			if err != nil {
				return page, chainDown(c.env, err)
			}
			for _, r := range r {
				if f.Scheme == "" || r.Scheme == f.Scheme {
					accepts = append(accepts, r)
				}
			}
		}
		bz, err := m.bazaar(it.Agent)
		if err != nil {
			return page, internal("discovery resource", err)
		}
		page.Items = append(page.Items, Discoverable{Listing: it, Accepts: accepts, Bazaar: bz})
	}
	return page, nil
}

// envChain is an environment's chain.
type envChain struct {
	env   crtx.Environment
	chain crtx.Chain
}

// payingChains are the chains that f admits, mainnet's first as in a 402.
// A chain that does not answer is left out; with none left and one down,
// the list is unavailable rather than wrongly empty.
func (m *core) payingChains(ctx context.Context, f DiscoveryFilter) ([]envChain, error) {
	if (f.Type != "" && f.Type != x402.ResourceType) || (f.Scheme != "" && m.schemes.x402Named(f.Scheme) == nil) ||
		(f.Extension != "" && f.Extension != x402.BazaarKey) {
		return nil, nil
	}
	var down error
	var out []envChain
	for _, env := range []crtx.Environment{crtx.Mainnet, crtx.Devnet} {
		c := m.cfg.Chains[env]
		if c == nil {
			continue
		}
		network, err := c.Network(ctx)
		if err != nil {
			down = chainDown(env, err)
			continue
		}
		if (f.Network == "" || f.Network == network) && (f.PayTo == "" || f.PayTo == c.Treasury()) {
			out = append(out, envChain{env, c})
		}
	}
	if len(out) == 0 {
		return nil, down
	}
	return out, nil
}
