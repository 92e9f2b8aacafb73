package a2a_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
)

// A message without an API key, or with one the marketplace never gave, is
// refused before any A2A framing: 401 with a Bearer challenge and the REST
// error body, and nothing is paid.
func TestMissingKey(t *testing.T) {
	m := serve(t)
	before := m.Balance(t)
	msg := map[string]any{"message": map[string]any{"messageId": "m-1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "Ada"}}}}
	for _, c := range []struct{ key, code string }{
		{"", crtx.CodeAuthenticationRequired},
		{"crtx_test_" + strings.Repeat("x", 32), crtx.CodeInvalidAPIKey},
	} {
		r := rpc(t, m, c.key, "SendMessage", msg)
		var body struct {
			Error struct{ Code, Message string }
		}
		json.Unmarshal(r.body, &body)
		if r.status != 401 || r.header.Get("WWW-Authenticate") != `Bearer realm="crtx"` || body.Error.Code != c.code || body.Error.Message == "" {
			t.Errorf("key %q: %d %q %s", c.key, r.status, r.header.Get("WWW-Authenticate"), r.body)
		}
	}
	if after := m.Balance(t); after != before {
		t.Errorf("balance %+v, was %+v", after, before)
	}
}
