package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"parcela/sqldb"
)

// registerCheckpointMetrics exports what SQLite's checkpointer does
// (nothing on PostgreSQL): the write-ahead log's size, its truncations by
// outcome, and those that held the reads back near the log's bound. A log
// that grows while truncations give up is a reader pinning it.
func registerCheckpointMetrics(reg prometheus.Registerer, db *sqldb.DB) {
	if _, ok := db.Checkpoints(); !ok {
		return
	}
	stat := func(f func(sqldb.CheckpointStats) int64) func() float64 {
		return func() float64 {
			c, _ := db.Checkpoints()
			return float64(f(c))
		}
	}
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "parcela_sqlite_wal_bytes",
			Help: "Size of SQLite's write-ahead log at the checkpointer's last look."},
			stat(func(c sqldb.CheckpointStats) int64 { return c.WALBytes })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "parcela_sqlite_wal_truncations_total",
			Help:        "TRUNCATE checkpoints of SQLite's log, by outcome: emptied, or gave_up (a reader in the way, or an error).",
			ConstLabels: prometheus.Labels{"outcome": "emptied"}},
			stat(func(c sqldb.CheckpointStats) int64 { return c.Emptied })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "parcela_sqlite_wal_truncations_total",
			Help:        "TRUNCATE checkpoints of SQLite's log, by outcome: emptied, or gave_up (a reader in the way, or an error).",
			ConstLabels: prometheus.Labels{"outcome": "gave_up"}},
			stat(func(c sqldb.CheckpointStats) int64 { return c.GaveUp })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "parcela_sqlite_wal_read_drains_total",
			Help:        "Near the log's bound, new reads held back until those under way ended, by outcome: emptied (the log, then), or timed_out (a read outlasted 1 s).",
			ConstLabels: prometheus.Labels{"outcome": "emptied"}},
			stat(func(c sqldb.CheckpointStats) int64 { return c.Drained })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "parcela_sqlite_wal_read_drains_total",
			Help:        "Near the log's bound, new reads held back until those under way ended, by outcome: emptied (the log, then), or timed_out (a read outlasted 1 s).",
			ConstLabels: prometheus.Labels{"outcome": "timed_out"}},
			stat(func(c sqldb.CheckpointStats) int64 { return c.Undrained })),
	)
}
