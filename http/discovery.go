package http

import (
	"net/http"
	"slices"

	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/x402"
)

// discoveryParams are the filters Bazaar clients send (@x402/extensions'
// listResources), in their spelling.
var discoveryParams = []string{"type", "network", "scheme", "payTo", "extensions"}

// discoveryResources is x402's discovery list, GET /discovery/resources
// (x402-specification-v2.md §8): the agents of a catalog query, with its
// parameters, as x402 resources, narrowed by the Bazaar clients' filters.
// Without a chain it is an empty list, which Bazaar clients read as
// nothing to pay here, where an error would break their crawl.
func (s *Server) discoveryResources(w http.ResponseWriter, r *http.Request) error {
	q, err := newQuery(r, slices.Concat(catalogParams, discoveryParams)...)
	if err != nil {
		return err
	}
	aq, err := q.agentQuery()
	if err != nil {
		return err
	}
	f := market.DiscoveryFilter{Type: q.v.Get("type"), Network: q.v.Get("network"), Scheme: q.v.Get("scheme"),
		PayTo: q.v.Get("payTo"), Extension: q.v.Get("extensions")}
	d, err := s.market.Catalog.Discovery(r.Context(), aq, f)
	if err != nil {
		return err
	}
	page := api.DiscoveryPage{X402Version: x402.Version, Items: make([]api.DiscoveryResource, 0, len(d.Items)),
		Pagination: api.Page{Limit: d.Query.Limit, Offset: d.Query.Offset, Total: d.Total}}
	for _, it := range d.Items {
		page.Items = append(page.Items, api.NewDiscoveryResource(it.Listing, d.Query.Environment, it.Accepts, it.Bazaar, s.market.Config().PublicURL))
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}
