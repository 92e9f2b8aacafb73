package sqlite

import (
	"github.com/crtx-market/crtx/store/sqldb"
	"github.com/prometheus/client_golang/prometheus"
)

// Collectors are the metrics of the store's single writer, for GET /metrics:
// how many commits, how many transactions they held, and how long the
// writer was busy. When busy time nears wall-clock time, the writer is
// what bounds the marketplace. PostgreSQL's store reports its batches of
// openings and closings by the same names (postgres.DB.WriterStats).
func Collectors(db interface{ WriterStats() sqldb.WriterStats }) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "crtx_store_commits_total", Help: "Database commits of the group writer.",
		}, func() float64 { return float64(db.WriterStats().Commits) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "crtx_store_transactions_total", Help: "Read-write transactions committed by the group writer.",
		}, func() float64 { return float64(db.WriterStats().Transactions) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "crtx_store_writer_busy_seconds_total", Help: "Time the group writer spent running transactions.",
		}, func() float64 { return db.WriterStats().Busy.Seconds() }),
	}
}
