package sqldb

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// readGate admits reads in the order they arrive. On SQLite it admits
// every read to the reader pool, as many at once as the pool has
// connections; on PostgreSQL, only pages of rows (newPageGate). Without
// it, database/sql hands a freed SQLite connection to a random waiter, not
// the longest waiting: under load a request could be passed over again and
// again, and the slowest pages of a run waited several times the average
// (docs/performance.md, seventh pass). x/sync's semaphore serves its
// waiters first come, first served. On SQLite a page of rows weighs two
// readers: four such statements at once on two cores only share them, each
// taking twice as long and evicting the others' caches. A statement holds
// its weight for as long as it holds its connection: until its rows are
// closed, or its row scanned; a session (runner.session) holds it across
// its statements. A transaction's statements pass no gate (nil).
type readGate struct {
	sem *semaphore.Weighted
	n   int64
	// pagesOnly: only pages of rows take a slot, one each (PostgreSQL's).
	pagesOnly bool
	// waits counts the statements that queued (the gate was full, or
	// others were waiting), those that gave up waiting too; waited sums
	// their time in the queue, in nanoseconds. The checkpointer's own wait
	// for the whole gate is not counted; the reads it holds back are.
	waits, waited atomic.Int64

	turns ownerTurns // of the owners any of whose pages wants the gate
}

// ownerTurns admits each owner's work a few at a time, first come, first
// served among that owner's: its pages to a read gate, its transactions to
// PostgreSQL's pool (writeTurns). The zero value is ready.
type ownerTurns struct {
	mu    sync.Mutex
	turns map[string]*ownerTurn // by owner, while any of its work holds or wants a turn
}

// ownerTurn is one owner's turns.
type ownerTurn struct {
	sem   *semaphore.Weighted
	users int // holding or waiting for a turn
}

// take waits for one of owner's per turns and returns what gives it back.
func (o *ownerTurns) take(ctx context.Context, owner string, per int64) (func(), error) {
	o.mu.Lock()
	t := o.turns[owner]
	if t == nil {
		if o.turns == nil {
			o.turns = map[string]*ownerTurn{}
		}
		t = &ownerTurn{sem: semaphore.NewWeighted(per)}
		o.turns[owner] = t
	}
	t.users++
	o.mu.Unlock()
	leave := func() {
		o.mu.Lock()
		if t.users--; t.users == 0 {
			delete(o.turns, owner)
		}
		o.mu.Unlock()
	}
	if err := t.sem.Acquire(ctx, 1); err != nil {
		leave()
		return nil, err
	}
	return sync.OnceFunc(func() {
		t.sem.Release(1)
		leave()
	}), nil
}

// perOwner is how many pages of one company and environment may be in
// the gate at once: half the pages it admits at once, at least one. The
// gate is first come, first served and a page's cost grows with its
// offset (a page a million bills deep reads for seconds), so one company's
// deep pages, sent many at once, filled the gate and its queue, and every
// other company's reads waited behind all of them; its rate limit bounds
// how many it sends, not what they cost. Waiting for its turn outside the
// gate, it holds at most half of the page slots, and another company's
// read waits for at most the pages let in before it.
func (g *readGate) perOwner() int64 {
	return max(1, g.n/g.weight(true)/2)
}

// turn waits for one of owner's turns at the gate (perOwner), first come,
// first served among its pages, and returns what gives it back.
func (g *readGate) turn(ctx context.Context, owner string) (func(), error) {
	return g.turns.take(ctx, owner, g.perOwner())
}

// acquire takes w of the gate, behind whoever came first, and counts the
// wait when there was one. A canceled request takes nothing, even with
// room, as the semaphore's Acquire refuses it.
func (g *readGate) acquire(ctx context.Context, w int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if g.sem.TryAcquire(w) {
		return nil
	}
	start := time.Now()
	err := g.sem.Acquire(ctx, w)
	g.waits.Add(1)
	g.waited.Add(int64(time.Since(start)))
	return err
}

// ReadGateStats are what the reads spent queuing at the read gate: how
// many queued, and for how long in all.
type ReadGateStats struct {
	Waits  int64
	Waited time.Duration
}

// ReadGate is what the reads spent queuing at the read gate, for the
// operations listener's metrics: on SQLite every read passes the gate, on
// PostgreSQL the pages of rows. Waits that grow with the traffic are reads
// that found all the readers (SQLite) or the page slots (PostgreSQL) busy.
func (db *DB) ReadGate() ReadGateStats {
	g := db.reader.gate
	if g == nil {
		return ReadGateStats{}
	}
	return ReadGateStats{Waits: g.waits.Load(), Waited: time.Duration(g.waited.Load())}
}

// pageWeight is the weight of a statement that reads a page of rows; any
// other weighs one.
const pageWeight = 2

func newReadGate(n int) *readGate {
	return &readGate{sem: semaphore.NewWeighted(int64(n)), n: int64(n)}
}

// newPageGate admits PostgreSQL's pages of rows n at a time, in the order
// they arrive; every other read passes at once. Ungated, sixteen listings
// ran at once in the database and shared its cores: each page's time grew
// with how many others ran beside it, and the slowest pages of a run took
// three to four times the median (p99 107 to 129 ms, p50 31 to 38 ms;
// docs/performance.md, eleventh pass). Gated, a page waits its turn and then
// runs at the speed of a few; and the pages cannot take every connection of
// the pool, which the charges and the single reads share.
func newPageGate(n int) *readGate {
	return &readGate{sem: semaphore.NewWeighted(int64(n)), n: int64(n), pagesOnly: true}
}

// weight is what a statement takes of the gate: never more than all of
// it; 0 is nothing (it passes without waiting).
func (g *readGate) weight(page bool) int64 {
	switch {
	case g.pagesOnly && page:
		return 1
	case g.pagesOnly:
		return 0
	case page:
		return min(pageWeight, g.n)
	}
	return 1
}

// release gives back w; a nil gate took nothing.
func (g *readGate) release(w int64) {
	if g != nil && w > 0 {
		g.sem.Release(w)
	}
}

// gatedRows are a query's rows, whose Close gives back the gate's slot.
type gatedRows struct {
	rowSet
	slot   slot
	closed bool
	// packed: each row is one JSON array of its columns (see pack), read
	// into row before the destinations.
	packed bool
	json   string
	row    rawRow
}

// Scan reads the row into dests; a packed row through its array.
func (r *gatedRows) Scan(dests ...any) error {
	if !r.packed {
		return r.rowSet.Scan(dests...)
	}
	if err := r.rowSet.Scan(&r.json); err != nil {
		return err
	}
	if cap(r.row) < len(dests) {
		r.row = make(rawRow, len(dests))
	}
	r.row = r.row[:len(dests)]
	if err := decodePacked(r.json, r.row); err != nil {
		return err
	}
	return r.row.Scan(dests...)
}

// Close closes the rows and, the first time, gives back the slot.
func (r *gatedRows) Close() error {
	err := r.rowSet.Close()
	if !r.closed {
		r.closed = true
		r.slot.release()
	}
	return err
}

// gatedRow is a query's first row, scanned once as *sql.Row is.
type gatedRow struct {
	rows *gatedRows
	err  error
}

// Scan reads the first row into dest and closes the rows; no row is
// sql.ErrNoRows.
func (r gatedRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	return r.rows.Close()
}
