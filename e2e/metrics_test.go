package e2e_test

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/crtx-market/crtx/daemon"
)

// scrape gets url with a plain client: /metrics is not in openapi.json.
func (e *env) scrape(url string) (int, string) {
	e.t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Methods a client makes up are counted as one label value: each would
// otherwise add series that are never freed.
func TestMetricsAreBounded(t *testing.T) {
	e := start(t)
	for i := range 40 {
		req, _ := http.NewRequest(fmt.Sprintf("M%0200d", i), e.d.URL+"/x", nil)
		if resp, err := e.http.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	_, body := e.scrape(e.d.URL + "/metrics")
	methods := map[string]bool{}
	for _, m := range regexp.MustCompile(`crtx_http_requests_total\{method="([^"]*)"`).FindAllStringSubmatch(body, -1) {
		methods[m[1]] = true
	}
	if len(methods) > 3 || !methods["other"] {
		t.Errorf("%d method labels, want the made-up ones as \"other\"", len(methods))
	}
	if !strings.Contains(body, `crtx_http_requests_total{method="other",route="unmatched",status="405"} 40`) &&
		!strings.Contains(body, `crtx_http_requests_total{method="other",route="unmatched",status="404"} 40`) {
		t.Errorf("the 40 made-up requests are not counted as one series:\n%s", grep(body, "other"))
	}
}

// With --metrics-addr the metrics answer there, and not on the public
// address.
func TestMetricsOnTheirOwnAddress(t *testing.T) {
	e := start(t, func(c *daemon.Config) { c.MetricsAddr = "127.0.0.1:0" })
	if code, _ := e.scrape(e.d.URL + "/metrics"); code != http.StatusNotFound {
		t.Errorf("public /metrics answered %d, want 404", code)
	}
	code, body := e.scrape(e.d.MetricsURL)
	if code != http.StatusOK || !strings.Contains(body, "crtx_http_requests_total") {
		t.Errorf("%s answered %d:\n%.300s", e.d.MetricsURL, code, body)
	}
}

// grep returns the lines of s that contain sub.
func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
