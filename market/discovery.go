package market

import (
	"context"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
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

// Discovery lists the agents of the catalog query q as x402 resources, each
// paid in every environment with a chain that f admits. With no such
// environment the list is empty: no agent can be paid with x402 here.
func (m *Catalog) Discovery(ctx context.Context, q crtx.AgentQuery, f DiscoveryFilter) (api.DiscoveryPage, error) {
	q = catalogDefaults(q)
	page := api.DiscoveryPage{X402Version: x402.Version, Items: []api.DiscoveryResource{},
		Pagination: api.Page{Limit: q.Limit, Offset: q.Offset}}
	chains, err := m.payingChains(ctx, f)
	if err != nil || len(chains) == 0 {
		return page, err
	}
	items, total, err := m.listing(ctx, q)
	if err != nil {
		return page, err
	}
	page.Pagination.Total = total
	for _, it := range items {
		accepts := make([]x402.PaymentRequirements, 0, len(chains))
		for _, c := range chains {
			r, err := requirements(ctx, c.chain, it.Agent)
			if err != nil {
				return page, chainDown(c.env, err)
			}
			accepts = append(accepts, r)
		}
		res, err := m.resource(it, q.Environment, accepts)
		if err != nil {
			return page, internal("discovery resource", err)
		}
		page.Items = append(page.Items, res)
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
	if (f.Type != "" && f.Type != x402.ResourceType) || (f.Scheme != "" && f.Scheme != x402.SchemeExact) ||
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

// resource is one agent as an x402 resource, with the statistics of env.
func (m *core) resource(it crtx.AgentListItem, env crtx.Environment, accepts []x402.PaymentRequirements) (api.DiscoveryResource, error) {
	a, s := it.Agent, it.Stats
	bz, err := m.bazaar(a)
	if err != nil {
		return api.DiscoveryResource{}, err
	}
	listing := m.cfg.PublicURL + "/v1/agents/" + a.ID
	// A listing's tags are 1 to 5 lowercase slugs of at most 32
	// characters: Bazaar's rules for tags (at most 5, printable ASCII, 32
	// characters each) keep every one.
	return api.DiscoveryResource{Resource: listing + "/execute", Type: x402.ResourceType, X402Version: x402.Version,
		Accepts: accepts, LastUpdated: a.UpdatedAt.UTC(), Description: a.Name + ": " + a.Tagline, MimeType: "application/json",
		Tags: a.Tags, Extensions: api.DiscoveryExtensions{Bazaar: bz},
		Metadata: api.DiscoveryMetadata{Name: a.Name, Description: a.Description, Price: a.Price,
			Crtx: api.DiscoveryEvidence{AgentID: a.ID, ListingURL: listing, Environment: env, TotalExecutions: s.Total,
				SuccessRate: s.SuccessRate(), AvgExecutionTimeMS: s.AvgTimeMS()}},
	}, nil
}
