package http

import (
	"net/http"
	"slices"

	"github.com/crtx-market/crtx/market"
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
	page, err := s.market.Catalog.Discovery(r.Context(), aq, f)
	return reply(w, http.StatusOK, page, err)
}
