package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"parcela/sqldb"
)

// registerCheckpointMetrics exports what SQLite's checkpointer does
// (nothing on PostgreSQL): the write-ahead log's length in use, the
// checkpoints that restart it by outcome (named truncations, as they were
// before they became RESTARTs, so dashboards keep working), and those
// that held the reads back near the log's bound. A log that grows while
// restarts give up is a reader pinning it.
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
	// byOutcome is one outcome's series of a counter.
	byOutcome := func(name, help, outcome string, f func(sqldb.CheckpointStats) int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: prometheus.Labels{"outcome": outcome}}, stat(f))
	}
	const (
		truncations     = "parcela_sqlite_wal_truncations_total"
		truncationsHelp = "RESTART checkpoints of SQLite's log, by outcome: emptied (the next commit writes it from its start), or gave_up (a reader in the way, or an error)."
		drains          = "parcela_sqlite_wal_read_drains_total"
		drainsHelp      = "Near the log's bound, new reads held back until those under way ended, by outcome: emptied (the log, then), or timed_out (a read outlasted 1 s)."
	)
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "parcela_sqlite_wal_bytes",
			Help: "Length in use of SQLite's write-ahead log at the checkpointer's last look (its file keeps the longest length the log had, at most 64 MB)."},
			stat(func(c sqldb.CheckpointStats) int64 { return c.WALBytes })),
		byOutcome(truncations, truncationsHelp, "emptied", func(c sqldb.CheckpointStats) int64 { return c.Emptied }),
		byOutcome(truncations, truncationsHelp, "gave_up", func(c sqldb.CheckpointStats) int64 { return c.GaveUp }),
		byOutcome(drains, drainsHelp, "emptied", func(c sqldb.CheckpointStats) int64 { return c.Drained }),
		byOutcome(drains, drainsHelp, "timed_out", func(c sqldb.CheckpointStats) int64 { return c.Undrained }),
	)
}

// registerReadGateMetrics exports what the reads spent queuing at the
// store's read gate: every read on SQLite, the pages of rows (listings) on
// PostgreSQL. A wait time that climbs with the traffic is reads finding
// every reader busy (SQLite) or the listings' slots taken (PostgreSQL:
// a quarter of the pool; pool_max_conns widens it). On SQLite the reads
// held back by a checkpoint's drain count too (see
// parcela_sqlite_wal_read_drains_total).
func registerReadGateMetrics(reg prometheus.Registerer, db *sqldb.DB) {
	reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "parcela_read_gate_waits_total",
			Help: "Reads that queued at the store's read gate (SQLite: every read passes it; PostgreSQL: the listings' pages)."},
			func() float64 { return float64(db.ReadGate().Waits) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "parcela_read_gate_wait_seconds_total",
			Help: "Time the reads that queued at the store's read gate spent queued (those that gave up waiting too)."},
			func() float64 { return db.ReadGate().Waited.Seconds() }),
	)
}
