package web_test

import (
	"net/http"
	"strings"
	"testing"
)

// Without a chain, the reserves page says plainly that each environment's
// money lives on the ledger alone; it is linked from the explorer and from
// every page's footer, and a block speaks of no anchor.
func TestReservesWithoutChain(t *testing.T) {
	d := market(t)
	visitor := &browserLike{t: t, base: d.URL, cookies: map[string]string{}}
	resp, body := visitor.send("GET", "/reserves", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/reserves: %d\n%s", resp.StatusCode, body)
	}
	for _, want := range []string{
		"<title>Reserves · crtx</title>",
		"mainnet has no chain: its money lives on the crtx ledger alone, and nothing is held on Solana for it.",
		"devnet has no chain: its money lives on the crtx ledger alone, as test funds from the airdrop, and nothing is held on Solana for it.",
		`<a href="/explorer/" aria-current="page">Explorer</a>`,
		`<a href="/v1/reserves">GET /v1/reserves</a>`,
		// Its figure still: what the ledger owes, nothing yet.
		"The ledger owes its wallets <b>0 USDC</b> on devnet",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/reserves lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, "<table>") || strings.Contains(body, "explorer.solana.com") {
		t.Errorf("/reserves shows a treasury's figures without a chain:\n%s", body)
	}
	newCreator(t, d.URL) // 100 USDC deposited on mainnet
	if _, body := visitor.send("GET", "/reserves", nil); !strings.Contains(body, "The ledger owes its wallets <b>100 USDC</b> on mainnet") {
		t.Errorf("/reserves after a 100 USDC deposit:\n%s", body)
	}
	for _, path := range []string{"/", "/explorer/", "/docs", "/login"} {
		if _, page := visitor.send("GET", path, nil); !strings.Contains(page, `<footer><a href="/reserves">Reserves</a>`) {
			t.Errorf("%s has no footer link to the reserves", path)
		}
	}
	if _, home := visitor.send("GET", "/explorer/", nil); !strings.Contains(home, `<a href="/reserves">Reserves</a>: what the treasury holds on Solana`) {
		t.Error("the explorer does not link the reserves")
	}
}
