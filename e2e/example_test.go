package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
)

// A listing may give an example call that works as pasted: parameters
// its input schema refuses, or a task its endpoint fails, are refused when
// listed (the endpoint test runs the example); a listed one is in the
// agent's record, its page's Try-it form and its code samples, and runs;
// an edit to an empty task removes it.
func TestListingExampleWorksAsShown(t *testing.T) {
	m := newMarket(t, "10")
	var mu sync.Mutex
	var tests []string
	svc := newService(t, func(_ context.Context, r creator.Request) (string, int, error) {
		if r.Test {
			mu.Lock()
			tests = append(tests, r.Task+" "+string(r.Parameters))
			mu.Unlock()
		}
		if !strings.HasPrefix(r.Task, "count:") {
			return "", 0, creator.InvalidInput("the task must start with count:")
		}
		return "2 words", 0, nil
	})
	base := params(svc, "0.01")
	fieldOf := func(err error) string {
		t.Helper()
		var ce *client.Error
		if !errors.As(err, &ce) || len(ce.Fields) == 0 {
			return ""
		}
		return ce.Fields[0].Field
	}
	_, err := list(m.creatorC, base.with("example_task", "count: two words").with("example_parameters", json.RawMessage(`{"lang":7}`)))
	if e := wantCode(t, err, 400, "invalid_request"); e != nil && !strings.Contains(e.Message, "example_parameters") {
		t.Errorf("example parameters the schema refuses: %s", e.Message)
	}
	_, err = list(m.creatorC, base.with("example_task", "Hello"))
	if e := wantCode(t, err, 400, "invalid_request"); e != nil && (!strings.Contains(e.Message, "example_task") ||
		!strings.Contains(e.Message, "the task must start with count:")) {
		t.Errorf("an example its endpoint fails: %s (%q)", e.Message, fieldOf(err))
	}
	a, err := list(m.creatorC, base.with("example_task", "count: two words").with("example_parameters", json.RawMessage(`{"lang":"en"}`)))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	last := tests[len(tests)-1]
	mu.Unlock()
	if last != `count: two words {"lang":"en"}` {
		t.Errorf("the listing's endpoint test sent %q, want its example", last)
	}
	got, err := m.anon.Agent(ctx, a.AgentID, crtx.Mainnet)
	if err != nil || got.ExampleTask != "count: two words" || string(got.ExampleParameters) != `{"lang":"en"}` {
		t.Errorf("the listed example: %q %s (%v)", got.ExampleTask, got.ExampleParameters, err)
	}
	rec, err := m.liveKey.Execute(ctx, a.AgentID, crtx.ExecuteParams{Task: got.ExampleTask, Parameters: got.ExampleParameters}, client.ExecuteOptions{})
	if err != nil || rec.Status != crtx.ExecCompleted {
		t.Errorf("the example, run as shown: %+v, %v", rec, err)
	}
	resp, err := http.Get(m.d.URL + "/agents/" + a.AgentID)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), ">count: two words</textarea>") || !strings.Contains(string(page), `&#34;task&#34;:&#34;count: two words&#34;`) ||
		strings.Contains(string(page), "Hello") {
		t.Error("the agent's page does not fill its Try-it form and samples with the listing's example")
	}
	// An edit is held to the example too: a new schema it does not fit, or
	// an example the endpoint fails, is refused.
	_, err = patch(m.creatorC, a.AgentID, map[string]any{"input_schema": json.RawMessage(`{"type":"object","properties":{"top":{"type":"integer"}},"required":["top"]}`)})
	if e := wantCode(t, err, 400, "invalid_request"); e != nil && !strings.Contains(e.Message, "example_parameters") {
		t.Errorf("a schema the kept example does not fit: %s", e.Message)
	}
	_, err = patch(m.creatorC, a.AgentID, map[string]any{"example_task": "Hello"})
	if e := wantCode(t, err, 400, "invalid_request"); e != nil && !strings.Contains(e.Message, "the task must start with count:") {
		t.Errorf("an edited example its endpoint fails: %s", e.Message)
	}
	if _, err := patch(m.creatorC, a.AgentID, map[string]any{"example_task": ""}); err != nil {
		t.Fatal(err)
	}
	if got, _ := m.anon.Agent(ctx, a.AgentID, crtx.Mainnet); got.ExampleTask != "" || got.ExampleParameters != nil {
		t.Errorf("after removing the example: %q %s", got.ExampleTask, got.ExampleParameters)
	}
}
