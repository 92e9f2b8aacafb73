package creator_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/sse"
)

// A stream handler sends each piece as an event as it comes, then the
// result event, signed over the pieces joined; a request that does not
// accept a stream, and a retry of the same execution, get one JSON reply.
func TestStreamHandler(t *testing.T) {
	_, key, _ := ed25519.GenerateKey(nil)
	h := creator.NewStreamHandler(key, func(_ context.Context, r creator.Request, yield func(string)) (int, error) {
		for _, w := range strings.Fields(r.Task) {
			yield(w + " ")
		}
		return 3, nil
	}, creator.Options{})
	url := serve(t, h)
	ask := func(id string, accept string) *http.Response {
		body, _ := json.Marshal(crtx.CreatorRequest{ExecutionID: id, Task: "un deux trois", TimeoutSeconds: 10})
		req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	resp := ask("e1", "application/json, text/event-stream")
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	r := sse.NewReader(resp.Body, 1<<20)
	var pieces []string
	var reply crtx.CreatorReply
	for {
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("after %q: %v", pieces, err)
		}
		if ev.Name == crtx.EventDelta {
			var d crtx.Delta
			json.Unmarshal(ev.Data, &d)
			pieces = append(pieces, d.Text)
			continue
		}
		if ev.Name != crtx.EventResult || json.Unmarshal(ev.Data, &reply) != nil {
			t.Fatalf("event %+v", ev)
		}
		break
	}
	want := "un deux trois "
	if strings.Join(pieces, "|") != "un |deux |trois " || reply.Result == nil || *reply.Result != want || *reply.TokensUsed != 3 {
		t.Fatalf("pieces %q, reply %+v", pieces, reply)
	}
	req := crtx.CreatorRequest{ExecutionID: "e1"}
	if err := crtx.CheckReply(req, reply, key.Public().(ed25519.PublicKey)); err != nil {
		t.Fatalf("the streamed reply: %v", err)
	}
	for _, c := range []struct{ id, accept string }{{"e1", "text/event-stream"}, {"e2", "application/json"}} {
		resp := ask(c.id, c.accept)
		data, _ := io.ReadAll(resp.Body)
		var again crtx.CreatorReply
		if resp.Header.Get("Content-Type") != "application/json" || json.Unmarshal(data, &again) != nil || again.Result == nil || *again.Result != want {
			t.Errorf("%s with Accept %q: %s %s", c.id, c.accept, resp.Header.Get("Content-Type"), data)
		}
	}
}
