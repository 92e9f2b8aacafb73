package web_test

import (
	"context"
	"net/url"
	"testing"
)

// A form field holding a NUL character (U+0000) is refused, as a REST body
// holding one is: PostgreSQL cannot store it, and SQLite must not keep what
// PostgreSQL would refuse.
func TestFormRefusesNUL(t *testing.T) {
	d := market(t)
	_, cc, b := signedIn(t, d)
	resp, _ := b.send("POST", "/dashboard/keys", url.Values{"csrf": {b.token("/dashboard/keys")}, "name": {"c\x00i"}, "environment": {"devnet"}})
	if resp.StatusCode != 400 {
		t.Errorf("a key name holding NUL: %s, want 400", resp.Status)
	}
	if keys, err := cc.Keys(context.Background()); err != nil || len(keys) != 0 {
		t.Errorf("keys = %+v, %v; want none", keys, err)
	}
}

// A form whose body fails to parse is refused before its page runs,
// rather than reaching it with fields never checked: Go keeps the fields
// it parsed before a bad escape.
func TestUnreadableFormRefused(t *testing.T) {
	d := market(t)
	_, cc, b := signedIn(t, d)
	form := url.Values{"csrf": {b.token("/dashboard/keys")}, "name": {"c\x00i"}, "environment": {"devnet"}}
	if resp, _ := b.sendBody("POST", "/dashboard/keys", "application/x-www-form-urlencoded", form.Encode()+"&x=%zz"); resp.StatusCode != 400 {
		t.Errorf("a form with a bad escape: %s, want 400", resp.Status)
	}
	if keys, err := cc.Keys(context.Background()); err != nil || len(keys) != 0 {
		t.Errorf("keys = %+v, %v; want none", keys, err)
	}
}
