package sqldb

import (
	"context"
	"time"

	"github.com/crtx-market/crtx"
)

// Backlog reads each queue from the partial index of its work, so that a
// scrape costs what waits, not what ever was.
func (t systemRows) Backlog(ctx context.Context, since time.Time) (crtx.Backlog, error) {
	b := crtx.Backlog{Executions: map[crtx.Environment]crtx.Queue{}, Withdrawals: map[crtx.Environment]crtx.Queue{}}
	byEnv := func(into map[crtx.Environment]crtx.Queue, q string) error {
		rows, err := t.query(ctx, q)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var env crtx.Environment
			var q crtx.Queue
			var oldest int64
			if err := rows.Scan(&env, &q.Waiting, &q.Amount, &oldest); err != nil {
				return err
			}
			q.Oldest = fromUS(oldest)
			into[env] = q
		}
		return rows.Err()
	}
	if err := byEnv(b.Executions, `SELECT environment, count(*), CAST(coalesce(sum(cost), 0) AS BIGINT), min(initiated_at) FROM executions`+
		t.d.IndexedBy("executions_work")+` WHERE status IN ('pending', 'running') GROUP BY environment`); err != nil {
		return b, err
	}
	if err := byEnv(b.Withdrawals, `SELECT environment, count(*), CAST(coalesce(sum(amount), 0) AS BIGINT), min(created_at) FROM withdrawals`+
		t.d.IndexedBy("withdrawals_work")+` WHERE status IN ('pending', 'sent') GROUP BY environment`); err != nil {
		return b, err
	}
	queue := func(q *crtx.Queue, query string) error {
		var oldest *int64
		if err := t.queryRow(ctx, query, us(since)).Scan(&q.Waiting, &oldest); err != nil {
			return err
		}
		if oldest != nil {
			q.Oldest = fromUS(*oldest)
		}
		return nil
	}
	if err := queue(&b.Webhooks, `SELECT count(*), min(created_at) FROM webhook_deliveries`+t.d.IndexedBy("webhook_deliveries_waiting")+`
		WHERE delivered_at IS NULL AND created_at > ?`); err != nil {
		return b, err
	}
	err := queue(&b.Pushes, `SELECT count(*), min(e.completed_at) FROM a2a_push_configs p`+t.d.IndexedBy("a2a_push_configs_waiting")+`
		JOIN executions e ON e.id = p.task_id
		WHERE p.delivered_at IS NULL AND p.created_at > ? AND e.status IN ('completed', 'failed', 'disputed')`)
	return b, err
}
