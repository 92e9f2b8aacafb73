package market

import (
	"context"
	"time"

	"github.com/crtx-market/crtx"
)

// Follow reads the principal's execution e every interval until it is
// final, and returns it with its result. changed, if not nil, is told of
// each state e moves to, and ends the following early by answering false.
// The row is read rather than waited on, since any replica may move it.
// When ctx ends first, Follow returns ctx's error and e as last read.
func (m *Market) Follow(ctx context.Context, p crtx.Principal, e crtx.Execution, every time.Duration, changed func(e crtx.Execution, result string) bool) (crtx.Execution, string, error) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return e, "", ctx.Err()
		case <-tick.C:
		}
		next, result, err := m.GetExecution(ctx, p, e.ID)
		if err != nil {
			return e, "", err
		}
		moved := next.Status != e.Status
		e = next
		if moved && changed != nil && !changed(e, result) {
			return e, result, nil
		}
		if e.Status.Final() {
			return e, result, nil
		}
	}
}
