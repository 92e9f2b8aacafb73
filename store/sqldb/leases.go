package sqldb

import (
	"context"
	"slices"
	"time"

	"github.com/crtx-market/crtx"
)

// ClaimExecutions needs no row locks on SQLite: the single writer
// connection already serializes every claimer.
func (t executionRows) ClaimExecutions(ctx context.Context, owner string, now, until time.Time, silent []string, limit int) ([]crtx.Execution, error) {
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

// renewChunk is the most ids one lease renewal names, well within both
// engines' limits on a statement's parameters.
const renewChunk = 512

// RenewLeases never waits for a row another transaction holds: on
// PostgreSQL a row locked is one being closed (a batch of closings locks
// many, in its own order), and a renewal that waited for it could close
// a cycle with that batch. Such a row is counted as renewed while it is
// still ours by what is committed, with a lease that outlasts held (the
// next renewal's time): its closing ends it, and a row held past its
// lease is lost, as one not renewed is.
func (t executionRows) RenewLeases(ctx context.Context, owner string, ids []string, held, until time.Time) ([]string, error) {
	var renewed []string
	scanID := func(r interface{ Scan(...any) error }) (id string, err error) { return id, r.Scan(&id) }
	for chunk := range slices.Chunk(ids, renewChunk) {
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		in, args := inList(args)
		ours := `SELECT id FROM executions WHERE owner = ? AND status IN ('pending', 'running') AND id IN ` + in
		rows, err := t.query(ctx, `UPDATE executions SET lease_until = ?
			WHERE id IN (`+ours+t.d.SkipLocked()+`) RETURNING id`,
			append([]any{us(until), owner}, args...)...)
		got, err := collect(rows, err, scanID)
		if err != nil {
			return nil, err
		}
		renewed = append(renewed, got...)
		if len(got) == len(chunk) || t.d.SkipLocked() == "" {
			continue
		}
		rows, err = t.query(ctx, ours+` AND lease_until > ?`, append(append([]any{owner}, args...), us(held))...)
		kept, err := collect(rows, err, scanID)
		if err != nil {
			return nil, err
		}
		done := make(map[string]bool, len(got))
		for _, id := range got {
			done[id] = true
		}
		for _, id := range kept {
			if !done[id] {
				renewed = append(renewed, id)
			}
		}
	}
	return renewed, nil
}
