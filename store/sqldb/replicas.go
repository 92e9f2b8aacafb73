package sqldb

import (
	"context"
	"time"
)

func (t systemRows) Heartbeat(ctx context.Context, replica string, release int, at, forgetBefore time.Time) error {
	if _, err := t.exec(ctx, `INSERT INTO replicas (id, heartbeat_at, release) VALUES (?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, release = excluded.release`, replica, us(at), release); err != nil {
		return err
	}
	_, err := t.exec(ctx, `DELETE FROM replicas WHERE heartbeat_at < ?`, us(forgetBefore))
	return err
}

func (t systemRows) Leave(ctx context.Context, replica string) error {
	_, err := t.exec(ctx, `DELETE FROM replicas WHERE id = ?`, replica)
	return err
}

func (t systemRows) Replicas(ctx context.Context) (map[string]time.Time, error) {
	rows, err := t.query(ctx, `SELECT id, heartbeat_at FROM replicas`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var id string
		var at int64
		if err := rows.Scan(&id, &at); err != nil {
			return nil, err
		}
		out[id] = fromUS(at)
	}
	return out, rows.Err()
}

func (t systemRows) ReplicasBelow(ctx context.Context, release int, since time.Time) ([]string, error) {
	rows, err := t.query(ctx, `SELECT id FROM replicas WHERE release < ? AND heartbeat_at >= ? ORDER BY id`, release, us(since))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
