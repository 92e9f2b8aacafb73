package e2e_test

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
)

type catalogAgent struct {
	id       string
	price    crtx.USDC
	tags     []string
	created  time.Time
	stats    map[crtx.Environment]crtx.AgentStats
	verified bool
	status   string
}

// catalog lists n agents from 3 creators (one verified) with varied prices,
// tags, creation times and statistics; some are paused or delisted.
func catalog(t *testing.T, e *env, n int) []catalogAgent {
	svc := newService(t, echo)
	tagSets := [][]string{{"data"}, {"data", "sql"}, {"writing"}, {"code", "data", "security"}, {"research", "legal"}}
	var out []catalogAgent
	owners := make([]wallet, 3)
	sessions := make([]*client.Client, 3)
	for i := range owners {
		owners[i], sessions[i] = e.creatorOf("100000")
	}
	for i := range n {
		if i%4 != 0 { // several agents share a creation time, so the tie-break shows
			e.clock.Advance(time.Second)
		}
		price := crtx.USDC((i%7 + 1) * 10_000)
		tags := tagSets[i%len(tagSets)]
		p := params(svc, price.String()).with("tags", tags).with("name", fmt.Sprintf("Agent %02d", i))
		a, err := list(sessions[i%3], p)
		if err != nil {
			t.Fatal(err)
		}
		ca := catalogAgent{id: a.AgentID, price: price, tags: tags, created: a.CreatedAt, verified: i%3 == 0, status: "active",
			stats: map[crtx.Environment]crtx.AgentStats{}}
		// Statistics as executions would leave them (the execution issue
		// writes them through the same store call).
		for _, env := range crtx.Environments {
			total := int64((i * 7) % 11)
			if env == crtx.Devnet {
				total = int64((i * 5) % 13)
			}
			finished := total - int64(i%2)
			if finished < 0 {
				finished = 0
			}
			s := crtx.AgentStats{Total: total, Finished: finished, Successful: finished * int64(i%4) / 3, TimeSumMS: 100 * total}
			if s.Successful > finished {
				s.Successful = finished
			}
			ca.stats[env] = s
			err := e.d.Store.Update(ctx, func(tx crtx.Tx) error { return tx.Catalog.AddAgentStats(ctx, a.AgentID, env, s) })
			if err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, ca)
	}
	err := e.d.Store.Update(ctx, func(tx crtx.Tx) error { return tx.Catalog.SetCreatorVerified(ctx, owners[0].address, true) })
	if err != nil {
		t.Fatal(err)
	}
	// One paused, one delisted.
	if _, err := patch(sessions[1], out[1].id, map[string]any{"status": "paused"}); err != nil {
		t.Fatal(err)
	}
	out[1].status = "paused"
	if _, err := sessions[2].Delist(ctx, out[2].id); err != nil {
		t.Fatal(err)
	}
	out[2].status = "delisted"
	return out
}

func rate(s crtx.AgentStats) float64 { return s.SuccessRate() }

// pages reads every page of a query with the given page size.
func pages(t *testing.T, e *env, q url.Values, size int) ([]string, int) {
	t.Helper()
	var ids []string
	total := -1
	for offset := 0; ; offset += size {
		q.Set("limit", fmt.Sprint(size))
		q.Set("offset", fmt.Sprint(offset))
		page, err := e.anon.Agents(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q.Encode(), err)
		}
		if total >= 0 && page.Total != total {
			t.Fatalf("total changed between pages: %d then %d", total, page.Total)
		}
		total = page.Total
		if page.Limit != size || page.Offset != offset {
			t.Fatalf("page echoes limit %d offset %d", page.Limit, page.Offset)
		}
		for _, a := range page.Agents {
			if a.Status != "active" {
				t.Errorf("%s is %s in a list", a.AgentID, a.Status)
			}
			ids = append(ids, a.AgentID)
		}
		if len(page.Agents) < size {
			return ids, total
		}
	}
}

