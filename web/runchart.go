package web

import (
	"strconv"
	"time"

	"github.com/crtx-market/crtx"
)

// runsChart is an agent's public runs per day over 30 days, each day's bar
// its completed runs with its failed ones on top, and the same figures as a
// table.
type runsChart struct {
	Env         crtx.Environment
	Days        []runsDay
	First, Last string
	Max, Half   string
	Ended       int64
	Succeeded   int64
}

// runsDay is one day's bar.
type runsDay struct {
	Date                 string
	X, W                 int
	OkY, OkH, BadY, BadH int
	Ended, Succeeded     int64
}

// SuccessRate is the span's completed over ended runs, in words.
func (c runsChart) SuccessRate() string {
	if c.Ended == 0 {
		return "—"
	}
	return pct(float64(c.Succeeded) / float64(c.Ended))
}

// newRunsChart lays rows out over the 30 days ending today; nil without a
// run in them.
func newRunsChart(env crtx.Environment, rows []crtx.DayRuns, today time.Time) *runsChart {
	if len(rows) == 0 {
		return nil
	}
	by := map[string]crtx.DayRuns{}
	var top int64
	c := &runsChart{Env: env}
	for _, r := range rows {
		by[r.Date] = r
		top = max(top, r.Ended)
		c.Ended += r.Ended
		c.Succeeded += r.Succeeded
	}
	for _, day := range dayAxis(today, 30) {
		r := by[day.Date]
		d := runsDay{Date: day.Date, X: day.X, W: day.W, Ended: r.Ended, Succeeded: r.Succeeded}
		d.OkH = int(r.Succeeded * 110 / top)
		d.BadH = int(r.Ended*110/top) - d.OkH
		d.OkY = 120 - d.OkH
		d.BadY = d.OkY - d.BadH
		c.Days = append(c.Days, d)
	}
	c.First, c.Last = c.Days[0].Date, c.Days[len(c.Days)-1].Date
	c.Max, c.Half = strconv.FormatInt(top, 10), strconv.FormatFloat(float64(top)/2, 'f', -1, 64)
	return c
}
