package e2e_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/crtx-market/crtx"
	crtxa2a "github.com/crtx-market/crtx/a2a"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/daemon"
)

// recorder is an HTTP transport that keeps the last response's status,
// headers and (for a refusal) body: what a2aclient reads past.
type recorder struct {
	mu     sync.Mutex
	status int
	header http.Header
	body   []byte
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status, r.header, r.body = resp.StatusCode, resp.Header.Clone(), nil
	if resp.StatusCode != http.StatusOK {
		// A refusal is short; a 200 may be a stream, left to flow.
		r.body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(r.body))
	}
	return resp, nil
}

func (r *recorder) last() (int, http.Header, []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status, r.header, r.body
}

// a2aCaller is an A2A client of one agent, made as any A2A client is: from
// the agent's card, with the API key given to the SDK's auth interceptor
// for the scheme the card declares.
type a2aCaller struct {
	*a2aclient.Client
	card *a2a.AgentCard
	rec  *recorder
	ctx  context.Context // carries the session the credential is kept under
}

func (m *marketplace) a2a(t *testing.T, agentID, token string, prefer a2a.TransportProtocol, more ...a2aclient.CallInterceptor) *a2aCaller {
	t.Helper()
	rec := &recorder{}
	hc := &http.Client{Transport: rec, Timeout: time.Minute}
	card, err := (&agentcard.Resolver{Client: hc, CardParser: crtxa2a.ParseCard}).Resolve(ctx, m.d.URL+"/a2a/"+agentID)
	if err != nil {
		t.Fatalf("resolve card: %v", err)
	}
	creds := a2aclient.NewInMemoryCredentialsStore()
	if token != "" {
		creds.Set("test", "crtx_api_key", a2aclient.AuthCredential(token))
	}
	c, err := a2aclient.NewFromCard(ctx, card,
		a2aclient.WithJSONRPCTransport(hc), a2aclient.WithRESTTransport(hc),
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{prefer}}),
		a2aclient.WithCallInterceptors(append([]a2aclient.CallInterceptor{&a2aclient.AuthInterceptor{Service: creds}}, more...)...))
	if err != nil {
		t.Fatalf("a2a client: %v", err)
	}
	bctx := bounded(t)
	return &a2aCaller{Client: c, card: card, rec: rec, ctx: a2aclient.AttachSessionID(bctx, "test")}
}

func (c *a2aCaller) send(msg *a2a.Message, immediately bool) (*a2a.Task, error) {
	req := &a2a.SendMessageRequest{Message: msg}
	if immediately {
		req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
	}
	res, err := c.SendMessage(c.ctx, req)
	if err != nil {
		return nil, err
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		return nil, errors.New("SendMessage answered a message, not a task")
	}
	return task, nil
}

