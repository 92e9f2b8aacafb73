package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/chain/chaintest"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/sse"
	"github.com/crtx-market/crtx/x402"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A streamed call passes the creator's words on as it writes them: the
// creator writes its second piece only once the caller has read the
// first. The record that ends the stream is the call's, charged as any.
func TestStreamedCall(t *testing.T) {
	m := newMarket(t, "10")
	read := make(chan struct{})
	svc := newStreamService(t, func(ctx context.Context, r creator.Request, yield func(string)) (int, error) {
		yield("Bon")
		if !r.Test { // the listing's reachability test has no reader
			select {
			case <-read:
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
		yield("jour, ")
		yield(r.Task)
		return 7, nil
	})
	agent := m.list(svc, "0.25")
	before := m.balance(m.callerW, crtx.Devnet)
	var got []string
	rec, err := m.key.ExecuteStream(bounded(t), agent, run("monde"), client.ExecuteOptions{}, func(text string) {
		if len(got) == 0 {
			close(read)
		}
		got = append(got, text)
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != "Bon|jour, |monde" || rec.Status != crtx.ExecCompleted || rec.Result == nil || *rec.Result != "Bonjour, monde" ||
		*rec.ResultHash != crtx.ResultHash("Bonjour, monde") || rec.TokensUsed == nil || *rec.TokensUsed != 7 {
		t.Fatalf("pieces %q, record %+v", got, rec)
	}
	if after := m.balance(m.callerW, crtx.Devnet); before.Available-after.Available != usdc("0.25") {
		t.Fatalf("charged %s, want 0.25", before.Available-after.Available)
	}
	if report, err := m.key.Verify(ctx, rec.ExecutionID); err != nil || !report.OK() {
		t.Fatalf("verify: %+v, %v", report, err)
	}

	// A creator that answers whole streams as one piece.
	whole := m.list(newService(t, echo), "0.25")
	got = nil
	rec, err = m.key.ExecuteStream(bounded(t), whole, run("x"), client.ExecuteOptions{}, func(text string) { got = append(got, text) })
	if err != nil || len(got) != 1 || got[0] != "echo: x" || *rec.Result != "echo: x" {
		t.Fatalf("whole answer streamed: %q, %+v, %v", got, rec, err)
	}

	// A call refused before it began is answered as any: a JSON error.
	_, err = m.key.ExecuteStream(bounded(t), "agt_nobody", run("x"), client.ExecuteOptions{}, func(string) { t.Error("a piece of nothing") })
	wantCode(t, err, http.StatusNotFound, crtx.CodeAgentNotFound)
}

// bonjour streams "Bon", "jour, " and the task, and reports 7 tokens.
func bonjour(_ context.Context, r creator.Request, yield func(string)) (int, error) {
	yield("Bon")
	yield("jour, ")
	yield(r.Task)
	return 7, nil
}

// unjoined serves a creator whose stream's signed result is not its pieces
// joined ("Bon", then "Hello"), but on its listing's reachability test;
// it returns its URL, its key and the price to list it at.
func unjoined(t *testing.T) (url, pub, price string) {
	t.Helper()
	key := agentKey()
	h := creator.NewHandler(key, echo, creator.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in crtx.CreatorRequest
		json.NewDecoder(r.Body).Decode(&in)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: delta\ndata: {\"text\":\"Bon\"}\n\n")
		w.(http.Flusher).Flush()
		other := "Hello"
		if r.Header.Get(crtx.HeaderTest) == "true" {
			other = "Bon" // the listing's reachability test passes
		}
		hash := crtx.ResultHash(other)
		sig := crtx.SignResult(key, hash)
		b, _ := json.Marshal(crtx.CreatorReply{ExecutionID: in.ExecutionID, Status: "completed", Result: &other, ResultHash: &hash, Signature: &sig})
		fmt.Fprintf(w, "event: result\ndata: %s\n\n", b)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, h.PublicKey(), "0.25"
}

// A stream whose signed result is not its pieces joined fails, refunded,
// and its last event says why, after the pieces it sent. (The creator
// answers its listing's reachability test well.)
func TestStreamThatDoesNotAddUpIsRefunded(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.listAt(unjoined(t))

	before := m.balance(m.callerW, crtx.Devnet)
	var got []string
	rec, err := m.key.ExecuteStream(bounded(t), agent, run("x"), client.ExecuteOptions{}, func(text string) { got = append(got, text) })
	ce := wantCode(t, err, http.StatusBadGateway, crtx.CodeInvalidAgentResponse)
	if !strings.Contains(ce.Message, "not its deltas joined") || len(got) != 1 || rec.Status != crtx.ExecFailed || rec.Result != nil {
		t.Fatalf("pieces %q, record %+v, error %v", got, rec, err)
	}
	if after := m.balance(m.callerW, crtx.Devnet); after != before {
		t.Fatalf("balance %+v, was %+v", after, before)
	}
}

// A streamed call paid with x402 is paid before its first piece: the
// stream's headers carry the settled PAYMENT-RESPONSE, and the payer's
// USDC left once.
func TestX402StreamIsPaidFirst(t *testing.T) {
	x := newX402Market(t)
	agent := x.list(newStreamService(t, func(_ context.Context, r creator.Request, yield func(string)) (int, error) {
		yield("Bon")
		yield("jour")
		return 0, nil
	}), "0.02", map[string]any{"timeout_seconds": 5})
	pr := x.requirements(agent)
	p := x402.PaymentPayload{X402Version: 2, Resource: &pr.Resource, Accepted: pr.Accepts[0]}
	p.Payload.Transaction = chaintest.NewPayment(t, x.chain.treasury, x.payer.key, x.chain.mint, x.chain.treasury, 20_000).Encode(t, x.chain.net.Blockhash(t))
	status, _, _, sr, raw := x.post(agent, x402.EncodeHeader(p), crtx.ExecuteParams{Task: "x", Stream: true})
	if status != 200 || sr == nil || !sr.Success || sr.Transaction == "" {
		t.Fatalf("streamed x402 call: %d %+v %s", status, sr, raw)
	}
	var pieces []string
	var rec api.ExecutionRecord
	for r := sse.NewReader(bytes.NewReader(raw), int64(len(raw))); ; {
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("after %q: %v in %s", pieces, err, raw)
		}
		if ev.Name == crtx.EventDelta {
			var d crtx.Delta
			json.Unmarshal(ev.Data, &d)
			pieces = append(pieces, d.Text)
			continue
		}
		json.Unmarshal(ev.Data, &rec)
		break
	}
	if strings.Join(pieces, "|") != "Bon|jour" || rec.Status != crtx.ExecCompleted || *rec.Result != "Bonjour" {
		t.Fatalf("pieces %q, record %+v", pieces, rec)
	}
	if held := x.held(); held != x.start-usdc("0.02") {
		t.Errorf("the payer holds %s after one streamed call of 0.02 from %s", held, x.start)
	}
}

// Over MCP, a streaming creator's pieces reach a client that asked for
// progress as progress messages, in order, before the run's final state;
// the tool's answer is the whole result, as for any run.
func TestMCPProgressCarriesThePieces(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newStreamService(t, bonjour), "0.25")
	progress := &progressLog{}
	cs := mcpSession(t, m.env, m.key, progress)
	res, err := cs.CallTool(bounded(t), &sdk.CallToolParams{Name: "run_agent", Arguments: map[string]any{"agent_id": agent, "task": "monde"},
		Meta: sdk.Meta{"progressToken": "p"}})
	if err != nil || res.IsError {
		t.Fatalf("run_agent: %v %+v", err, res)
	}
	if text, _ := res.Content[0].(*sdk.TextContent); text == nil || text.Text != "Bonjour, monde" {
		t.Fatalf("run_agent answered %+v", res.Content)
	}
	if got, pieces := progress.completed(); strings.Join(pieces, "|") != "Bon|jour, |monde" {
		t.Fatalf("progress %q", got)
	}
}

// Over A2A, message/stream carries a streaming creator's pieces as chunks
// of the result artifact as they are written (the first new, the rest
// appended), then its last chunk with the settlement, then completed.
func TestA2AStreamAppendsThePieces(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newStreamService(t, bonjour), "0.25")
	c := m.a2a(t, agent, m.key.Token(), a2a.TransportProtocolJSONRPC)
	var pieces []string
	var appends []bool
	var last *a2a.TaskArtifactUpdateEvent
	var final a2a.TaskState
	for ev, err := range c.SendStreamingMessage(c.ctx, &a2a.SendMessageRequest{Message: userMessage(a2a.NewTextPart("monde"))}) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev := ev.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			if ev.LastChunk {
				last = ev
				continue
			}
			pieces, appends = append(pieces, ev.Artifact.Parts[0].Text()), append(appends, ev.Append)
		case *a2a.TaskStatusUpdateEvent:
			final = ev.Status.State
		}
	}
	if strings.Join(pieces, "|") != "Bon|jour, |monde" || fmt.Sprint(appends) != "[false true true]" {
		t.Fatalf("pieces %q, appended %v", pieces, appends)
	}
	if last == nil || !last.Append || len(last.Artifact.Parts) != 1 || final != a2a.TaskStateCompleted {
		t.Fatalf("last chunk %+v, final state %s", last, final)
	}
	if rec, ok := last.Artifact.Parts[0].Data().(map[string]any); !ok || rec["result_hash"] != crtx.ResultHash("Bonjour, monde") {
		t.Fatalf("the last chunk's record: %+v", last.Artifact.Parts[0])
	}
}

