package mcp_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/internal/markettest"
)

// A client that initializes meets the marketplace's server, which offers
// the five tools, each with both schemas.
func TestInitializeAndTools(t *testing.T) {
	m := serve(t)
	cs := connect(t, m, m.Key)
	init := cs.InitializeResult()
	if init == nil || init.ServerInfo.Name != "crtx" || init.ServerInfo.Version != crtx.Version() ||
		init.Capabilities.Tools == nil || !strings.Contains(init.Instructions, "run_agent") {
		t.Fatalf("initialize = %+v", init)
	}
	tools, err := cs.ListTools(bounded(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.InputSchema == nil || tl.OutputSchema == nil {
			t.Errorf("%s lacks an input or output schema", tl.Name)
		}
	}
	slices.Sort(names)
	if got := strings.Join(names, " "); got != "get_agent get_execution run_agent search_agents verify_execution" {
		t.Errorf("tools = %s", got)
	}
}

// search_agents finds the listed agent by a word of its description and
// its tag; get_agent reads it, in the key's environment.
func TestSearchAndGetAgent(t *testing.T) {
	m := serve(t)
	cs := connect(t, m, m.Key)
	// The answers as a client reads them off the wire.
	type agentPage struct {
		Agents []struct {
			AgentID string    `json:"agent_id"`
			Price   crtx.USDC `json:"price_per_call_usdc"`
		} `json:"agents"`
		Total int `json:"total"`
	}
	var page, none agentPage
	call(t, cs, "search_agents", map[string]any{"q": "greets", "tags": []string{"writing"}}, &page)
	if page.Total != 1 || len(page.Agents) != 1 || page.Agents[0].AgentID != m.Agent || page.Agents[0].Price != markettest.Price {
		t.Errorf("search_agents = %+v", page)
	}
	call(t, cs, "search_agents", map[string]any{"q": "nothing-like-it"}, &none)
	if none.Total != 0 || len(none.Agents) != 0 {
		t.Errorf("search_agents for no agent = %+v", none)
	}
	var a struct {
		AgentID     string           `json:"agent_id"`
		Name        string           `json:"name"`
		Price       crtx.USDC        `json:"price_per_call_usdc"`
		Environment crtx.Environment `json:"environment"`
	}
	call(t, cs, "get_agent", map[string]any{"agent_id": m.Agent}, &a)
	if a.AgentID != m.Agent || a.Name != "Greeter" || a.Price != markettest.Price || a.Environment != crtx.Devnet {
		t.Errorf("get_agent = %+v", a)
	}
}
