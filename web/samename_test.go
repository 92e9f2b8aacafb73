package web_test

import (
	"context"
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
