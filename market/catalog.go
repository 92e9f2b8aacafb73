package market

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
)

// Agents returns a page of the catalog (CONTRACT §7). The query must be
// valid; the http package checks each parameter and names the bad one.
func (m *Catalog) Agents(ctx context.Context, q crtx.AgentQuery) (crtx.AgentPage, error) {
	q = catalogDefaults(q)
	// Pages are kept a second: the catalog changes rarely and is read on
	// every browse, so a second's staleness buys not counting it each time.
	return m.pages.fetch(queryKey(q), time.Now(), func() (crtx.AgentPage, error) { return m.agents(context.WithoutCancel(ctx), q) })
}

// TagCounts is how many listed agents each tag has, for a few seconds
// after it was counted, as the catalog's totals are.
func (m *Catalog) TagCounts(ctx context.Context) (map[string]int, error) {
	// The count is shared by every request that waits for it: one that
	// ends does not cancel it for the others.
	ctx = context.WithoutCancel(ctx)
	out, err := m.tags.fetch("", time.Now(), func() (map[string]int, error) {
		return crtx.Read(ctx, m.store, func(tx crtx.Tx) (map[string]int, error) { return tx.Catalog.TagCounts(ctx) })
	})
	return out, internal("tag counts", err)
}

// catalogDefaults gives a catalog query the environment and order it
// leaves out: mainnet's statistics, the most used first, or the most
// relevant with a search.
func catalogDefaults(q crtx.AgentQuery) crtx.AgentQuery {
	if q.Environment == "" {
		q.Environment = crtx.Mainnet
	}
	if q.Sort == "" {
		q.Sort = crtx.SortTotalExecutions
		if q.Q != "" {
			q.Sort = crtx.SortRelevance
		}
	}
	return q
}

// queryKey identifies a query in the page cache: every field, by value. Built
// with appends: it is made for every catalog request, and fmt took as
// long as writing the answer.
func queryKey(q crtx.AgentQuery) string {
	b := appendFilterKey(make([]byte, 0, 64), q)
	b = append(append(append(b, '|'), q.Sort...), '|')
	b = strconv.AppendInt(append(strconv.AppendInt(b, int64(q.Limit), 10), '|'), int64(q.Offset), 10)
	return string(b)
}

// filterKey identifies which agents a query matches, whatever their order
// and page.
func filterKey(q crtx.AgentQuery) string { return string(appendFilterKey(nil, q)) }

// appendFilterKey appends the filter's fields, quoting the free text ones
// so that no two filters read the same.
func appendFilterKey(b []byte, q crtx.AgentQuery) []byte {
	b = append(append(b, q.Environment...), '|')
	for _, t := range q.Tags {
		b = append(strconv.AppendQuote(b, t), ' ')
	}
	b = append(b, '|')
	if q.MinSuccessRate != nil {
		b = strconv.AppendFloat(b, *q.MinSuccessRate, 'g', -1, 64)
	} else {
		b = append(b, '-')
	}
	b = append(b, '|')
	if q.MinExecutions != nil {
		b = strconv.AppendInt(b, *q.MinExecutions, 10)
	} else {
		b = append(b, '-')
	}
	b = append(strconv.AppendBool(append(b, '|'), q.VerifiedOnly), '|')
	return strconv.AppendQuote(b, q.Q)
}

func (m *core) agents(ctx context.Context, q crtx.AgentQuery) (crtx.AgentPage, error) {
	items, total, err := m.listing(ctx, q)
	if err != nil {
		return crtx.AgentPage{}, err
	}
	return crtx.AgentPage{Items: items, Total: total, Limit: q.Limit, Offset: q.Offset, Memo: &crtx.Memo{}}, nil
}

// listing reads a page of the catalog and how many agents match its
// filter in all.
func (m *core) listing(ctx context.Context, q crtx.AgentQuery) ([]crtx.AgentListItem, int, error) {
	items, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) ([]crtx.AgentListItem, error) { return tx.Catalog.ListAgents(ctx, q) })
	if err != nil {
		return nil, 0, internal("list agents", err)
	}
	// Counting every match is the costly part of a page (it reads every
	// matching agent), and every page and order of one filter shares it:
	// the total is kept for a few seconds, apart from the page.
	total, err := m.totals.fetch(filterKey(q), time.Now(), func() (n int, err error) {
		err = m.store.View(ctx, func(tx crtx.Tx) (err error) {
			n, err = tx.Catalog.CountAgents(ctx, q)
			return err
		})
		return n, err
	})
	if err != nil {
		return nil, 0, internal("count agents", err)
	}
	return items, total, nil
}

// Figures are the listings of the agents ids that are listed, with their
// statistics in env, read together and kept a few seconds as the
// catalog's totals are: a catalog page shows devnet's figures on the cards
// that mainnet has none for. The map is shared with every caller for
// those seconds: it is only read.
func (m *Catalog) Figures(ctx context.Context, env crtx.Environment, ids []string) (map[string]crtx.AgentListItem, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	ctx = context.WithoutCancel(ctx) // shared by every request that waits for it
	key := string(env) + "|" + strings.Join(ids, " ")
	out, err := m.figures.fetch(key, time.Now(), func() (map[string]crtx.AgentListItem, error) {
		out := make(map[string]crtx.AgentListItem, len(ids))
		err := m.store.View(ctx, func(tx crtx.Tx) error {
			for _, id := range ids {
				it, err := tx.Catalog.AgentListing(ctx, id, env)
				if errors.Is(err, crtx.ErrNotFound) || (err == nil && !listed(it.Agent)) {
					continue // delisted or suspended since the page was read
				}
				if err != nil {
					return err
				}
				out[id] = it
			}
			return nil
		})
		return out, err
	})
	return out, internal("figures", err)
}

// listed says a listing is shown to callers: neither delisted nor
// suspended.
func listed(a crtx.Agent) bool { return a.Status != crtx.AgentDelisted && a.SuspendedAt == nil }

// Agent returns the full listing of an active or paused agent with its
// statistics in env; delisted or unknown agents are agent_not_found.
func (m *Catalog) Agent(ctx context.Context, id string, env crtx.Environment) (crtx.AgentListItem, error) {
	var it crtx.AgentListItem
	err := m.store.View(ctx, func(tx crtx.Tx) (err error) {
		it, err = tx.Catalog.AgentListing(ctx, id, env)
		if errors.Is(err, crtx.ErrNotFound) || (err == nil && !listed(it.Agent)) {
			return crtx.Errorf(crtx.CodeAgentNotFound, "no agent %q", id)
		}
		return err
	})
	if err != nil {
		return crtx.AgentListItem{}, internal("agent", err)
	}
	return it, nil
}
