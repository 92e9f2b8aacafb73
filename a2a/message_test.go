package a2a

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/crtx-market/crtx"
)

func message(t *testing.T, s string) *a2a.Message {
	t.Helper()
	var m a2a.Message
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return &m
}

func TestA2AReadMessage(t *testing.T) {
	o, err := readMessage("agent-1", message(t, `{"messageId":"m-1","role":"ROLE_USER","parts":[
		{"text":"count"},{"data":{"lang":"en","n":[1,2]}},{"text":"these words"}],
		"metadata":{"max_cost_usdc":"0.25","timeout_seconds":30,"https://example.com/ext":{"x":1}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if o.params.Task != "count\nthese words" || string(o.params.Parameters) != `{"lang":"en","n":[1,2]}` ||
		*o.params.MaxCost != 250_000 || *o.params.TimeoutSeconds != 30 || o.key != "a2a:m-1" {
		t.Errorf("read %+v", o)
	}
	// The hash is the content's, whatever the order of the data's keys.
	same, _ := readMessage("agent-1", message(t, `{"messageId":"m-1","role":"ROLE_USER","parts":[
		{"text":"count"},{"data":{"n":[1,2],"lang":"en"}},{"text":"these words"}],"metadata":{"timeout_seconds":30,"max_cost_usdc":"0.250000"}}`))
	other, _ := readMessage("agent-1", message(t, `{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"count these words"}]}`))
	elsewhere, _ := readMessage("agent-2", message(t, `{"messageId":"m-1","role":"ROLE_USER","parts":[
		{"text":"count"},{"data":{"n":[1,2],"lang":"en"}},{"text":"these words"}],"metadata":{"timeout_seconds":30,"max_cost_usdc":"0.25"}}`))
	if same.hash != o.hash || other.hash == o.hash || elsewhere.hash == o.hash {
		t.Errorf("hashes: %s %s %s %s", o.hash, same.hash, other.hash, elsewhere.hash)
	}

	for _, tc := range []struct {
		msg  string
		want error // an A2A sentinel, or nil for invalid_request
	}{
		{`{"messageId":"","role":"ROLE_USER","parts":[{"text":"x"}]}`, nil},
		{`{"messageId":"` + strings.Repeat("m", 252) + `","role":"ROLE_USER","parts":[{"text":"x"}]}`, nil},
		{`{"messageId":"m","role":"ROLE_USER","parts":[]}`, nil},
		{`{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"a":1}}]}`, nil},
		{`{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"},{"data":[1]}]}`, nil},
		{`{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"},{"data":{}},{"data":{}}]}`, nil},
		{`{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x\u0000"}]}`, nil},
		{`{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"},{"data":{"k":"\u0000"}}]}`, nil},
		{`{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"metadata":{"max_cost_usdc":0.25}}`, nil},
		{`{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"metadata":{"max_cost_usdc":"-1"}}`, nil},
		{`{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"metadata":{"timeout_seconds":1.5}}`, nil},
		{`{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"metadata":{"timeout_seconds":"30"}}`, nil},
		{`{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"metadata":{"timeout_seconds":0}}`, nil},
		{`{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"},{"url":"https://example.com/f.pdf"}]}`, a2a.ErrUnsupportedContentType},
		{`{"messageId":"m","role":"ROLE_USER","parts":[{"raw":"AAEC"}]}`, a2a.ErrUnsupportedContentType},
		{`{"messageId":"m","taskId":"t","role":"ROLE_USER","parts":[{"text":"x"}]}`, a2a.ErrUnsupportedOperation},
	} {
		_, err := readMessage("agent-1", message(t, tc.msg))
		if tc.want == nil {
			if crtx.ErrorCode(err) != crtx.CodeInvalidRequest {
				t.Errorf("%s: %v, want invalid_request", tc.msg, err)
			}
		} else if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.msg, err, tc.want)
		}
	}
	deep := `{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"},{"data":` + strings.Repeat(`{"a":`, 64) + `1` + strings.Repeat(`}`, 64) + `}]}`
	if _, err := readMessage("agent-1", message(t, deep)); crtx.ErrorCode(err) != crtx.CodeInvalidRequest {
		t.Errorf("parameters 64 deep: %v", err)
	}
	if _, err := readMessage("agent-1", nil); crtx.ErrorCode(err) != crtx.CodeInvalidRequest {
		t.Errorf("no message: %v", err)
	}
}

// FuzzA2AMessage: any message the SDK decodes either is refused with an
// error a client can act on, or reads as an execution the market can
// store, the same way every time.
func FuzzA2AMessage(f *testing.F) {
	for _, s := range []string{
		`{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"count"},{"data":{"lang":"en"}}],"metadata":{"max_cost_usdc":"0.25","timeout_seconds":30}}`,
		`{"messageId":"m","role":"ROLE_USER","parts":[{"text":"a"},{"text":"b"}]}`,
		`{"messageId":"m","taskId":"t","parts":[{"url":"u"}]}`,
		`{"messageId":"m","parts":[{"text":"x"},{"data":{"k":[{"a":null}]}}],"metadata":{"timeout_seconds":1e300}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var msg a2a.Message
		if json.Unmarshal(data, &msg) != nil {
			return
		}
		o, err := readMessage("agent", &msg)
		if err != nil {
			var ce *crtx.Error
			var ae *a2a.Error
			if !errors.As(err, &ce) && !errors.As(err, &ae) {
				t.Fatalf("error %v is neither a crtx nor an A2A error", err)
			}
			return
		}
		p := o.params
		if p.Task == "" || !utf8.ValidString(p.Task) || strings.ContainsRune(p.Task, 0) {
			t.Fatalf("task %q", p.Task)
		}
		if p.Parameters != nil {
			var obj map[string]any
			if json.Unmarshal(p.Parameters, &obj) != nil || obj == nil || strings.Contains(string(p.Parameters), `\u0000`) {
				t.Fatalf("parameters %s", p.Parameters)
			}
		}
		if p.TimeoutSeconds != nil && *p.TimeoutSeconds < 1 {
			t.Fatalf("timeout %d", *p.TimeoutSeconds)
		}
		if len(o.key) > 255 || !strings.HasPrefix(o.key, idempotencyPrefix) || len(o.hash) != 64 {
			t.Fatalf("key %q hash %q", o.key, o.hash)
		}
		again, err := readMessage("agent", &msg)
		if err != nil || again.hash != o.hash || again.params.Task != p.Task {
			t.Fatalf("read twice differently: %+v, %v", again, err)
		}
	})
}
