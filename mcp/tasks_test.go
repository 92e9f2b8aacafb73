package mcp

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
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
		if marked && !strings.Contains(string(body), "tools/call") {
			t.Fatalf("marked %q", body)
		}
	})
}
