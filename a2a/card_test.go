package a2a_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	crtxa2a "github.com/crtx-market/crtx/a2a"
)

// get reads url, which must answer 200 with contentType.
func get(t *testing.T, url, contentType string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != contentType {
		t.Fatalf("GET %s: %d %s %s", url, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	return b
}

// Any client reads a listed agent's card without a key: it names the agent,
// its endpoint in both bindings, the API key it takes and its price, and
// is signed by the marketplace key the key set publishes.
func TestCard(t *testing.T) {
	m := serve(t)
	raw := get(t, m.URL+"/a2a/"+m.Agent+"/.well-known/agent-card.json", "application/json")
	card, err := crtxa2a.ParseCard(raw)
	if err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	endpoint := m.URL + "/a2a/" + m.Agent
	if card.Name != "Greeter" || card.Description != "Greets whoever the task names." || card.DocumentationURL != m.URL+"/agents/"+m.Agent {
		t.Errorf("card = %+v", card)
	}
	if len(card.SupportedInterfaces) != 2 ||
		*card.SupportedInterfaces[0] != (a2a.AgentInterface{URL: endpoint, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version}) ||
		*card.SupportedInterfaces[1] != (a2a.AgentInterface{URL: endpoint, ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: a2a.Version}) {
		t.Errorf("interfaces = %+v", card.SupportedInterfaces)
	}
	if s, ok := card.SecuritySchemes["crtx_api_key"].(a2a.HTTPAuthSecurityScheme); !ok || s.Scheme != "Bearer" {
		t.Errorf("security schemes = %#v", card.SecuritySchemes)
	}
	if ext := card.Capabilities.Extensions; len(ext) != 1 || ext[0].URI != crtxa2a.PricingExtension || ext[0].Params["price_per_call_usdc"] != "0.250000" {
		t.Errorf("extensions = %+v", ext)
	}

	if len(card.Signatures) != 1 {
		t.Fatalf("signatures = %+v", card.Signatures)
	}
	header, err := base64.RawURLEncoding.DecodeString(card.Signatures[0].Protected)
	if err != nil {
		t.Fatal(err)
	}
	var h struct{ Alg, Kid, Jku string }
	json.Unmarshal(header, &h)
	if h.Alg != "EdDSA" || h.Jku != m.URL+"/.well-known/jwks.json" {
		t.Fatalf("protected header %s", header)
	}
	var set struct{ Keys []struct{ Kid, X string } }
	json.Unmarshal(get(t, h.Jku, "application/jwk-set+json"), &set)
	if len(set.Keys) != 1 || set.Keys[0].Kid != h.Kid {
		t.Fatalf("key set %+v has not the card's key %s", set, h.Kid)
	}
	x, _ := base64.RawURLEncoding.DecodeString(set.Keys[0].X)
	pub := ed25519.PublicKey(x)
	if len(pub) != ed25519.PublicKeySize || !pub.Equal(m.Config().Signer.Public()) {
		t.Errorf("the card's key is not the marketplace's signing key")
	}
}
