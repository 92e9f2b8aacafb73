package http

import (
	"context"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/market"
	"github.com/prometheus/client_golang/prometheus"
)

// business exports what the marketplace does, beside what HTTP does: the
// executions this replica ended and its calls to creators (counted here
// since it started), and the work waiting across every replica (read from
// the database at each scrape, through the partial indexes of that work).
type business struct {
	market                                     *market.Market
	ended, dispatch, up                        *prometheus.Desc
	inFlight, escrow, withdrawals, withdrawing *prometheus.Desc
	withdrawalAge, deliveries, deliveryAge     *prometheus.Desc
}

func newBusiness(m *market.Market) prometheus.Collector {
	env := []string{"environment"}
	return business{market: m,
		ended:    prometheus.NewDesc("crtx_executions_ended_total", "Executions this replica ended, by environment, final status and error code.", []string{"environment", "status", "error_code"}, nil),
		dispatch: prometheus.NewDesc("crtx_dispatch_duration_seconds", "Time this replica's calls to creators' endpoints took, each attempt.", env, nil),
		up:       prometheus.NewDesc("crtx_database_up", "1 when the database answered this scrape's reads of the work waiting, else 0.", nil, nil),
		inFlight: prometheus.NewDesc("crtx_executions_in_flight", "Executions pending or running, every replica's.", env, nil),
		escrow:   prometheus.NewDesc("crtx_escrow_held_usdc", "USDC held in escrow by the executions in flight.", env, nil),
		withdrawals: prometheus.NewDesc("crtx_withdrawals_waiting", "Withdrawals not final yet (pending or sent to the chain).",
			env, nil),
		withdrawing:   prometheus.NewDesc("crtx_withdrawals_waiting_usdc", "USDC of the withdrawals not final yet.", env, nil),
		withdrawalAge: prometheus.NewDesc("crtx_withdrawal_oldest_age_seconds", "Age of the oldest withdrawal not final yet; 0 when none waits.", env, nil),
		deliveries:    prometheus.NewDesc("crtx_deliveries_waiting", "Webhooks and A2A push notifications due and not yet delivered.", []string{"kind"}, nil),
		deliveryAge:   prometheus.NewDesc("crtx_delivery_oldest_age_seconds", "Age of the oldest delivery waiting; 0 when none waits.", []string{"kind"}, nil),
	}
}

func (b business) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{b.ended, b.dispatch, b.up, b.inFlight, b.escrow, b.withdrawals, b.withdrawing, b.withdrawalAge, b.deliveries, b.deliveryAge} {
		ch <- d
	}
}

func (b business) Collect(ch chan<- prometheus.Metric) {
	f := b.market.Figures()
	for k, n := range f.Ended {
		ch <- prometheus.MustNewConstMetric(b.ended, prometheus.CounterValue, float64(n), string(k.Environment), string(k.Status), k.Code)
	}
	for env, h := range f.Dispatches {
		buckets := make(map[float64]uint64, len(h.Bounds))
		for i, le := range h.Bounds {
			buckets[le] = h.Counts[i]
		}
		ch <- prometheus.MustNewConstHistogram(b.dispatch, h.Count, h.Seconds, buckets, string(env))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	backlog, err := b.market.Backlog(ctx)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(b.up, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(b.up, prometheus.GaugeValue, 1)
	now := time.Now()
	age := func(q crtx.Queue) float64 {
		if q.Waiting == 0 {
			return 0
		}
		return max(0, now.Sub(q.Oldest).Seconds())
	}
	for _, env := range crtx.Environments {
		e, w := backlog.Executions[env], backlog.Withdrawals[env]
		ch <- prometheus.MustNewConstMetric(b.inFlight, prometheus.GaugeValue, float64(e.Waiting), string(env))
		ch <- prometheus.MustNewConstMetric(b.escrow, prometheus.GaugeValue, float64(e.Amount)/crtx.MicroPerUSDC, string(env))
		ch <- prometheus.MustNewConstMetric(b.withdrawals, prometheus.GaugeValue, float64(w.Waiting), string(env))
		ch <- prometheus.MustNewConstMetric(b.withdrawing, prometheus.GaugeValue, float64(w.Amount)/crtx.MicroPerUSDC, string(env))
		ch <- prometheus.MustNewConstMetric(b.withdrawalAge, prometheus.GaugeValue, age(w), string(env))
	}
	for kind, q := range map[string]crtx.Queue{"webhook": backlog.Webhooks, "push": backlog.Pushes} {
		ch <- prometheus.MustNewConstMetric(b.deliveries, prometheus.GaugeValue, float64(q.Waiting), kind)
		ch <- prometheus.MustNewConstMetric(b.deliveryAge, prometheus.GaugeValue, age(q), kind)
	}
}
