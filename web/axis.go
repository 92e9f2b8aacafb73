package web

import "time"

// axisDay is one day's slot on a chart's fixed axis: its date and where
// its bar stands in the SVG's 600-unit plot, which starts at x = 76.
type axisDay struct {
	Date string
	X, W int
}

// dayAxis is the span UTC days ending today, oldest first, laid across the
// plot: every chart of days has the same axis whatever its data.
func dayAxis(today time.Time, span int) []axisDay {
	step := 600 / span
	out := make([]axisDay, span)
	for i := range out {
		out[i] = axisDay{Date: today.UTC().AddDate(0, 0, i-span+1).Format(time.DateOnly), X: 76 + i*step, W: step * 4 / 5}
	}
	return out
}
