package web_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// Every page follows the reader's colour scheme, has a favicon, a meta
// description and a skip link that the first Tab reaches.
func TestThemeFaviconAndSkipLink(t *testing.T) {
	d := market(t)
	resp, err := http.Get(d.URL + "/static/favicon.svg")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/svg+xml" {
		t.Errorf("favicon: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}

	ctx := browser(t)
	for _, path := range []string{"/", "/explorer/", "/docs", "/login"} {
		for scheme, want := range map[string]string{"light": "rgb(250, 250, 250)", "dark": "rgb(21, 21, 24)"} {
			var bg, icon, description, focused string
			run(t, ctx, path+" in "+scheme,
				emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}),
				chromedp.Navigate(d.URL+path), chromedp.WaitReady("body"),
				chromedp.Evaluate(`getComputedStyle(document.body).backgroundColor`, &bg),
				chromedp.Evaluate(`document.querySelector('link[rel=icon]').getAttribute('href')`, &icon),
				chromedp.Evaluate(`document.querySelector('meta[name=description]').content`, &description),
				chromedp.KeyEvent("\t"),
				chromedp.Evaluate(`document.activeElement.textContent`, &focused))
			if bg != want || icon != "/static/favicon.svg" || len(description) < 40 || focused != "Skip to content" {
				t.Errorf("%s (%s): background %s (want %s), icon %q, description %q, first Tab on %q", path, scheme, bg, want, icon, description, focused)
			}
		}
	}
}

// An agent's page describes the agent, for search results and link
// previews; other pages the site.
func TestAgentPageDescription(t *testing.T) {
	d := market(t)
	id := greeter(t, d)
	resp, err := http.Get(d.URL + "/agents/" + id)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `<meta name="description" content="Greeter on crtx: Greets.">`) {
		t.Error("the agent's page does not describe the agent")
	}
}