func TestBrowse(t *testing.T) {
	e := start(t, private)
	all := catalog(t, e, 45)
	active := slices.DeleteFunc(slices.Clone(all), func(a catalogAgent) bool { return a.status != "active" })

	sortCases := map[string]func(a, b catalogAgent, env crtx.Environment) int{
		"total_executions": func(a, b catalogAgent, env crtx.Environment) int {
			return cmp.Compare(b.stats[env].Total, a.stats[env].Total)
		},
		"success_rate": func(a, b catalogAgent, env crtx.Environment) int {
			return cmp.Compare(rate(b.stats[env]), rate(a.stats[env]))
		},
		"created_at": func(a, b catalogAgent, _ crtx.Environment) int { return b.created.Compare(a.created) },
		"price_asc":  func(a, b catalogAgent, _ crtx.Environment) int { return cmp.Compare(a.price, b.price) },
		"price_desc": func(a, b catalogAgent, _ crtx.Environment) int { return cmp.Compare(b.price, a.price) },
	}
	for name, less := range sortCases {
		for _, env := range crtx.Environments {
			t.Run(name+"/"+string(env), func(t *testing.T) {
				want := slices.Clone(active)
				slices.SortFunc(want, func(a, b catalogAgent) int {
					return cmp.Or(less(a, b, env), strings.Compare(a.id, b.id))
				})
				q := url.Values{"sort": {name}, "environment": {string(env)}}
				if name == "total_executions" && env == crtx.Mainnet {
					q.Del("sort") // the default
					q.Del("environment")
				}
				for _, size := range []int{7, 100} {
					got, total := pages(t, e, q, size)
					if total != len(want) || joined(got) != joined(ids(want)) {
						t.Fatalf("page size %d:\n got %v\nwant %v", size, got, ids(want))
					}
				}
			})
		}
	}

	filter := func(keep func(catalogAgent) bool) []string {
		var out []catalogAgent
		for _, a := range active {
			if keep(a) {
				out = append(out, a)
			}
		}
		slices.SortFunc(out, func(a, b catalogAgent) int { return strings.Compare(a.id, b.id) })
		return ids(out)
	}
	filters := map[string]struct {
		q    url.Values
		keep func(catalogAgent) bool
	}{
		"tags=data":           {url.Values{"tags": {"data"}}, func(a catalogAgent) bool { return slices.Contains(a.tags, "data") }},
		"tags=data,sql":       {url.Values{"tags": {"data,sql"}}, func(a catalogAgent) bool { return slices.Contains(a.tags, "sql") }},
		"tags=nothing":        {url.Values{"tags": {"astrology"}}, func(catalogAgent) bool { return false }},
		"min_executions=5":    {url.Values{"min_executions": {"5"}}, func(a catalogAgent) bool { return a.stats[crtx.Mainnet].Total >= 5 }},
		"min_success_rate":    {url.Values{"min_success_rate": {"0.5"}}, func(a catalogAgent) bool { return rate(a.stats[crtx.Mainnet]) >= 0.5 }},
		"verified_only":       {url.Values{"verified_only": {"true"}}, func(a catalogAgent) bool { return a.verified }},
		"verified_only=false": {url.Values{"verified_only": {"false"}}, func(catalogAgent) bool { return true }},
		"devnet min_executions": {url.Values{"min_executions": {"6"}, "environment": {"devnet"}},
			func(a catalogAgent) bool { return a.stats[crtx.Devnet].Total >= 6 }},
		"combined": {url.Values{"tags": {"data"}, "verified_only": {"true"}, "min_executions": {"1"}}, func(a catalogAgent) bool {
			return slices.Contains(a.tags, "data") && a.verified && a.stats[crtx.Mainnet].Total >= 1
		}},
	}
	for name, f := range filters {
		t.Run(name, func(t *testing.T) {
			got, total := pages(t, e, f.q, 100)
			slices.Sort(got)
			if want := f.keep; total != len(got) || joined(got) != joined(filter(want)) {
				t.Errorf("got %v, want %v", got, filter(f.keep))
			}
		})
	}

	t.Run("statistics per environment", func(t *testing.T) {
		a := active[3]
		for _, env := range crtx.Environments {
			got, err := e.anon.Agent(ctx, a.id, env)
			s := a.stats[env]
			if err != nil || got.TotalExecutions != s.Total || got.SuccessfulExecutions != s.Successful ||
				got.SuccessRate != s.SuccessRate() || got.AvgExecutionTimeMS != s.AvgTimeMS() || got.Environment != env {
				t.Errorf("%s: %+v, %v; want %+v", env, got, err, s)
			}
		}
	})
	t.Run("paused readable, delisted gone", func(t *testing.T) {
		if got, err := e.anon.Agent(ctx, all[1].id, ""); err != nil || got.Status != "paused" {
			t.Errorf("paused: %+v, %v", got.Status, err)
		}
		_, err := e.anon.Agent(ctx, all[2].id, "")
		wantCode(t, err, 404, "agent_not_found")
		_, err = e.anon.Agent(ctx, "agt_nope", "")
		wantCode(t, err, 404, "agent_not_found")
	})
	t.Run("invalid parameters", func(t *testing.T) {
		for param, value := range map[string]string{
			"limit": "0", "offset": "-1", "sort": "popularity", "min_success_rate": "1.5", "min_executions": "-2",
			"verified_only": "yes", "environment": "testnet", "tags": ",,", "colour": "blue",
		} {
			_, err := e.anon.Agents(ctx, url.Values{param: {value}})
			ce := wantCode(t, err, 400, "invalid_request")
			if !strings.Contains(ce.Message, param) {
				t.Errorf("%s=%s: message %q does not name the parameter", param, value, ce.Message)
			}
		}
		for _, q := range []string{"limit=101", "limit=abc", "min_success_rate=NaN", "min_executions=1.5", "limit=5&limit=6"} {
			wantCode(t, e.anon.Do(ctx, "GET", "/v1/agents?"+q, "", nil, nil), 400, "invalid_request")
		}
	})
}

