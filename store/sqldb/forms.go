package sqldb

import (
	"context"
	"time"

	"github.com/crtx-market/crtx"
)

func (t accessRows) ClaimForm(ctx context.Context, f crtx.SentForm, forgetBefore time.Time) error {
	if _, err := t.exec(ctx, `DELETE FROM sent_forms WHERE sent_at < ?`, us(forgetBefore)); err != nil {
		return err
	}
	_, err := t.exec(ctx, `INSERT INTO sent_forms (owner, token, sent_at) VALUES (?, ?, ?)`, f.Owner, f.Token, us(f.SentAt))
	return err
}

func (t accessRows) SentForm(ctx context.Context, owner, token string) (crtx.SentForm, error) {
	f := crtx.SentForm{Owner: owner, Token: token}
	var sent int64
	err := t.queryRow(ctx, `SELECT sent_at, outcome FROM sent_forms WHERE owner = ? AND token = ?`, owner, token).Scan(&sent, &f.Outcome)
	f.SentAt = fromUS(sent)
	return f, notFound(err, "sent form")
}

func (t accessRows) SetFormOutcome(ctx context.Context, owner, token string, outcome []byte) error {
	_, err := t.exec(ctx, `UPDATE sent_forms SET outcome = ? WHERE owner = ? AND token = ?`, outcome, owner, token)
	return err
}
