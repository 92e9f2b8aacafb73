package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/creator"
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

// metric returns the value of the series named exactly line's prefix (name
// and labels as the exposition writes them), or -1 when absent.
func metric(body, series string) float64 {
	for _, l := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}

// The business shows in /metrics: executions ended by status and error
// code, the time calls to creators took, what runs now and the escrow it
// holds, and a webhook that cannot be delivered waiting, with its age.
func TestMetricsOfTheBusiness(t *testing.T) {
	m := newMarket(t, "10")
	release := make(chan struct{})
	agent := m.list(newService(t, func(ctx context.Context, r creator.Request) (string, int, error) {
		switch r.Task {
		case "fail":
			return "", 0, errors.New("no")
		case "hold":
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return "ok", 0, nil
	}), "0.01")
	m.ran(t, m.liveKey, agent)
	if _, err := m.liveKey.Execute(ctx, agent, run("fail"), client.ExecuteOptions{}); err == nil {
		t.Fatal("the failing call completed")
	}
	held := crtx.ExecuteParams{Task: "hold", Async: true, WebhookURL: "http://127.0.0.1:1/hook"} // nothing listens there
	rec, err := m.liveKey.Execute(ctx, agent, held, client.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, body := m.scrape(m.d.URL + "/metrics")
	for series, want := range map[string]float64{
		`crtx_executions_ended_total{environment="mainnet",error_code="",status="completed"}`:              1,
		`crtx_executions_ended_total{environment="mainnet",error_code="execution_failed",status="failed"}`: 1,
		`crtx_dispatch_duration_seconds_count{environment="mainnet"}`:                                      2,
		`crtx_executions_in_flight{environment="mainnet"}`:                                                 1,
		`crtx_escrow_held_usdc{environment="mainnet"}`:                                                     0.01,
		`crtx_deliveries_waiting{kind="webhook"}`:                                                          0,
		`crtx_withdrawals_waiting{environment="mainnet"}`:                                                  0,
		`crtx_database_up`: 1,
	} {
		if got := metric(body, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	close(release)
	if _, err := m.liveKey.Wait(ctx, rec.ExecutionID, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, body = m.scrape(m.d.URL + "/metrics")
		if metric(body, `crtx_deliveries_waiting{kind="webhook"}`) == 1 && metric(body, `crtx_executions_in_flight{environment="mainnet"}`) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the undeliverable webhook never showed as waiting:\n%s", grep(body, "crtx_"))
		}
	}
	if age := metric(body, `crtx_delivery_oldest_age_seconds{kind="webhook"}`); age < 0 {
		t.Errorf("the waiting webhook's age is %v", age)
	}
	if got := metric(body, `crtx_escrow_held_usdc{environment="mainnet"}`); got != 0 {
		t.Errorf("escrow held after every call ended: %v", got)
	}
}
