package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
)

// streamer answers as a streaming creator: each of deltas as an event,
// flushed, then the result event with result (or no result event at all
// when result is nil).
func streamer(t *testing.T, deltas []string, result *string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			t.Errorf("Accept %q", r.Header.Get("Accept"))
		}
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		fmt.Fprint(w, ": hello\n\n")
		for i, d := range deltas {
			b, _ := json.Marshal(crtx.Delta{Text: d})
			fmt.Fprintf(w, "id: %d\nevent: delta\ndata: %s\n\n", i+1, b)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "event: later-version\ndata: {}\n\n")
		if result != nil {
			b, _ := json.Marshal(crtx.CreatorReply{ExecutionID: "x", Status: "completed", Result: result})
			fmt.Fprintf(w, "event: result\ndata: %s\n\n", b)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A streamed reply's deltas reach the caller in order as they come, and
// its result event is the reply; a result that is not the deltas joined,
// a stream without a result, and a delta that is not {"text"} are invalid
// answers.
func TestStreamedReply(t *testing.T) {
	c := newCaller(true, nil)
	call := func(srv *httptest.Server) ([]string, crtx.CreatorReply, error) {
		var got []string
		reply, err := c.Call(context.Background(), srv.URL, crtx.RequestScope{Environment: crtx.Devnet}, crtx.CreatorRequest{ExecutionID: "x"},
			func(s string) { got = append(got, s) })
		return got, reply, err
	}
	whole := "Bonjour, monde"
	got, reply, err := call(streamer(t, []string{"Bon", "jour, ", "monde"}, &whole))
	if err != nil || reply.Result == nil || *reply.Result != whole || strings.Join(got, "|") != "Bon|jour, |monde" {
		t.Fatalf("streamed: %q, %+v, %v", got, reply, err)
	}
	other := "Bonjour, tout le monde"
	notText := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: delta\ndata: Bon\n\n")
	}))
	t.Cleanup(notText.Close)
	for name, srv := range map[string]*httptest.Server{
		"the streamed result is not its deltas joined": streamer(t, []string{"Bon", "jour, ", "monde"}, &other),
		"the stream ended without its result event":    streamer(t, []string{"Bon"}, nil),
		"a delta event's data is not":                  notText,
	} {
		_, _, err := call(srv)
		var ce *crtx.CallError
		if !errors.As(err, &ce) || ce.Code != crtx.CodeInvalidAgentResponse || !strings.Contains(ce.Message, name) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A stream is bounded by its text, not its framing: a result of
// token-sized pieces, whose events weigh ten times its text, is read
// whole; pieces past a result's size are refused.
func TestStreamIsBoundedByItsText(t *testing.T) {
	c := newCaller(true, nil)
	small := make([]string, 200_000)
	for i := range small {
		small[i] = "abcd"
	}
	whole := strings.Join(small, "")
	n := 0
	reply, err := c.Call(context.Background(), streamer(t, small, &whole).URL, crtx.RequestScope{Environment: crtx.Devnet},
		crtx.CreatorRequest{ExecutionID: "x"}, func(string) { n++ })
	if err != nil || n != len(small) || reply.Result == nil || *reply.Result != whole {
		t.Fatalf("%d token-sized pieces: %d given, %v", len(small), n, err)
	}
	big := strings.Repeat("x", 64<<10)
	over := make([]string, crtx.MaxResultBytes/len(big)+1)
	for i := range over {
		over[i] = big
	}
	_, err = c.Call(context.Background(), streamer(t, over, nil).URL, crtx.RequestScope{Environment: crtx.Devnet}, crtx.CreatorRequest{ExecutionID: "x"}, nil)
	var ce *crtx.CallError
	if !errors.As(err, &ce) || ce.Code != crtx.CodeInvalidAgentResponse || !strings.Contains(ce.Message, "streamed result is larger than") {
		t.Fatalf("over a result's size: %v", err)
	}
}
