package web

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
)

// spendChart is a wallet's spending per day over a fixed span of days, as
// bars stacked by agent (the four it spent most on, the rest together),
// with the same figures as a table.
type spendChart struct {
	Days        []spendDay
	Agents      []agentSpend
	First, Last string
	Max, Half   string
	Total       crtx.USDC
	Calls       int64
}

// spendDay is one day's bar: a segment per agent.
type spendDay struct {
	Date     string
	X, W     int
	Segments []segment
	Spent    crtx.USDC
}

type segment struct {
	Y, H   int
	Series int // the agent's place in Agents, for its colour
	Label  string
}

// agentSpend is one agent's (or the rest's) share of the span.
type agentSpend struct {
	Series  int
	AgentID string
	Name    string
	Spent   crtx.USDC
	Calls   int64
}

// maxSeries is how many agents a chart tells apart; the rest are one.
const maxSeries = 4

// newSpendChart lays out rows (per day and agent) over span days ending
// today; nil when nothing was spent or called in the span.
func newSpendChart(rows []crtx.DaySpend, today time.Time, span int) *spendChart {
	if len(rows) == 0 {
		return nil
	}
	totals := map[string]*agentSpend{}
	for _, r := range rows {
		a := totals[r.AgentID]
		if a == nil {
			a = &agentSpend{AgentID: r.AgentID, Name: r.AgentName}
			totals[r.AgentID] = a
		}
		a.Spent += r.Spent
		a.Calls += r.Calls
	}
	var agents []agentSpend
	for _, a := range totals {
		agents = append(agents, *a)
	}
	slices.SortFunc(agents, func(a, b agentSpend) int {
		return cmp.Or(cmp.Compare(b.Spent, a.Spent), cmp.Compare(b.Calls, a.Calls), cmp.Compare(a.AgentID, b.AgentID))
	})
	series := map[string]int{}
	c := &spendChart{}
	for i, a := range agents {
		c.Total += a.Spent
		c.Calls += a.Calls
		if i < maxSeries {
			a.Series = i
			series[a.AgentID] = i
			c.Agents = append(c.Agents, a)
			continue
		}
		if len(c.Agents) == maxSeries {
			c.Agents = append(c.Agents, agentSpend{Series: maxSeries, Name: "Other agents"})
		}
		c.Agents[maxSeries].Spent += a.Spent
		c.Agents[maxSeries].Calls += a.Calls
		series[a.AgentID] = maxSeries
	}
	byDay := map[string][]crtx.DaySpend{}
	for _, r := range rows {
		byDay[r.Date] = append(byDay[r.Date], r)
	}
	var top crtx.USDC
	for _, day := range dayAxis(today, span) {
		date := day.Date
		d := spendDay{Date: date, X: day.X, W: day.W}
		per := make([]crtx.USDC, len(c.Agents))
		for _, r := range byDay[date] {
			per[series[r.AgentID]] += r.Spent
			d.Spent += r.Spent
		}
		for s, v := range per {
			if v > 0 {
				d.Segments = append(d.Segments, segment{Series: s, Label: date + ", " + c.Agents[s].Name + ": " + v.String() + " USDC",
					H: int(v)}) // scaled below
			}
		}
		top = max(top, d.Spent)
		c.Days = append(c.Days, d)
	}
	c.First, c.Last = c.Days[0].Date, c.Days[len(c.Days)-1].Date
	c.Max, c.Half = top.String(), (top / 2).String()
	for i := range c.Days {
		y := 120
		for j := range c.Days[i].Segments {
			s := &c.Days[i].Segments[j]
			if top > 0 {
				s.H = int(int64(s.H) * 110 / int64(top))
			} else {
				s.H = 0
			}
			y -= s.H
			s.Y = y
		}
	}
	return c
}

// ago says how long before now t was, as a person reads it.
func ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	case d < 7*24*time.Hour:
		return fmt.Sprintf("%d days ago", int(d.Hours()/24))
	}
	return t.UTC().Format("2006-01-02")
}

// historyCSV is the wallet's executions in one environment as a CSV file,
// newest first, up to the last 10,000: what a spreadsheet or an
// accountant takes.
func (h *Handler) historyCSV(w http.ResponseWriter, r *http.Request, v visit) error {
	env := crtx.Devnet
	if r.URL.Query().Get("environment") == "mainnet" {
		env = crtx.Mainnet
	}
	var rows []crtx.Execution
	for offset := 0; offset < 10_000; offset += 500 {
		page, _, err := h.market.Executions.Executions(r.Context(), crtx.ExecutionQuery{Wallet: v.Wallet, Environment: env, Limit: 500, Offset: offset})
		if err != nil {
			return err
		}
		rows = append(rows, page...)
		if len(page) < 500 {
			break
		}
	}
	if err := h.market.Executions.Outcomes(r.Context(), rows); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="crtx-executions-`+string(env)+`.csv"`)
	out := csv.NewWriter(w)
	out.Write([]string{"execution_id", "agent_id", "agent_name", "environment", "status", "price_usdc", "refunded_usdc", "charged_usdc",
		"started_at", "completed_at", "execution_time_ms", "held_usdc", "returned_usdc", "tokens_used"})
	for _, e := range rows {
		refunded, charged := e.Charge()
		completed, ms := "", ""
		if e.CompletedAt != nil {
			completed = e.CompletedAt.UTC().Format(time.RFC3339)
		}
		if e.ExecutionTimeMS != nil {
			ms = strconv.FormatInt(*e.ExecutionTimeMS, 10)
		}
		// What the escrow held and gave back beside the charge: a metered
		// call holds its most and returns what it did not use.
		tokens := ""
		if e.TokensUsed != nil {
			tokens = strconv.FormatInt(*e.TokensUsed, 10)
		}
		out.Write([]string{e.ID, e.AgentID, csvText(e.AgentName), string(e.Environment), string(e.Status), e.Cost.String(), refunded.String(),
			charged.String(), e.InitiatedAt.UTC().Format(time.RFC3339), completed, ms, e.Held.String(), e.Returned().String(), tokens})
	}
	out.Flush()
	return out.Error()
}

// csvText keeps a name from being read as a formula by a spreadsheet:
// one that begins (after any spaces) with a character a spreadsheet takes
// for one, or with a tab or carriage return, is quoted as text.
func csvText(s string) string {
	if t := strings.TrimLeft(s, " "); t != "" && strings.ContainsRune("=+-@\t\r", rune(t[0])) {
		return "'" + s
	}
	return s
}

// preview is the start of s on one line, at most n characters.
func preview(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
