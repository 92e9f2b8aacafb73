package openai

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/gate"
	"github.com/crtx-market/crtx/internal/markettest"
	"github.com/crtx-market/crtx/market"
)

// The task is the user's one message, or the whole conversation when
// turns come before it; text parts are read, other parts refused.
func TestTaskOf(t *testing.T) {
	msg := func(role, content string) message { return message{Role: role, Content: json.RawMessage(content)} }
	for _, c := range []struct {
		msgs []message
		want string
	}{
		{[]message{msg("user", `"Bonjour"`)}, "Bonjour"},
		{[]message{msg("user", `[{"type":"text","text":"Bon"},{"type":"text","text":"jour"}]`)}, "Bon\njour"},
		{[]message{msg("system", `"Be brief."`), msg("user", `"Hi"`), msg("assistant", `"Hello!"`), msg("user", `"Bye"`)},
			"system: Be brief.\n\nuser: Hi\n\nassistant: Hello!\n\nuser: Bye"},
	} {
		if got, err := taskOf(c.msgs); err != nil || got != c.want {
			t.Errorf("%v: %q, %v; want %q", c.msgs, got, err, c.want)
		}
	}
	for _, msgs := range [][]message{nil, {msg("assistant", `"Hi"`)}, {msg("user", `[{"type":"image_url"}]`)}, {msg("user", `3`)}} {
		if _, err := taskOf(msgs); crtx.ErrorCode(err) != crtx.CodeInvalidRequest {
			t.Errorf("%v: %v, want invalid_request", msgs, err)
		}
	}
}

// One call as a completion, one as a stream, and a refusal in OpenAI's
// error shape, over a real market; each call is charged once.
func TestChatCompletions(t *testing.T) {
	m := markettest.New(t, func(m *market.Market, g *gate.Gate) http.Handler { return New(m, Options{Gate: g}) })
	post := func(body string) *http.Response {
		req, _ := http.NewRequest("POST", m.URL+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+m.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	resp := post(`{"model":"` + m.Agent + `","messages":[{"role":"user","content":"Ada"}]}`)
	var c completion
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || resp.StatusCode != 200 || len(c.Choices) != 1 ||
		c.Choices[0].Message.Content != markettest.Result("Ada") || resp.Header.Get("X-Crtx-Execution-Id") != c.Crtx.ExecutionID {
		t.Fatalf("completion: %d %+v %v", resp.StatusCode, c, err)
	}

	resp = post(`{"model":"` + m.Agent + `","messages":[{"role":"user","content":"Bob"}],"stream":true,"stream_options":{"include_usage":true}}`)
	var text strings.Builder
	var lines []string
	for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		lines = append(lines, data)
		var ch chunk
		if data != "[DONE]" && json.Unmarshal([]byte(data), &ch) == nil && len(ch.Choices) == 1 && ch.Choices[0].Delta.Content != nil {
			text.WriteString(*ch.Choices[0].Delta.Content)
		}
	}
	if resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("X-Crtx-Execution-Id") == "" ||
		text.String() != markettest.Result("Bob") || lines[len(lines)-1] != "[DONE]" ||
		!strings.Contains(lines[len(lines)-2], `"usage"`) {
		t.Fatalf("stream: %q, %q", text.String(), lines)
	}

	resp = post(`{"model":"agt_nobody","messages":[{"role":"user","content":"x"}]}`)
	var e errorBody
	if json.NewDecoder(resp.Body).Decode(&e); resp.StatusCode != 404 || e.Error.Code != crtx.CodeAgentNotFound || e.Error.Type != "not_found_error" ||
		resp.Header.Get("X-Should-Retry") != "false" {
		t.Fatalf("refusal: %d %+v", resp.StatusCode, e)
	}
	if b := m.Balance(t); b.Available != markettest.Funds-2*markettest.Price {
		t.Fatalf("balance %+v after two calls", b)
	}
}

// Any body a client sends makes a task or an invalid_request refusal,
// never a panic, and a task is text.
func FuzzTaskOf(f *testing.F) {
	f.Add([]byte(`[{"role":"user","content":"Bonjour"}]`))
	f.Add([]byte(`[{"role":"system","content":"Be brief."},{"role":"user","content":[{"type":"text","text":"Hi"}]}]`))
	f.Add([]byte(`[{"role":"assistant","content":3}]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var msgs []message
		if json.Unmarshal(raw, &msgs) != nil {
			return
		}
		task, err := taskOf(msgs)
		if err != nil && crtx.ErrorCode(err) != crtx.CodeInvalidRequest {
			t.Fatalf("%s: %v", raw, err)
		}
		if err == nil && len(msgs) == 0 {
			t.Fatalf("%s: a task %q of no message", raw, task)
		}
	})
}
