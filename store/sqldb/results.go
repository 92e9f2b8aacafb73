package sqldb

import (
	"context"
	"time"
)

func (t executionRows) PutResult(ctx context.Context, cid, content string, at time.Time) error {
	_, err := t.exec(ctx, `INSERT INTO results (cid, content, created_at) VALUES (?, ?, ?) ON CONFLICT (cid) DO NOTHING`, cid, content, us(at))
	return err
}

func (t executionRows) Result(ctx context.Context, cid string) (string, error) {
	var s string
	err := t.queryRow(ctx, `SELECT content FROM results WHERE cid = ?`, cid).Scan(&s)
	return s, notFound(err, "result")
}

func (t executionRows) ResultStart(ctx context.Context, cid string, n int) (string, error) {
	var s string
	err := t.queryRow(ctx, `SELECT substr(content, 1, ?) FROM results WHERE cid = ?`, n, cid).Scan(&s)
	return s, notFound(err, "result")
}

func (t executionRows) PublishedResult(ctx context.Context, cid string) (string, error) {
	var s string
	err := t.queryRow(ctx, `SELECT content FROM results WHERE cid = ?
		AND EXISTS (SELECT 1 FROM executions WHERE result_cid = ? AND NOT private)`, cid, cid).Scan(&s)
	return s, notFound(err, "result")
}
