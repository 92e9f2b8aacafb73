package a2a_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	crtxa2a "github.com/crtx-market/crtx/a2a"
	"github.com/crtx-market/crtx/gate"
	"github.com/crtx-market/crtx/internal/markettest"
	"github.com/crtx-market/crtx/market"
)

// serve is a market with the A2A handler served at its public URL.
func serve(t *testing.T) *markettest.Market {
	return markettest.New(t, func(m *market.Market, g *gate.Gate) http.Handler {
		return crtxa2a.New(m, crtxa2a.Options{Gate: g})
	})
}

// reply is a JSON-RPC response, as an A2A client reads it.
type reply struct {
	status int
	header http.Header
	// body is the whole answer: a JSON-RPC response, or the REST error
	// body of a refusal made before any A2A framing.
	body []byte
	rpc  struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      any             `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
}

// rpc POSTs one JSON-RPC call of A2A 1.0 to the agent's endpoint, with key
// as the bearer token ("" for none).
func rpc(t *testing.T, m *markettest.Market, key, method string, params any) reply {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, m.URL+"/a2a/"+m.Agent, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(a2a.SvcParamVersion, string(a2a.Version))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode, header: resp.Header}
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	r.body = buf.Bytes()
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(r.body, &r.rpc); err != nil {
			t.Fatalf("%s: not a JSON-RPC response: %s", method, r.body)
		}
	}
	return r
}
