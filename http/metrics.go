package http

import (
	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/market"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics live in a registry of their own, so two servers in one process
// (as in tests) never share counters.
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(reg *prometheus.Registry, more ...prometheus.Collector) *metrics {
	m := &metrics{
		registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crtx_http_requests_total", Help: "HTTP requests by route, method and status.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "crtx_http_request_duration_seconds", Help: "HTTP request latency by route and status.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"route", "method", "status"}),
	}
	// The build each replica runs, so that a dashboard shows a rollout and
	// an alert finds a replica left on an older release.
	build := prometheus.NewGauge(prometheus.GaugeOpts{Name: "crtx_build_info", Help: "Always 1; its version label is the build of crtxd running.",
		ConstLabels: prometheus.Labels{"version": crtx.Version()}})
	build.Set(1)
	reg.MustRegister(m.requests, m.duration, build,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(more...)
	return m
}

// methodLabel names the standard methods and calls any other "other": a
// label per method a client makes up would add series without bound, and
// a series is never freed.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "other"
}

func (m *metrics) observe(method, route string, status int, d time.Duration) {
	if status == 0 {
		status = http.StatusOK
	}
	method = methodLabel(method)
	s := strconv.Itoa(status)
	m.requests.WithLabelValues(route, method, s).Inc()
	m.duration.WithLabelValues(route, method, s).Observe(d.Seconds())
}

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) error {
	s.Metrics().ServeHTTP(w, r)
	return nil
}

// Metrics serves the Prometheus metrics, for a listener of their own
// (Options.MetricsElsewhere).
func (s *Server) Metrics() http.Handler {
	return promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{})
}

// reserveGauges report, per environment with a chain, the surplus of the
// last reserve check: what the treasury holds on the chain less what the
// ledger owes. Below zero, the treasury cannot pay every wallet; alert on it.
func reserveGauges(m *market.Market) []prometheus.Collector {
	var out []prometheus.Collector
	for _, env := range crtx.Environments {
		if m.Chain(env) == nil {
			continue
		}
		out = append(out, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "crtx_reserve_surplus_usdc", Help: "The treasury's USDC on the chain less what the ledger owes, at the last reserve check.",
			ConstLabels: prometheus.Labels{"environment": string(env)},
		}, func() float64 { return float64(m.Ledger.Surpluses()[env]) / crtx.MicroPerUSDC }))
	}
	return out
}

// rpcCalls counts each chain's JSON-RPC calls by method, and those that
// failed: what a paid or rate-limited provider bills and limits, and the
// first sign of a flood or an outage.
type rpcCalls struct {
	market       *market.Market
	calls, fails *prometheus.Desc
}

func newRPCCalls(m *market.Market) prometheus.Collector {
	labels := []string{"environment", "method"}
	return rpcCalls{market: m,
		calls: prometheus.NewDesc("crtx_chain_rpc_calls_total", "JSON-RPC calls made to each environment's Solana cluster, by method.", labels, nil),
		fails: prometheus.NewDesc("crtx_chain_rpc_errors_total", "JSON-RPC calls that got no answer or an HTTP error from the cluster's provider, by method.", labels, nil)}
}

func (c rpcCalls) Describe(ch chan<- *prometheus.Desc) { ch <- c.calls; ch <- c.fails }

func (c rpcCalls) Collect(ch chan<- prometheus.Metric) {
	for _, env := range crtx.Environments {
		if chain := c.market.Chain(env); chain != nil {
			calls, failed := chain.RPCCalls()
			for method, n := range calls {
				ch <- prometheus.MustNewConstMetric(c.calls, prometheus.CounterValue, float64(n), string(env), method)
				ch <- prometheus.MustNewConstMetric(c.fails, prometheus.CounterValue, float64(failed[method]), string(env), method)
			}
		}
	}
}

// x402Stages are the time x402 calls spent in each stage beyond an
// API-key call's (check, simulate, settle), and how many passed each.
type x402Stages struct {
	market        *market.Market
	seconds, runs *prometheus.Desc
}

// paidFirstCounters count the x402 calls refused because their agent's
// calls paid first keep failing, and the refunds of calls paid first that
// failed: each cost the fee payer two transactions' fees (docs/x402.md).
func paidFirstCounters(m *market.Market) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "crtx_x402_paid_first_refused_total",
			Help: "x402 calls refused payment before they run because their agent's recent calls paid that way mostly failed."},
			func() float64 { refused, _ := m.X402.X402PaidFirst(); return float64(refused) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "crtx_x402_paid_first_refunds_total",
			Help: "x402 calls paid before they ran that failed and were refunded on the chain (two fees each to the fee payer)."},
			func() float64 { _, refunded := m.X402.X402PaidFirst(); return float64(refunded) }),
	}
}

func newX402Stages(m *market.Market) prometheus.Collector {
	return x402Stages{market: m,
		seconds: prometheus.NewDesc("crtx_x402_stage_seconds_total", "Time x402 calls spent in each stage of their payment.", []string{"stage"}, nil),
		runs:    prometheus.NewDesc("crtx_x402_stage_runs_total", "x402 calls that passed each stage of their payment.", []string{"stage"}, nil)}
}

func (c x402Stages) Describe(ch chan<- *prometheus.Desc) { ch <- c.seconds; ch <- c.runs }

func (c x402Stages) Collect(ch chan<- prometheus.Metric) {
	for stage, t := range c.market.X402.X402Stages() {
		ch <- prometheus.MustNewConstMetric(c.seconds, prometheus.CounterValue, t.Total.Seconds(), stage)
		ch <- prometheus.MustNewConstMetric(c.runs, prometheus.CounterValue, float64(t.Count), stage)
	}
}
