package mcp_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/gate"
	"github.com/crtx-market/crtx/oauth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A request without an API key, or with one the marketplace never gave, is
// refused 401 before the protocol sees it, with the challenge that points
// an MCP client at the endpoint's OAuth metadata; an SDK client cannot
// even initialize.
func TestUnauthenticated(t *testing.T) {
	m := serve(t)
	challenge := `Bearer resource_metadata="` + m.URL + gate.ResourceMetadataPath + `", scope="` + oauth.Scope + `"`
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},` +
		`"clientInfo":{"name":"curl","version":"1"}}}`
	for _, c := range []struct{ auth, code, challenge string }{
		{"", crtx.CodeAuthenticationRequired, challenge},
		{"Bearer crtx_test_" + strings.Repeat("x", 32), crtx.CodeInvalidAPIKey, challenge + `, error="invalid_token"`},
	} {
		req, _ := http.NewRequest(http.MethodPost, m.URL+"/mcp", strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Error struct{ Code string } }
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != c.challenge || body.Error.Code != c.code {
			t.Errorf("%q: %d %q %s", c.auth, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body.Error.Code)
		}
	}
	cl := sdk.NewClient(&sdk.Implementation{Name: "crtx-test", Version: "1"}, nil)
	if cs, err := cl.Connect(bounded(t), &sdk.StreamableClientTransport{Endpoint: m.URL + "/mcp"}, nil); err == nil {
		cs.Close()
		t.Error("a client without a key initialized")
	}
}
