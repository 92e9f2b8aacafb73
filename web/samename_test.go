package web_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
)

// Two listings of one name, by two creators, stand side by side in the
// catalog, each saying whose it is.
func TestCatalogSaysWhoseListingIsWhose(t *testing.T) {
	d := market(t)
	var creators []string
	for range 2 {
		a, err := client.New(d.URL, "").Agent(context.Background(), greeter(t, d), "")
		if err != nil {
			t.Fatal(err)
		}
		creators = append(creators, a.Creator.Pubkey)
	}
	resp, err := http.Get(d.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	page := string(b)
	if strings.Count(page, ">Greeter</a>") != 2 {
		t.Fatalf("the catalog does not list both Greeters:\n%s", page)
	}
	for _, c := range creators {
		if !strings.Contains(page, `by <span class="mono" title="`+c+`">`+crtx.DefaultDisplayName(c)+`</span>`) {
			t.Errorf("the catalog does not say the creator %s:\n%s", c, page)
		}
	}
}

// An agent's page names its creator and links the creator's other agents
// in the catalog.
func TestAgentPageLinksTheCreatorsOtherAgents(t *testing.T) {
	d := market(t)
	bg := context.Background()
	cc, _ := newCreator(t, d.URL)
	str := func(s string) *string { return &s }
	raw := func(s string) *json.RawMessage { r := json.RawMessage(s); return &r }
	var ids []string
	for _, name := range []string{"Greeter", "Counter"} {
		endpoint, pub := service(t)
		price, tags := crtx.USDC(20_000), []string{"data"}
		a, err := cc.WithAgentKey(agentKeyOf(pub)).CreateListing(bg, crtx.ListingParams{
			Name: str(name), Tagline: str(name + "."), Description: str(name + "."), Tags: &tags,
			InputSchema: raw(`{"type":"object"}`), OutputSchema: raw(`{"type":"string"}`), PricingModel: str("pay_per_use"),
			Price: &price, EndpointURL: &endpoint, SigningPublicKey: &pub})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.AgentID)
	}
	resp, err := http.Get(d.URL + "/agents/" + ids[0])
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `<li><a href="/agents/`+ids[1]+`">Counter</a>`) || strings.Contains(string(b), `<li><a href="/agents/`+ids[0]+`">`) {
		t.Errorf("the Greeter's page does not link the creator's Counter, or links itself:\n%s", b)
	}
}

// An agent's page shows a real example: the creator's own latest run whose
// result is published, its task filling the form and the snippets, its
// output beside the form; a private run is not shown.
func TestAgentPageShowsTheCreatorsExample(t *testing.T) {
	d := market(t)
	bg := context.Background()
	_, ck, _ := ed25519.GenerateKey(nil)
	wallet := crtx.Address(ck.Public().(ed25519.PublicKey))
	client.New(d.URL, adminToken).Deposit(bg, crtx.Mainnet, wallet, 100*crtx.MicroPerUSDC)
	cc, _, err := client.New(d.URL, "").SignIn(bg, ck)
	if err != nil {
		t.Fatal(err)
	}
	endpoint, pub := service(t)
	str := func(s string) *string { return &s }
	raw := func(s string) *json.RawMessage { r := json.RawMessage(s); return &r }
	price, tags := crtx.USDC(20_000), []string{"writing"}
	a, err := cc.WithAgentKey(agentKeyOf(pub)).CreateListing(bg, crtx.ListingParams{Name: str("Greeter"), Tagline: str("Greets."),
		Description: str("Greets."), Tags: &tags, InputSchema: raw(`{"type":"object"}`), OutputSchema: raw(`{"type":"string"}`),
		PricingModel: str("pay_per_use"), Price: &price, EndpointURL: &endpoint, SigningPublicKey: &pub})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cc.Airdrop(bg, wallet, crtx.MicroPerUSDC); err != nil {
		t.Fatal(err)
	}
	key, err := cc.CreateKey(bg, client.KeyParams{Name: "own", Environment: crtx.Devnet})
	if err != nil {
		t.Fatal(err)
	}
	own := client.New(d.URL, key.Key)
	for _, p := range []crtx.ExecuteParams{{Task: `Ada "the first" $(programmer)`}, {Task: "a secret", Private: true}} {
		if _, err := own.Execute(bg, a.AgentID, p, client.ExecuteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.Get(d.URL + "/agents/" + a.AgentID)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	page := html.UnescapeString(string(b))
	for _, want := range []string{`<pre tabindex="0" id="example-output">Bonjour, Ada "the first" $(programmer) ✓</pre>`,
		`>Ada "the first" $(programmer)</textarea>`, `crtx run ` + a.AgentID + ` 'Ada "the first" $(programmer)'`, "by the agent's creator on devnet"} {
		if !strings.Contains(page, want) {
			t.Errorf("the agent page lacks %s", want)
		}
	}
	if strings.Contains(page, "a secret") {
		t.Error("the agent page shows a private run")
	}
}
