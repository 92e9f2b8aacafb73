package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/crtx-market/crtx/gate"
	"github.com/crtx-market/crtx/internal/markettest"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// serve is a market with /mcp served at its public URL.
func serve(t *testing.T) *markettest.Market {
	return markettest.New(t, func(m *market.Market, g *gate.Gate) http.Handler {
		mux := http.NewServeMux()
		mux.Handle("/mcp", mcp.New(m, mcp.Options{Gate: g}))
		return mux
	})
}

// bearer adds an API key to every request of an MCP client.
type bearer string

func (k bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(k))
	return http.DefaultTransport.RoundTrip(r)
}

// connect initializes a session of the official Go SDK's client with key.
func connect(t *testing.T, m *markettest.Market, key string) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "crtx-test", Version: "1"}, nil)
	cs, err := c.Connect(bounded(t), &sdk.StreamableClientTransport{Endpoint: m.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer(key)}}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// bounded is a context that ends with the test, or after a minute.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// call calls a tool and decodes its structured answer into out, failing
// the test on any error.
func call(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any, out any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(bounded(t), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error %+v", tool, res.Content)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: structured answer %s: %v", tool, b, err)
	}
	return res
}
