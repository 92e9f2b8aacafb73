package a2a_test

import (
	"encoding/json"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/internal/markettest"
)

// completed checks that task is the agent's completed answer to "Ada": its
// one artifact the text the creator's service signed and the execution's
// record (money as a decimal string with all six places, which a JSON
// number would round), the task's id being the execution's.
func completed(t *testing.T, task *a2a.Task) {
	t.Helper()
	want := markettest.Result("Ada")
	if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) != 2 {
		t.Fatalf("task %s is %s with artifacts %+v", task.ID, task.Status.State, task.Artifacts)
	}
	art := task.Artifacts[0]
	text, data := art.Parts[0], art.Parts[1]
	rec, _ := data.Data().(map[string]any)
	if art.ID != "result" || text.Text() != want || text.MediaType != "text/plain" || data.MediaType != "application/json" ||
		rec["execution_id"] != string(task.ID) || rec["status"] != string(crtx.ExecCompleted) || rec["cost_usdc"] != "0.250000" ||
		rec["result_hash"] != crtx.ResultHash(want) {
		t.Errorf("artifact %+v: text %q, record %v", art, text.Text(), rec)
	}
}

// SendMessage runs the agent on the message's text and answers when the
// task is done, the price paid once from the key's wallet; GetTask reads
// the same task back.
func TestSendMessageAndGetTask(t *testing.T) {
	m := serve(t)
	before := m.Balance(t)
	msg := map[string]any{"message": map[string]any{"messageId": "m-1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "Ada"}}}}
	r := rpc(t, m, m.Key, "SendMessage", msg)
	if r.status != 200 || r.rpc.JSONRPC != "2.0" || r.rpc.ID != 7.0 || r.rpc.Error != nil {
		t.Fatalf("SendMessage: %d %s", r.status, r.body)
	}
	var sent struct {
		Task *a2a.Task `json:"task"`
	}
	if err := json.Unmarshal(r.rpc.Result, &sent); err != nil || sent.Task == nil {
		t.Fatalf("SendMessage answered %s, not a task: %v", r.rpc.Result, err)
	}
	completed(t, sent.Task)
	if sent.Task.ContextID != string(sent.Task.ID) {
		t.Errorf("context %s, want the task's own id %s", sent.Task.ContextID, sent.Task.ID)
	}
	if after := m.Balance(t); before.Available-after.Available != markettest.Price || after.Escrowed != 0 {
		t.Errorf("balance %+v, was %+v: want the price paid once, nothing held", after, before)
	}

	r = rpc(t, m, m.Key, "GetTask", map[string]any{"id": sent.Task.ID})
	var got a2a.Task
	if r.status != 200 || r.rpc.Error != nil || json.Unmarshal(r.rpc.Result, &got) != nil {
		t.Fatalf("GetTask: %d %s", r.status, r.body)
	}
	if got.ID != sent.Task.ID {
		t.Errorf("GetTask %s answered task %s", sent.Task.ID, got.ID)
	}
	completed(t, &got)

	// The same message again is the same task, not a second charge.
	r = rpc(t, m, m.Key, "SendMessage", msg)
	var again struct {
		Task *a2a.Task `json:"task"`
	}
	if r.rpc.Error != nil || json.Unmarshal(r.rpc.Result, &again) != nil || again.Task == nil || again.Task.ID != sent.Task.ID {
		t.Errorf("the message sent again: %s", r.body)
	}
	if after := m.Balance(t); before.Available-after.Available != markettest.Price {
		t.Errorf("balance %+v after the message was sent again, was %+v", after, before)
	}
}
