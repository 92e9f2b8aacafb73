package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzLiftTask: whatever the body, liftTask passes it on unchanged, and
// marks only a tools/call whose params carry a task.
func FuzzLiftTask(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_agent","task":{"ttl":60000}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_agent","task":null}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	f.Add([]byte(`[{"method":"tools/call"}]`))
	f.Add([]byte(`{"method":"tools/call","params":"x"}`))
	s := &server{}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !bytes.Equal(body, bytes.ToLower(body)) {
			t.Skip("encoding/json matches struct fields case-insensitively; maps do not")
		}
		var got []byte
		var marked bool
		h := s.liftTask(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			got, _ = io.ReadAll(r.Body)
			marked = r.Header.Get(taskHeader) != ""
		}))
		req := httptest.NewRequest("POST", "/mcp", bytes.NewReader(body))
		req.Header.Set(taskHeader, "forged")
		h.ServeHTTP(httptest.NewRecorder(), req)
		if !bytes.Equal(got, body) {
			t.Fatalf("body changed: %q became %q", body, got)
		}
		if marked != wantsTask(body) {
			t.Fatalf("marked %v, want %v: %q", marked, !marked, body)
		}
	})
}

// wantsTask decodes a message the other way, into plain maps: a tools/call
// whose params hold a task that is not null. Keys match exactly here and
// case-insensitively in liftTask's struct, so the fuzzer only feeds it
// lower-case keys' bodies (see the guard in FuzzLiftTask).
func wantsTask(body []byte) bool {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil || m["method"] != "tools/call" {
		return false
	}
	p, ok := m["params"].(map[string]any)
	return ok && p["task"] != nil
}
