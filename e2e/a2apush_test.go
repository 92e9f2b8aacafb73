package e2e_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/webhook"
)

// pushed is one push a receiver got.
type pushed struct {
	header http.Header
	body   []byte
}

// pushReceiver is a caller's endpoint for A2A pushes on 127.0.0.1.
func pushReceiver(t *testing.T) (string, chan pushed) {
	got := make(chan pushed, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- pushed{r.Header.Clone(), b}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/a2a-push", got
}

func nextPush(t *testing.T, got chan pushed) pushed {
	t.Helper()
	select {
	case p := <-got:
		return p
	case <-bounded(t).Done():
		t.Fatal("no push came")
		return pushed{}
	}
}

// An A2A client sets push configs on its task with the official Go SDK:
// created, read back (without the credentials), listed and deleted; when
// the task ends, each config left gets one POST of the task, with its token
// and credentials, signed with the wallet's webhook secret. A config given
// with the message is set on the task it opens.
func TestA2APushNotifications(t *testing.T) {
	m := newMarket(t, "10")
	agent := m.list(newService(t, slow(300*time.Millisecond)), "0.5")
	c := m.a2a(t, agent, m.key.Token(), a2a.TransportProtocolJSONRPC)
	url, got := pushReceiver(t)

	task, err := c.send(userMessage(a2a.NewTextPart("push me")), true)
	if err != nil {
		t.Fatal(err)
	}
	mine, err := c.CreateTaskPushConfig(c.ctx, &a2a.PushConfig{TaskID: task.ID, ID: "mine", URL: url, Token: "tok-123",
		Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "cred-456"}})
	if err != nil || mine.ID != "mine" || mine.Token != "tok-123" || mine.Auth == nil || mine.Auth.Credentials != "" {
		t.Fatalf("create: %+v, %v", mine, err)
	}
	other, err := c.CreateTaskPushConfig(c.ctx, &a2a.PushConfig{TaskID: task.ID, URL: url + "/other"})
	if err != nil || !strings.HasPrefix(other.ID, "push_") {
		t.Fatalf("a config without an id: %+v, %v", other, err)
	}
	if read, err := c.GetTaskPushConfig(c.ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: "mine"}); err != nil || read.URL != url || read.Token != "tok-123" {
		t.Errorf("get: %+v, %v", read, err)
	}
	if all, err := c.ListTaskPushConfigs(c.ctx, &a2a.ListTaskPushConfigRequest{TaskID: task.ID}); err != nil || len(all) != 2 {
		t.Errorf("list: %+v, %v", all, err)
	}
	if err := c.DeleteTaskPushConfig(c.ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: other.ID}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetTaskPushConfig(c.ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: other.ID})
	wantA2A(t, err, a2a.ErrInvalidParams, crtx.CodeNotFound)

	t.Run("refusals", func(t *testing.T) {
		for name, cfg := range map[string]*a2a.PushConfig{
			"no URL":              {TaskID: task.ID, URL: "ftp://x.example/hook"},
			"a token of lines":    {TaskID: task.ID, URL: url, Token: "a\r\nX-Evil: 1"},
			"a control character": {TaskID: task.ID, URL: url, Token: "a\x01b"},
			"an id of lines":      {TaskID: task.ID, ID: "a\r\nb", URL: url},
			"an unknown scheme":   {TaskID: task.ID, URL: url, Auth: &a2a.PushAuthInfo{Scheme: "Digest", Credentials: "x"}},
		} {
			_, err := c.CreateTaskPushConfig(c.ctx, cfg)
			if ae := wantA2A(t, err, a2a.ErrInvalidParams, ""); ae.Details["code"] != crtx.CodeInvalidRequest {
				t.Errorf("%s: %v", name, ae.Details)
			}
		}
		_, err := c.CreateTaskPushConfig(c.ctx, &a2a.PushConfig{TaskID: a2a.TaskID(crtx.NewUUID()), URL: url})
		wantA2A(t, err, a2a.ErrTaskNotFound, crtx.CodeExecutionNotFound)
		// Another wallet's key does not reach the task.
		stranger := newWallet(t)
		if _, err := m.anon.Airdrop(ctx, stranger.address, usdc("1")); err != nil {
			t.Fatal(err)
		}
		k, err := m.signIn(stranger).CreateKey(ctx, client.KeyParams{Name: "stranger", Environment: crtx.Devnet})
		if err != nil {
			t.Fatal(err)
		}
		runLogs.secret(k.Key)
		_, err = m.a2a(t, agent, k.Key, a2a.TransportProtocolJSONRPC).CreateTaskPushConfig(c.ctx, &a2a.PushConfig{TaskID: task.ID, URL: url})
		wantA2A(t, err, a2a.ErrTaskNotFound, crtx.CodeExecutionNotFound)
		for i := range crtx.MaxPushConfigs - 1 {
			if _, err := c.CreateTaskPushConfig(c.ctx, &a2a.PushConfig{TaskID: task.ID, ID: string(rune('a' + i)), URL: url + "/many"}); err != nil {
				t.Fatal(err)
			}
		}
		_, err = c.CreateTaskPushConfig(c.ctx, &a2a.PushConfig{TaskID: task.ID, ID: "one-too-many", URL: url})
		wantA2A(t, err, a2a.ErrInvalidParams, crtx.CodeInvalidRequest)
		for i := range crtx.MaxPushConfigs - 1 {
			if err := c.DeleteTaskPushConfig(c.ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: string(rune('a' + i))}); err != nil {
				t.Fatal(err)
			}
		}
	})

	secret, err := m.key.WebhookSecret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	p := nextPush(t, got)
	h := p.header
	if h.Get("A2A-Notification-Token") != "tok-123" || h.Get("Authorization") != "Bearer cred-456" || h.Get("Content-Type") != "application/json" {
		t.Errorf("push headers %v", h)
	}
	want := webhook.HMAC(key, h.Get("webhook-id"), h.Get("webhook-timestamp"), p.body)
	if !strings.Contains(h.Get("webhook-signature"), want) {
		t.Errorf("webhook-signature %q lacks the wallet's %q", h.Get("webhook-signature"), want)
	}
	var sr a2a.StreamResponse
	if err := json.Unmarshal(p.body, &sr); err != nil {
		t.Fatalf("push body %s: %v", p.body, err)
	}
	pt, ok := sr.Event.(*a2a.Task)
	if !ok || pt.ID != task.ID || pt.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("pushed %s", p.body)
	}
	if text, _ := result(t, pt); !strings.Contains(text, "push me") {
		t.Errorf("pushed result %q", text)
	}

	// Sent with the message: the push comes for the task the message opens,
	// and the message sent again (answered with the same task) replaces its
	// config rather than adding one.
	msg := userMessage(a2a.NewTextPart("inline"))
	var res a2a.SendMessageResult
	for range 3 {
		if res, err = c.SendMessage(c.ctx, &a2a.SendMessageRequest{Message: msg,
			Config: &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: url + "/inline", Token: "tok-inline"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if all, err := c.ListTaskPushConfigs(c.ctx, &a2a.ListTaskPushConfigRequest{TaskID: res.(*a2a.Task).ID}); err != nil || len(all) != 1 {
		t.Errorf("a message sent three times has %d configs, %v; want 1", len(all), err)
	}
	inline := nextPush(t, got)
	if err := json.Unmarshal(inline.body, &sr); err != nil || inline.header.Get("A2A-Notification-Token") != "tok-inline" {
		t.Fatalf("inline push %s %v", inline.body, inline.header)
	}
	if pt, ok := sr.Event.(*a2a.Task); !ok || pt.ID != res.(*a2a.Task).ID {
		t.Errorf("the inline push is of %s", inline.body)
	}
	time.Sleep(300 * time.Millisecond)
	if len(got) != 0 {
		t.Errorf("%d more pushes than configs left", len(got))
	}
}
