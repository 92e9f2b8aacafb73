package web_test

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// An agent's page says how to reach it from MCP and A2A: the marketplace's
// MCP endpoint in a command line and in a configuration that is valid
// JSON once unescaped, the tool to call with this agent's id, and a link
// to its A2A card. It needs no browser.
func TestAgentPageMCPAndA2A(t *testing.T) {
	d := market(t)
	id := greeter(t, d)
	resp, err := http.Get(d.URL + "/agents/" + id)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(b)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /agents/%s: %d\n%s", id, resp.StatusCode, page)
	}
	pre := func(id string) string {
		t.Helper()
		m := regexp.MustCompile(`(?s)<pre tabindex="0" id="` + id + `">(.*?)</pre>`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("the agent page has no <pre id=%q>", id)
		}
		return html.UnescapeString(m[1])
	}
	mcpURL := d.URL + "/mcp"
	want := `claude mcp add --transport http crtx ` + mcpURL + ` --header "Authorization: Bearer crtx_test_…"`
	if got := pre("mcp-add"); got != want {
		t.Errorf("the MCP command line is\n%s\nwant\n%s", got, want)
	}
	var cfg struct {
		MCPServers map[string]struct {
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(pre("mcp-json")), &cfg); err != nil {
		t.Fatalf("the MCP configuration is not JSON: %v\n%s", err, pre("mcp-json"))
	}
	if s := cfg.MCPServers["crtx"]; s.URL != mcpURL || !strings.HasPrefix(s.Headers["Authorization"], "Bearer ") {
		t.Errorf("the MCP configuration is %+v", cfg)
	}
	if !strings.Contains(page, "<code>run_agent</code>") || !strings.Contains(page, "<code>"+id+"</code>") {
		t.Error("the page does not name the tool run_agent with the agent's id")
	}
	card := d.URL + "/a2a/" + id + "/.well-known/agent-card.json"
	if !strings.Contains(page, `<a id="a2a-card" href="`+card+`">`) {
		t.Errorf("the page has no link to the A2A card %s", card)
	}
}