func ids(as []catalogAgent) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.id
	}
	return out
}

// Full-text search: matches by words and prefixes, and a record of
// failures lowers a listing with the same text.
func TestSearch(t *testing.T) {
	e := start(t, private)
	svc := newService(t, echo)
	_, c := e.creatorOf("1000")
	mk := func(name, desc string, tags []string, finished, successful int64) string {
		a, err := list(c, params(svc, "0.01").with("name", name).with("description", desc).with("tags", tags))
		if err != nil {
			t.Fatal(err)
		}
		s := crtx.AgentStats{Total: finished, Finished: finished, Successful: successful}
		e.d.Store.Update(ctx, func(tx crtx.Tx) error { return tx.Catalog.AddAgentStats(ctx, a.AgentID, crtx.Mainnet, s) })
		return a.AgentID
	}
	flaky := mk("Invoice parser", "Extracts totals from invoices.", []string{"finance"}, 50, 5)
	solid := mk("Invoice reader", "Extracts totals from invoices.", []string{"finance"}, 50, 49)
	sqlA := mk("SQL explainer", "Explains query plans of PostgreSQL.", []string{"sql", "code"}, 0, 0)
	mk("Poem writer", "Writes short poems.", []string{"writing"}, 10, 10)

	search := func(q url.Values) []string {
		page, err := e.anon.Agents(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range page.Agents {
			out = append(out, a.AgentID)
		}
		return out
	}
	if got := search(url.Values{"q": {"invoices totals"}}); joined(got) != joined([]string{solid, flaky}) {
		t.Errorf("reliability does not lower the flaky agent: %v (solid %s, flaky %s)", got, solid, flaky)
	}
	if got := search(url.Values{"q": {"postgres"}}); joined(got) != sqlA {
		t.Errorf("prefix search: %v", got)
	}
	if got := search(url.Values{"q": {"sql"}, "tags": {"code"}}); joined(got) != sqlA {
		t.Errorf("search with a tag filter: %v", got)
	}
	if got := search(url.Values{"q": {`invoice" * ( ^`}}); len(got) != 2 {
		t.Errorf("query syntax is not escaped: %v", got)
	}
	// An explicit sort wins over relevance.
	got := search(url.Values{"q": {"invoice"}, "sort": {"success_rate"}})
	if joined(got) != joined([]string{solid, flaky}) {
		t.Errorf("q with sort: %v", got)
	}
	if got := search(url.Values{"q": {"zzzz"}}); len(got) != 0 {
		t.Errorf("no match gives %v", got)
	}
}