// A stream cut short is resumed from the last piece read, by the id its
// headers gave: the pieces after it, then the record; the call itself
// went on when the caller left.
func TestStreamResumesAfterACut(t *testing.T) {
	m := newMarket(t, "10")
	more, last := newGate(t), newGate(t)
	agent := m.list(newStreamService(t, func(ctx context.Context, r creator.Request, yield func(string)) (int, error) {
		yield("Bon")
		for _, g := range []*gate{more, last} {
			if r.Test {
				break
			}
			select {
			case <-g.c:
			case <-ctx.Done():
				return 0, ctx.Err()
			}
			if g == more {
				yield("jour, ")
			}
		}
		yield(r.Task)
		return 0, nil
	}), "0.25")
	t.Cleanup(func() { more.open(); last.open() })

	cut, stop := context.WithCancel(bounded(t))
	req, _ := http.NewRequestWithContext(cut, "POST", m.d.URL+"/v1/agents/"+agent+"/execute", strings.NewReader(`{"task":"monde","stream":true}`))
	req.Header.Set("Authorization", "Bearer "+m.key.Token())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	id := resp.Header.Get("X-Crtx-Execution-Id")
	first, err := sse.NewReader(resp.Body, 1<<20).Next()
	if err != nil || first.ID != "1" || string(first.Data) != `{"text":"Bon"}` || id == "" {
		t.Fatalf("first event %+v, %v; execution %q", first, err, id)
	}
	stop() // the caller's connection is lost
	resp.Body.Close()
	more.open()

	var got []string
	rec, err := m.key.ResumeStream(bounded(t), id, 1, func(text string) {
		got = append(got, text)
		last.open()
	})
	if err != nil || strings.Join(got, "|") != "jour, |monde" || rec.Status != crtx.ExecCompleted || *rec.Result != "Bonjour, monde" {
		t.Fatalf("resumed: %q, %+v, %v", got, rec, err)
	}
	// Just after the call ended its pieces are still here, for a resume
	// that waited for the next as it ended; a caller that read nothing
	// gets them all. (Where there are none, it gets the whole as one piece:
	// TestStreamResumedWithoutPieces.)
	got = nil
	if rec, err := m.key.ResumeStream(bounded(t), id, 0, func(text string) { got = append(got, text) }); err != nil || strings.Join(got, "|") != "Bon|jour, |monde" || rec.ExecutionID != id {
		t.Fatalf("resumed after the end: %q, %+v, %v", got, rec, err)
	}
}