func (c *a2aCaller) wait(t *testing.T, id a2a.TaskID) *a2a.Task {
	t.Helper()
	for {
		task, err := c.GetTask(c.ctx, &a2a.GetTaskRequest{ID: id})
		if err != nil {
			t.Fatalf("get task: %v", err)
		}
		if task.Status.State.Terminal() {
			return task
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func userMessage(parts ...*a2a.Part) *a2a.Message {
	return a2a.NewMessage(a2a.MessageRoleUser, parts...)
}

// wantA2A asserts that err is the A2A error kind carrying the crtx code.
func wantA2A(t *testing.T, err error, kind error, code string) *a2a.Error {
	t.Helper()
	var ae *a2a.Error
	if !errors.Is(err, kind) || !errors.As(err, &ae) {
		t.Fatalf("got %v, want %v", err, kind)
	}
	if code != "" && (ae.Details["code"] != code || ae.Details["message"] == "") {
		t.Fatalf("got details %v, want code %s and a message", ae.Details, code)
	}
	return ae
}

// result is a completed task's artifact: its text and its record part.
func result(t *testing.T, task *a2a.Task) (string, map[string]any) {
	t.Helper()
	if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) != 2 {
		t.Fatalf("task %s is %s with artifacts %+v", task.ID, task.Status.State, task.Artifacts)
	}
	parts := task.Artifacts[0].Parts
	rec, ok := parts[1].Data().(map[string]any)
	if !ok || parts[0].MediaType != "text/plain" {
		t.Fatalf("artifact parts %+v", parts)
	}
	return parts[0].Text(), rec
}

func TestA2ACard(t *testing.T) {
	m := newMarket(t, "10")
	svc := newService(t, echo)
	agent := m.list(svc, "0.05", map[string]any{"input_schema": json.RawMessage(`{"type":"object","properties":{
		"lang":{"type":"string","description":"The text's language.","enum":["en","de"],"examples":["en"]},
		"n":{"type":["integer","null"],"default":3}},"required":["lang"]}`)})
	for range 3 {
		if _, err := m.liveKey.Execute(ctx, agent, crtx.ExecuteParams{Task: "x", Parameters: json.RawMessage(`{"lang":"en"}`)}, client.ExecuteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	m.rollup()

	c := m.a2a(t, agent, "", a2a.TransportProtocolJSONRPC)
	card, endpoint := c.card, m.d.URL+"/a2a/"+agent
	if card.Name != "Word counter" || card.Description != "Counts words, lines and characters." || card.Version == "" ||
		card.DocumentationURL != m.d.URL+"/agents/"+agent || !card.Capabilities.Streaming || !card.Capabilities.PushNotifications {
		t.Errorf("card = %+v", card)
	}
	if len(card.SupportedInterfaces) != 2 || *card.SupportedInterfaces[0] != (a2a.AgentInterface{URL: endpoint, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "1.0"}) ||
		*card.SupportedInterfaces[1] != (a2a.AgentInterface{URL: endpoint, ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: "1.0"}) {
		t.Errorf("interfaces = %+v", card.SupportedInterfaces)
	}
	scheme, ok := card.SecuritySchemes["crtx_api_key"].(a2a.HTTPAuthSecurityScheme)
	if !ok || scheme.Scheme != "Bearer" || !strings.Contains(scheme.Description, "crtx_live_") || !strings.Contains(scheme.Description, "crtx_test_") {
		t.Errorf("security scheme = %#v", card.SecuritySchemes)
	}
	if _, ok := card.SecurityRequirements[0]["crtx_api_key"]; len(card.SecurityRequirements) != 1 || !ok {
		t.Errorf("security requirements = %#v", card.SecurityRequirements)
	}
	if len(card.Skills) != 1 {
		t.Fatalf("skills = %+v", card.Skills)
	}
	sk := card.Skills[0]
	if sk.ID != "execute" || strings.Join(sk.Tags, ",") != "writing,data" || strings.Join(sk.InputModes, ",") != "text/plain,application/json" ||
		len(sk.Examples) != 1 || sk.Examples[0] != `{"lang":"en","n":3}` ||
		!strings.Contains(sk.Description, "- lang (string, required): The text's language. One of \"en\", \"de\".") ||
		!strings.Contains(sk.Description, "- n (integer or null) Default 3.") {
		t.Errorf("skill = %+v", sk)
	}
	if len(card.Capabilities.Extensions) != 1 {
		t.Fatalf("extensions = %+v", card.Capabilities.Extensions)
	}
	ext := card.Capabilities.Extensions[0]
	p := ext.Params
	if ext.URI != crtxa2a.PricingExtension || ext.Required ||
		p["price_per_call_usdc"] != "0.050000" || p["executions"] != 3.0 || p["success_rate"] != 1.0 || p["latency_samples"] != 3.0 ||
		p["status"] != "active" || p["currency"] != "USDC" {
		t.Errorf("pricing extension = %+v", ext)
	}
	p50, ok50 := p["p50_ms"].(float64)
	p95, ok95 := p["p95_ms"].(float64)
	if !ok50 || !ok95 || p50 < 0 || p95 < p50 {
		t.Errorf("p50 %v, p95 %v", p["p50_ms"], p["p95_ms"])
	}

	// The signature, checked from first principles: the key from the
	// JWK set the header names, the payload the RFC 8785 form of the card
	// as served, without its signatures and, as A2A 1.0 §8.4.1 says,
	// without its default values (p50_ms is null until the agent ran).
	raw := httpGet(t, endpoint+"/.well-known/agent-card.json", "application/json")
	// In A2A 1.0's form, the JSON of its a2a.proto: scopes are a
	// StringList (here empty, {}), not a bare list.
	if !bytes.Contains(raw, []byte(`"securityRequirements":[{"schemes":{"crtx_api_key":{}}}]`)) {
		t.Errorf("the card is not in a2a.proto's JSON form:\n%s", raw)
	}
	// Read strictly against a2a.proto (v2.4.0's a2apb/v1): no member it
	// lacks, each of its type, and every field the proto marks REQUIRED
	// (google.api.field_behavior) present, in the card and in each
	// message it holds.
	var pc a2apb.AgentCard
	if err := protojson.Unmarshal(raw, &pc); err != nil {
		t.Errorf("the card is not an a2a.proto AgentCard: %v", err)
	}
	for _, missing := range missingRequired(pc.ProtoReflect(), "card") {
		t.Errorf("the card lacks %s, which a2a.proto requires", missing)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	sigs, _ := doc["signatures"].([]any)
	if len(sigs) != 1 {
		t.Fatalf("signatures = %v", doc["signatures"])
	}
	sig := sigs[0].(map[string]any)
	protected, _ := sig["protected"].(string)
	headerJSON, err := base64.RawURLEncoding.DecodeString(protected)
	if err != nil {
		t.Fatal(err)
	}
	var header struct{ Alg, Typ, Kid, Jku string }
	json.Unmarshal(headerJSON, &header)
	if header.Alg != "EdDSA" || header.Typ != "JOSE" || header.Kid == "" || header.Jku != m.d.URL+"/.well-known/jwks.json" {
		t.Fatalf("protected header %s", headerJSON)
	}
	var set struct {
		Keys []struct{ Kty, Crv, X, Kid, Alg string }
	}
	if err := json.Unmarshal(httpGet(t, header.Jku, "application/jwk-set+json"), &set); err != nil || len(set.Keys) != 1 {
		t.Fatalf("jwks = %+v, %v", set, err)
	}
	k := set.Keys[0]
	pub, err := base64.RawURLEncoding.DecodeString(k.X)
	if err != nil || k.Kty != "OKP" || k.Crv != "Ed25519" || k.Kid != header.Kid || len(pub) != ed25519.PublicKeySize {
		t.Fatalf("jwk = %+v", k)
	}
	var wk api.WellKnown
	json.Unmarshal(httpGet(t, m.d.URL+"/.well-known/crtx.json", "application/json"), &wk)
	if crtx.Address(pub) != wk.SigningPublicKey {
		t.Errorf("the card is not signed with the marketplace key of /.well-known/crtx.json")
	}
	signature, _ := base64.RawURLEncoding.DecodeString(sig["signature"].(string))
	verifies := func(doc map[string]any) bool {
		unsigned := map[string]any{}
		for k, v := range doc {
			if k != "signatures" {
				unsigned[k] = v
			}
		}
		payload, err := crtx.Canonical(withoutDefaults(unsigned))
		if err != nil {
			t.Fatal(err)
		}
		return ed25519.Verify(pub, []byte(protected+"."+base64.RawURLEncoding.EncodeToString(payload)), signature)
	}
	if !verifies(doc) {
		t.Errorf("the card's signature does not verify")
	}
	doc["capabilities"].(map[string]any)["extensions"].([]any)[0].(map[string]any)["params"].(map[string]any)["price_per_call_usdc"] = "0.000001"
	if verifies(doc) {
		t.Errorf("a card with another price verifies")
	}

	// A new agent has no latency yet; a paused one keeps its card; a
	// delisted, suspended or unknown one has none.
	fresh := m.list(newService(t, echo), "0.05")
	if p := m.a2a(t, fresh, "", a2a.TransportProtocolJSONRPC).card.Capabilities.Extensions[0].Params; p["p50_ms"] != nil || p["p95_ms"] != nil ||
		p["latency_samples"] != 0.0 || p["executions"] != 0.0 {
		t.Errorf("fresh agent's params = %v", p)
	}
	if _, err := patch(m.creatorC, fresh, map[string]any{"status": "paused"}); err != nil {
		t.Fatal(err)
	}
	if p := m.a2a(t, fresh, "", a2a.TransportProtocolJSONRPC).card.Capabilities.Extensions[0].Params; p["status"] != "paused" {
		t.Errorf("paused agent's status = %v", p["status"])
	}
	if _, err := m.creatorC.Delist(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	if _, err := m.admin.Suspend(ctx, agent, true); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{fresh, agent, crtx.NewUUID()} {
		_, err := agentcard.NewResolver(nil).Resolve(ctx, m.d.URL+"/a2a/"+id)
		var notOK *agentcard.ErrStatusNotOK
		if !errors.As(err, &notOK) || notOK.StatusCode != 404 {
			t.Errorf("card of %s: %v, want 404", id, err)
		}
	}
	wantCode(t, m.anon.Do(ctx, "GET", "/a2a/"+agent+"/.well-known/agent-card.json", "", nil, nil), 404, "agent_not_found")
	// Resolved against an agent URL without its trailing slash, the card
	// path leaves the agent out: not found, rather than a call wanting a key.
	err = m.anon.Do(ctx, "GET", "/a2a/.well-known/agent-card.json", "", nil, nil)
	wantCode(t, err, 404, "not_found")
	if !strings.Contains(err.Error(), "trailing slash") {
		t.Errorf("error %v does not say what to do", err)
	}
}

// withoutDefaults drops what A2A 1.0 §8.4.1 leaves out of a signed card:
// nulls, empty strings, lists and objects, and members left empty by that.
func withoutDefaults(v any) any {
	switch v := v.(type) {
	case string:
		if v == "" {
			return nil
		}
	case []any:
		var out []any
		for _, e := range v {
			if e = withoutDefaults(e); e != nil {
				out = append(out, e)
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			if e = withoutDefaults(e); e != nil {
				out[k] = e
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
	return v
}

func httpGet(t *testing.T, url, contentType string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != contentType {
		t.Fatalf("GET %s: %d %s, %v", url, resp.StatusCode, resp.Header.Get("Content-Type"), err)
	}
	return b
}

func TestA2ASendMessage(t *testing.T) {
	m := newMarket(t, "10")
	svc := newService(t, func(_ context.Context, r creator.Request) (string, int, error) {
		return "did " + r.Task + " with " + string(r.Parameters), 5, nil
	})
	agent := m.list(svc, "0.25")
	c := m.a2a(t, agent, m.key.Token(), a2a.TransportProtocolJSONRPC)
	before, creatorBefore := m.balance(m.callerW, crtx.Devnet), m.balance(m.creatorW, crtx.Devnet)

	msg := userMessage(a2a.NewTextPart("count"), a2a.NewTextPart("these words"), a2a.NewDataPart(map[string]any{"lang": "en"}))
	msg.Metadata = map[string]any{"max_cost_usdc": "0.25", "timeout_seconds": 20}
	task, err := c.send(msg, false)
	if err != nil {
		t.Fatal(err)
	}
	text, data := result(t, task)
	want := `did count` + "\n" + `these words with {"lang":"en"}`
	if text != want || data["execution_id"] != string(task.ID) || data["status"] != "completed" || data["cost_usdc"] != "0.250000" ||
		data["result_hash"] != crtx.ResultHash(want) || data["ipfs_url"] == nil ||
		data["on_chain_record"] != m.d.URL+"/explorer/account/"+crtx.AccountAddress(crtx.AccountEscrow, string(task.ID))+"?cluster=devnet" {
		t.Errorf("result %q, record %v", text, data)
	}
	if task.ContextID == "" || task.Status.Timestamp == nil {
		t.Errorf("task = %+v", task)
	}
	// The task is the execution: the REST record is the same call, charged
	// once, the creator's share pending until the roll-up.
	rec, err := m.key.Execution(ctx, string(task.ID))
	if err != nil || rec.Status != "completed" || *rec.Result != want || rec.Cost != usdc("0.25") {
		t.Fatalf("REST record = %+v, %v", rec, err)
	}
	charged := func() {
		t.Helper()
		if got := m.balance(m.callerW, crtx.Devnet); got.Available != before.Available-usdc("0.25") || got.Escrowed != 0 {
			t.Errorf("caller balance %+v, was %+v", got, before)
		}
	}
	charged()
	if got := m.balance(m.creatorW, crtx.Devnet); got.Pending != rec.CreatorAmount || rec.CreatorAmount+rec.PlatformAmount != usdc("0.25") {
		t.Errorf("creator balance %+v, creator amount %s", got, rec.CreatorAmount)
	}

	// The same message again: the same task, not another charge.
	again, err := c.send(msg, false)
	if err != nil || again.ID != task.ID {
		t.Fatalf("resent: %v, %v", again, err)
	}
	if text, _ := result(t, again); text != want {
		t.Errorf("resent result %q", text)
	}
	charged()
	// Another message under the same id is refused, uncharged.
	other := userMessage(a2a.NewTextPart("something else"))
	other.ID = msg.ID
	_, err = c.send(other, false)
	wantA2A(t, err, a2a.ErrInvalidParams, "idempotency_key_reused")
	charged()

	got, err := c.GetTask(c.ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || mustJSON(got.Artifacts) != mustJSON(task.Artifacts) || got.Status.State != a2a.TaskStateCompleted {
		t.Errorf("GetTask = %+v, %v", got, err)
	}
	_, err = c.GetTask(c.ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(crtx.NewUUID())})
	wantA2A(t, err, a2a.ErrTaskNotFound, "execution_not_found")
	// Through another agent's endpoint, or with the other environment's
	// key, the task does not exist.
	elsewhere := m.a2a(t, m.list(newService(t, echo), "0.01"), m.key.Token(), a2a.TransportProtocolJSONRPC)
	_, err = elsewhere.GetTask(elsewhere.ctx, &a2a.GetTaskRequest{ID: task.ID})
	wantA2A(t, err, a2a.ErrTaskNotFound, "execution_not_found")
	live := m.a2a(t, agent, m.liveKey.Token(), a2a.TransportProtocolJSONRPC)
	_, err = live.GetTask(live.ctx, &a2a.GetTaskRequest{ID: task.ID})
	wantA2A(t, err, a2a.ErrTaskNotFound, "execution_not_found")

	// The HTTP+JSON binding at the same URL runs the same way. (The
	// daemon's clock stands still unless moved: the second call starts later.)
	m.clock.Advance(time.Second)
	rest := m.a2a(t, agent, m.key.Token(), a2a.TransportProtocolHTTPJSON)
	second, err := rest.send(userMessage(a2a.NewTextPart("again")), false)
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := result(t, second); text != "did again with {}" {
		t.Errorf("REST binding result %q", text)
	}
	if got, err := rest.GetTask(rest.ctx, &a2a.GetTaskRequest{ID: task.ID}); err != nil || got.ID != task.ID {
		t.Errorf("REST binding GetTask = %+v, %v", got, err)
	}

	// ListTasks: this agent's tasks of the key's wallet, newest first.
	list, err := c.ListTasks(c.ctx, &a2a.ListTasksRequest{})
	if err != nil || list.TotalSize != 2 || len(list.Tasks) != 2 || list.Tasks[0].ID != second.ID || list.Tasks[1].ID != task.ID ||
		list.Tasks[0].Artifacts != nil || list.NextPageToken != "" {
		t.Fatalf("ListTasks = %+v, %v; %s", list, err, mustJSON(list.Tasks))
	}
	page, err := c.ListTasks(c.ctx, &a2a.ListTasksRequest{PageSize: 1, IncludeArtifacts: true})
	if err != nil || len(page.Tasks) != 1 || page.TotalSize != 2 || page.NextPageToken == "" || page.Tasks[0].ID != second.ID {
		t.Fatalf("first page = %+v, %v", page, err)
	}
	if text, _ := result(t, page.Tasks[0]); text != "did again with {}" {
		t.Errorf("listed artifact %q", text)
	}
	page, err = c.ListTasks(c.ctx, &a2a.ListTasksRequest{PageSize: 1, PageToken: page.NextPageToken})
	if err != nil || len(page.Tasks) != 1 || page.Tasks[0].ID != task.ID || page.NextPageToken != "" {
		t.Fatalf("second page = %+v, %v", page, err)
	}
	for _, q := range []*a2a.ListTasksRequest{{Status: a2a.TaskStateWorking}, {Status: a2a.TaskStateCanceled}, {Status: a2a.TaskStateRejected}, {ContextID: crtx.NewUUID()}} {
		if l, err := c.ListTasks(c.ctx, q); err != nil || len(l.Tasks) != 0 {
			t.Errorf("ListTasks(%+v) = %+v, %v", q, l, err)
		}
	}
	if l, err := c.ListTasks(c.ctx, &a2a.ListTasksRequest{ContextID: task.ContextID, Status: a2a.TaskStateCompleted}); err != nil || len(l.Tasks) != 1 || l.Tasks[0].ID != task.ID {
		t.Errorf("ListTasks by context = %+v, %v", l, err)
	}
	_, err = c.ListTasks(c.ctx, &a2a.ListTasksRequest{PageSize: 101})
	wantA2A(t, err, a2a.ErrInvalidParams, "invalid_request")
	if l, err := elsewhere.ListTasks(elsewhere.ctx, &a2a.ListTasksRequest{}); err != nil || len(l.Tasks) != 0 {
		t.Errorf("another agent's tasks = %+v, %v", l, err)
	}

	keys, _ := m.callerC.Keys(ctx)
	for _, k := range keys {
		if k.Environment == crtx.Devnet && (k.ExecutionCount != 2 || k.TotalSpent != usdc("0.5")) {
			t.Errorf("devnet key counted %d executions, %s", k.ExecutionCount, k.TotalSpent)
		}
	}
	m.rollup()
	if got := m.balance(m.creatorW, crtx.Devnet); got.Available != creatorBefore.Available+2*rec.CreatorAmount || got.Pending != 0 {
		t.Errorf("creator balance after the roll-up %+v", got)
	}
}

func TestA2AStream(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newService(t, slow(300*time.Millisecond)), "0.5")
	c := m.a2a(t, agent, m.key.Token(), a2a.TransportProtocolJSONRPC)
	rank := map[a2a.TaskState]int{a2a.TaskStateSubmitted: 1, a2a.TaskStateWorking: 2, a2a.TaskStateCompleted: 3}

	// events collects a stream: its states in order and the result.
	events := func(seq func(yield func(a2a.Event, error) bool)) (states []a2a.TaskState, id a2a.TaskID, text string) {
		t.Helper()
		for ev, err := range seq {
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			switch ev := ev.(type) {
			case *a2a.Task:
				if len(states) != 0 {
					t.Fatalf("a task after %v", states)
				}
				states, id = append(states, ev.Status.State), ev.ID
			case *a2a.TaskStatusUpdateEvent:
				if ev.TaskID != id {
					t.Fatalf("event of task %s in the stream of %s", ev.TaskID, id)
				}
				states = append(states, ev.Status.State)
			case *a2a.TaskArtifactUpdateEvent:
				if len(ev.Artifact.Parts) != 2 || states[len(states)-1] == a2a.TaskStateCompleted {
					t.Fatalf("artifact %+v after %v", ev.Artifact, states)
				}
				text = ev.Artifact.Parts[0].Text()
			default:
				t.Fatalf("event %T", ev)
			}
		}
		for i := 1; i < len(states); i++ {
			if rank[states[i]] <= rank[states[i-1]] {
				t.Errorf("states out of order: %v", states)
			}
		}
		return states, id, text
	}
	states, id, text := events(c.SendStreamingMessage(c.ctx, &a2a.SendMessageRequest{Message: userMessage(a2a.NewTextPart("watch"))}))
	if len(states) != 3 || states[0] != a2a.TaskStateSubmitted || states[2] != a2a.TaskStateCompleted || text != "slow watch" {
		t.Errorf("streamed %v, result %q; want submitted, working, completed", states, text)
	}
	if rec, err := m.key.Execution(ctx, string(id)); err != nil || rec.Status != "completed" {
		t.Errorf("record %+v, %v", rec, err)
	}

	// returnImmediately answers at once; SubscribeToTask then follows the
	// task to its end; a final task has nothing to follow.
	task, err := c.send(userMessage(a2a.NewTextPart("later")), true)
	if err != nil || task.Status.State.Terminal() || len(task.Artifacts) != 0 {
		t.Fatalf("returnImmediately: %+v, %v", task, err)
	}
	states, _, text = events(c.SubscribeToTask(c.ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}))
	if states[len(states)-1] != a2a.TaskStateCompleted || text != "slow later" {
		t.Errorf("subscribed: %v, %q", states, text)
	}
	var finalErr error
	for _, err := range c.SubscribeToTask(c.ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
		finalErr = err
	}
	wantA2A(t, finalErr, a2a.ErrUnsupportedOperation, "")
	if final := c.wait(t, task.ID); final.Status.State != a2a.TaskStateCompleted {
		t.Errorf("final %+v", final)
	}
	// A message first sent without waiting and sent again with waiting is
	// answered final, and charged once.
	first := userMessage(a2a.NewTextPart("twice"))
	if _, err := c.send(first, true); err != nil {
		t.Fatal(err)
	}
	if again, err := c.send(first, false); err != nil || again.Status.State != a2a.TaskStateCompleted {
		t.Errorf("resent and waited: %+v, %v", again, err)
	}
	// The same message sent twice at once: the second waits for the
	// first's task, and one call is charged.
	same := userMessage(a2a.NewTextPart("at once"))
	var wg sync.WaitGroup
	ids := make([]a2a.TaskID, 2)
	for i := range ids {
		wg.Go(func() {
			task, err := c.send(same, false)
			if err != nil || task.Status.State != a2a.TaskStateCompleted {
				t.Errorf("concurrent send: %+v, %v", task, err)
				return
			}
			ids[i] = task.ID
		})
	}
	wg.Wait()
	if ids[0] != ids[1] {
		t.Errorf("one message, two tasks: %v", ids)
	}
	if b := m.balance(m.callerW, crtx.Devnet); b.Available != usdc("10")-4*usdc("0.5") || b.Escrowed != 0 {
		t.Errorf("balance %+v after four calls", b)
	}
}

func TestA2ACancel(t *testing.T) {
	m := newMarket(t, "10", func(c *daemon.Config) { c.MaxDispatches = 1 })
	agent := m.list(newService(t, slow(400*time.Millisecond)), "1")
	c := m.a2a(t, agent, m.key.Token(), a2a.TransportProtocolJSONRPC)
	busy, err := c.send(userMessage(a2a.NewTextPart("busy")), true)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the first takes the only dispatch slot
	waiting, err := c.send(userMessage(a2a.NewTextPart("waiting")), true)
	if err != nil || waiting.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("waiting: %+v, %v", waiting, err)
	}
	if b := m.balance(m.callerW, crtx.Devnet); b.Escrowed != usdc("2") {
		t.Fatalf("escrowed %s", b.Escrowed)
	}
	cancelled, err := c.CancelTask(c.ctx, &a2a.CancelTaskRequest{ID: waiting.ID})
	if err != nil || cancelled.Status.State != a2a.TaskStateCanceled || cancelled.Status.Message == nil ||
		cancelled.Status.Message.Parts[1].Data().(map[string]any)["code"] != "cancelled" {
		t.Fatalf("cancel: %+v, %v", cancelled, err)
	}
	// A cancelled task, like one at work, cannot be cancelled (A2A 1.0 §3.1.5).
	_, err = c.CancelTask(c.ctx, &a2a.CancelTaskRequest{ID: waiting.ID})
	wantA2A(t, err, a2a.ErrTaskNotCancelable, "not_cancellable")
	_, err = c.CancelTask(c.ctx, &a2a.CancelTaskRequest{ID: busy.ID})
	if ae := wantA2A(t, err, a2a.ErrTaskNotCancelable, "not_cancellable"); ae.Details["execution_id"] != string(busy.ID) {
		t.Errorf("details %v", ae.Details)
	}
	_, err = c.CancelTask(c.ctx, &a2a.CancelTaskRequest{ID: a2a.TaskID(crtx.NewUUID())})
	wantA2A(t, err, a2a.ErrTaskNotFound, "execution_not_found")
	if final := c.wait(t, busy.ID); final.Status.State != a2a.TaskStateCompleted {
		t.Errorf("busy ended %s", final.Status.State)
	}
	// The cancelled task never ran and its escrow came back.
	time.Sleep(100 * time.Millisecond)
	if got, err := c.GetTask(c.ctx, &a2a.GetTaskRequest{ID: waiting.ID}); err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Errorf("cancelled task is now %+v, %v", got, err)
	}
	if b := m.balance(m.callerW, crtx.Devnet); b.Escrowed != 0 || b.Available != usdc("9") {
		t.Errorf("balance %+v", b)
	}
	if l, err := c.ListTasks(c.ctx, &a2a.ListTasksRequest{Status: a2a.TaskStateCanceled}); err != nil || len(l.Tasks) != 1 || l.Tasks[0].ID != waiting.ID {
		t.Errorf("canceled tasks = %+v, %v", l, err)
	}
}

// version is a client interceptor that claims another protocol version.
type version struct {
	a2aclient.PassthroughInterceptor
	v string
}

func (v version) Before(ctx context.Context, req *a2aclient.Request) (context.Context, any, error) {
	if v.v == "" {
		delete(req.ServiceParams, a2a.SvcParamVersion)
	} else {
		req.ServiceParams[a2a.SvcParamVersion] = []string{v.v}
	}
	return ctx, nil, nil
}

func TestA2AErrors(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newService(t, echo), "0.05")
	before := m.balance(m.callerW, crtx.Devnet)
	unchanged := func(what string) {
		t.Helper()
		if b := m.balance(m.callerW, crtx.Devnet); b != before {
			t.Errorf("%s: balance %+v, was %+v", what, b, before)
		}
	}

	// No key, a bad key, a session: 401 with a Bearer challenge, before
	// any A2A framing.
	for _, tc := range []struct{ token, code string }{
		{"", "authentication_required"}, {"crtx_test_notakey", "invalid_api_key"}, {m.callerC.Token(), "invalid_api_key"},
	} {
		c := m.a2a(t, agent, tc.token, a2a.TransportProtocolJSONRPC)
		if _, err := c.send(userMessage(a2a.NewTextPart("x")), false); err == nil {
			t.Fatalf("%s: no error", tc.code)
		}
		status, header, body := c.rec.last()
		var e api.ErrorBody
		json.Unmarshal(body, &e)
		if status != 401 || header.Get("WWW-Authenticate") != `Bearer realm="crtx"` || e.Error.Code != tc.code {
			t.Errorf("%q: %d %q %s", tc.token, status, header.Get("WWW-Authenticate"), body)
		}
	}
	unchanged("unauthenticated")

	c := m.a2a(t, agent, m.key.Token(), a2a.TransportProtocolJSONRPC)
	send := func(msg *a2a.Message) error {
		_, err := c.send(msg, false)
		return err
	}
	withMeta := func(meta map[string]any, parts ...*a2a.Part) *a2a.Message {
		msg := userMessage(parts...)
		msg.Metadata = meta
		return msg
	}
	wantA2A(t, send(withMeta(map[string]any{"max_cost_usdc": "0.04"}, a2a.NewTextPart("x"))), a2a.ErrInvalidParams, "price_changed")
	wantA2A(t, send(withMeta(map[string]any{"max_cost_usdc": 1}, a2a.NewTextPart("x"))), a2a.ErrInvalidParams, "invalid_request")
	wantA2A(t, send(withMeta(map[string]any{"timeout_seconds": 301}, a2a.NewTextPart("x"))), a2a.ErrInvalidParams, "invalid_request")
	wantA2A(t, send(userMessage(a2a.NewDataPart(map[string]any{"a": 1}))), a2a.ErrInvalidParams, "invalid_request")
	wantA2A(t, send(userMessage(a2a.NewTextPart("x"), a2a.NewDataPart([]any{1}))), a2a.ErrInvalidParams, "invalid_request")
	wantA2A(t, send(userMessage(a2a.NewTextPart("x"), a2a.NewFileURLPart("https://example.com/a.pdf", "application/pdf"))), a2a.ErrUnsupportedContentType, "")
	noID := userMessage(a2a.NewTextPart("x"))
	noID.ID = ""
	wantA2A(t, send(noID), a2a.ErrInvalidParams, "invalid_request")
	followUp := userMessage(a2a.NewTextPart("x"))
	followUp.TaskID = a2a.TaskID(crtx.NewUUID())
	wantA2A(t, send(followUp), a2a.ErrUnsupportedOperation, "")
	_, err := c.SendMessage(c.ctx, &a2a.SendMessageRequest{Message: userMessage(a2a.NewTextPart("x")),
		Config: &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: "ftp://example.com/hook"}}})
	wantA2A(t, err, a2a.ErrInvalidParams, "invalid_request") // refused before anything is paid
	_, err = c.SendMessage(c.ctx, &a2a.SendMessageRequest{Message: userMessage(a2a.NewTextPart("x")),
		Config: &a2a.SendMessageConfig{AcceptedOutputModes: []string{"image/png"}}})
	wantA2A(t, err, a2a.ErrUnsupportedContentType, "")
	unchanged("refused messages")

	// An agent that cannot pay for, a paused one, one that is gone.
	dear := m.list(newService(t, echo), "20")
	expensive := m.a2a(t, dear, m.key.Token(), a2a.TransportProtocolJSONRPC)
	_, err = expensive.send(userMessage(a2a.NewTextPart("x")), false)
	wantA2A(t, err, a2a.ErrUnauthorized, "insufficient_balance")
	if _, err := patch(m.creatorC, agent, map[string]any{"status": "paused"}); err != nil {
		t.Fatal(err)
	}
	wantA2A(t, send(userMessage(a2a.NewTextPart("x"))), a2a.ErrUnsupportedOperation, "agent_paused")
	if _, err := m.creatorC.Delist(ctx, dear); err != nil {
		t.Fatal(err)
	}
	_, err = expensive.send(userMessage(a2a.NewTextPart("x")), false)
	wantA2A(t, err, a2a.ErrUnsupportedOperation, "agent_not_found")
	unchanged("refused agents")

	// An agent whose service is down: the task fails fast, saying why.
	down := newService(t, echo)
	gone := m.list(down, "0.05")
	closeService(t, down)
	dc := m.a2a(t, gone, m.key.Token(), a2a.TransportProtocolJSONRPC)
	task, err := dc.send(userMessage(a2a.NewTextPart("anyone?")), false)
	if err != nil || task.Status.State != a2a.TaskStateFailed || task.Status.Message == nil {
		t.Fatalf("a message to an unreachable agent: %+v, %v", task, err)
	}
	code := ""
	for _, p := range task.Status.Message.Parts {
		if d, ok := p.Data().(map[string]any); ok {
			code, _ = d["code"].(string)
		}
	}
	if code != crtx.CodeAgentUnreachable {
		t.Errorf("the failed task's code is %q, want %s", code, crtx.CodeAgentUnreachable)
	}
	unchanged("an unreachable agent's refunded call")

	// A protocol version other than 1.0 is refused: Major.Minor must match;
	// a request without A2A-Version speaks 0.3.
	for _, v := range []string{"0.3", "1.9", ""} {
		old := m.a2a(t, agent, m.key.Token(), a2a.TransportProtocolJSONRPC, version{v: v})
		_, err = old.GetTask(old.ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(crtx.NewUUID())})
		wantA2A(t, err, a2a.ErrVersionNotSupported, "")
	}

	// The version may come as a query parameter instead of the header.
	for v, code := range map[string]float64{"1.0": -32001, "0.3": -32009} {
		body := `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"` + crtx.NewUUID() + `"}}`
		req, _ := http.NewRequest("POST", m.d.URL+"/a2a/"+agent+"?A2A-Version="+v, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+m.key.Token())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out struct{ Error struct{ Code float64 } }
		json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if out.Error.Code != code {
			t.Errorf("A2A-Version=%s as a query parameter: error %v, want %v", v, out.Error.Code, code)
		}
	}

	// Routes: the endpoint takes POST; unknown paths are the REST 404.
	wantCode(t, m.anon.Do(ctx, "GET", "/a2a/"+agent, "", nil, nil), 405, "method_not_allowed")
	wantCode(t, m.anon.Do(ctx, "GET", "/a2a/", "", nil, nil), 404, "not_found")
}

// missingRequired names the fields of m, and of the messages it holds,
// that a2a.proto marks REQUIRED and that are not set.
func missingRequired(m protoreflect.Message, path string) []string {
	var out []string
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		name := path + "." + f.JSONName()
		behaviors, _ := proto.GetExtension(f.Options(), annotations.E_FieldBehavior).([]annotations.FieldBehavior)
		if slices.Contains(behaviors, annotations.FieldBehavior_REQUIRED) && !m.Has(f) {
			out = append(out, name)
		}
		if f.Kind() != protoreflect.MessageKind || !m.Has(f) || f.IsMap() {
			continue
		}
		if f.IsList() {
			list := m.Get(f).List()
			for j := range list.Len() {
				out = append(out, missingRequired(list.Get(j).Message(), fmt.Sprintf("%s[%d]", name, j))...)
			}
			continue
		}
		out = append(out, missingRequired(m.Get(f).Message(), name)...)
	}
	return out
}
