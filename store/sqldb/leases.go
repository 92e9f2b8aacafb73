package sqldb

import (
	"context"
	"fmt"
	"time"

	"github.com/crtx-market/crtx"
)

// ClaimExecutions needs no row locks on SQLite: the single writer
// connection already serializes every claimer.
func (t *tx) ClaimExecutions(ctx context.Context, owner string, now, until time.Time, silent []string, limit int) ([]crtx.Execution, error) {
	ids := make([]any, 0, len(silent))
	for _, id := range silent {
		if id != owner {
			ids = append(ids, id)
		}
	}
	in, ids := inList(ids)
	rows, err := t.query(ctx, `SELECT `+execColumns+` FROM executions
		WHERE status IN ('pending', 'running') AND (lease_until < ? OR owner IN `+in+`)
		ORDER BY lease_until LIMIT ?`+t.d.SkipLocked(), append(append([]any{us(now)}, ids...), limit)...)
	out, err := collect(rows, err, scanExecution)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].LeaseUntil, out[i].Owner = until, owner
		out[i].Attempts++
		if _, err := t.exec(ctx, `UPDATE executions SET lease_until = ?, attempts = ?, owner = ? WHERE id = ?`,
			us(until), out[i].Attempts, owner, out[i].ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (t *tx) RenewLease(ctx context.Context, id, owner string, until time.Time) error {
	r, err := t.exec(ctx, `UPDATE executions SET lease_until = ? WHERE id = ? AND owner = ? AND status IN ('pending', 'running')`,
		us(until), id, owner)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n != 1 {
		return fmt.Errorf("execution %s is not %s's to renew: %w", id, owner, crtx.ErrNotFound)
	}
	return nil
}