// A stream resumed where its call's pieces are not held (on another
// replica, some seconds after it ended, or from a creator that does not
// stream) is its last event, with the whole result as one delta first for
// a caller that read nothing.
func TestStreamResumedWithoutPieces(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newService(t, echo), "0.25")
	var got []string
	rec, err := m.key.ExecuteStream(bounded(t), agent, run("salut"), client.ExecuteOptions{}, func(text string) { got = append(got, text) })
	if err != nil || len(got) != 1 || rec.Status != crtx.ExecCompleted || got[0] != *rec.Result {
		t.Fatalf("streamed: %q, %+v, %v", got, rec, err)
	}
	got = nil
	again, err := m.key.ResumeStream(bounded(t), rec.ExecutionID, 0, func(text string) { got = append(got, text) })
	if err != nil || len(got) != 1 || got[0] != *rec.Result || again.ExecutionID != rec.ExecutionID || *again.Result != *rec.Result {
		t.Fatalf("resumed: %q, %+v, %v", got, again, err)
	}
	got = nil
	if _, err := m.key.ResumeStream(bounded(t), rec.ExecutionID, 1, func(text string) { got = append(got, text) }); err != nil || len(got) != 0 {
		t.Fatalf("resumed after the one piece: %q, %v", got, err)
	}
}
