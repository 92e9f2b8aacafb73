package api

import (
	"bytes"
	"encoding/json"

	"github.com/crtx-market/crtx"
)

// MCPURL is a marketplace's MCP server.
func MCPURL(publicURL string) string { return crtx.Links{PublicURL: publicURL}.MCP() }

// MCPX402URL is a marketplace's open MCP server, where each run_agent
// call is paid with x402 instead of an API key.
func MCPX402URL(publicURL string) string { return publicURL + "/mcp/x402" }

// CardURL is an agent's A2A card.
func CardURL(publicURL, agentID string) string {
	return publicURL + "/a2a/" + agentID + "/.well-known/agent-card.json"
}

// ClaudeMCPAdd is the command that adds a marketplace's MCP server to
// Claude Code, with key (or a placeholder) as its credential.
func ClaudeMCPAdd(publicURL, key string) string {
	return `claude mcp add --transport http crtx ` + MCPURL(publicURL) + ` --header "Authorization: Bearer ` + key + `"`
}

// MCPServers is a marketplace's entry for an MCP client's mcpServers
// configuration (Cursor's, Claude Desktop's), with key (or a placeholder)
// as its credential, indented by indent ("" for one line). Marshalled, so
// any URL comes out as valid JSON; HTML escaping is off to keep a
// placeholder such as "<your API key>" readable.
func MCPServers(publicURL, key, indent string) string {
	type server struct {
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	enc.Encode(map[string]map[string]server{"mcpServers": {"crtx": {URL: MCPURL(publicURL),
		Headers: map[string]string{"Authorization": "Bearer " + key}}}}) // strings only: cannot fail
	return string(bytes.TrimSpace(b.Bytes()))
}
