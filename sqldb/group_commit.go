package sqldb

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Group commit on SQLite's single writer. Every write transaction (inTx)
// is handed to one goroutine, which runs the transactions waiting for it
// in one SQLite transaction, each after the first in its own SAVEPOINT: a
// transaction that fails is rolled back to its savepoint, and only its own
// work is lost (the first's failure rolls back the transaction, which
// holds nothing else yet, and the next begins another). One COMMIT then writes the pages all of them touched: a bill
// index leaf that twelve charges changed is written to the log once, not
// twelve times. Nobody waits for company: the writer takes whoever is
// queued when it is free, so a lone request commits alone.
//
// Every caller hears its outcome only after the batch's COMMIT (or its
// abort): an answered request is committed, and a request that lost a
// race reads again only after the change it lost to is visible to the
// readers.

// maxBatch bounds the transactions of one commit, and so how long the
// first of them waits for the others.
const maxBatch = 32

// errBatchAborted is the outcome of a transaction whose own work
// succeeded but whose batch was rolled back by another's failure; inTx
// runs it again. SQLite rolls back the whole transaction on some
// failures of one statement: an interrupted write, an I/O error, a full
// disk.
var errBatchAborted = errors.New("the group commit was rolled back by another transaction's failure")

// writeJob is one transaction waiting for the writer.
type writeJob struct {
	ctx context.Context
	fn  func(tx *Tx) error
	err error
	// committed tells the job's idempotent request, if any, that its
	// response or claim committed.
	committed func()
	// panicked is a panic of fn (or of the fault hook), raised again on
	// the caller's goroutine.
	panicked any
	done     chan struct{}
}

// groupWriter is the goroutine that runs the write transactions.
type groupWriter struct {
	jobs    chan *writeJob
	stop    chan struct{}
	stopped chan struct{}
	once    sync.Once
}

func (db *DB) startGroupWriter() {
	g := &groupWriter{jobs: make(chan *writeJob), stop: make(chan struct{}), stopped: make(chan struct{})}
	db.group = g
	go func() {
		defer close(g.stopped)
		for {
			select {
			case <-g.stop:
				return
			case j := <-g.jobs:
				db.runBatch(j, g.queued)
			}
		}
	}()
}

// queued is the next job waiting, or nil.
func (g *groupWriter) queued() *writeJob {
	select {
	case j := <-g.jobs:
		return j
	default:
		return nil
	}
}

// close stops the writer after its batch under way.
func (g *groupWriter) close() {
	g.once.Do(func() { close(g.stop) })
	<-g.stopped
}

// groupTx runs fn in a transaction of the writer's next batch and reports
// its outcome once the batch committed.
func (db *DB) groupTx(ctx context.Context, fn func(tx *Tx) error) error {
	j := &writeJob{ctx: ctx, fn: fn, done: make(chan struct{})}
	select {
	case db.group.jobs <- j:
	case <-db.group.stop:
		return errors.New("the database is closed")
	case <-ctx.Done():
		return ctx.Err()
	}
	// Once taken, the outcome is awaited whatever ctx does: the work may
	// be committed.
	<-j.done
	if j.panicked != nil {
		panic(j.panicked)
	}
	if j.err != nil {
		return j.err
	}
	if j.committed != nil {
		j.committed()
	}
	return nil
}

// runBatch runs first and the jobs next hands it (nil: none queued), up to
// maxBatch, in one transaction, then tells each its outcome. A first job
// that fails alone starts the batch again with the next.
func (db *DB) runBatch(first *writeJob, next func() *writeJob) {
	for first != nil {
		first = db.commitBatch(first, next)
	}
}

// commitBatch is one transaction of runBatch. The first job runs without
// a savepoint: nothing precedes it to keep, so its failure rolls back the
// whole transaction, and commitBatch returns the next job queued (or nil)
// to begin another. Each later job runs in its own savepoint. A savepoint
// costs the writer two statements and a copy of every page the job
// changes first; a lone request (a commit of one) pays none of it.
func (db *DB) commitBatch(first *writeJob, next func() *writeJob) *writeJob {
	batch := []*writeJob{first}
	defer func() {
		for _, j := range batch {
			close(j.done)
		}
	}()
	// The batch's transaction is the writer's, not any request's: a
	// request whose context ends loses only its own statements.
	tx, err := db.Begin(context.Background())
	if err != nil {
		first.err = err
		return nil
	}
	defer tx.Rollback()
	if !db.runAlone(tx, first) {
		_ = tx.Rollback()
		return next()
	}
	for len(batch) < maxBatch {
		n := next()
		if n == nil {
			break
		}
		batch = append(batch, n)
		if err := db.runSavepoint(tx, n); err != nil {
			// The transaction itself is gone: nothing of the batch stays.
			for _, o := range batch {
				if o != n && o.err == nil && o.panicked == nil {
					o.err = errBatchAborted
				}
			}
			return nil
		}
	}
	if err := tx.Commit(context.Background()); err != nil {
		for _, j := range batch {
			if j.err == nil && j.panicked == nil {
				j.err = err
			}
		}
	}
	return nil
}

// runAlone runs j, the first of its transaction, with no savepoint,
// keeping its outcome in j; it reports whether j succeeded.
func (db *DB) runAlone(tx *Tx, j *writeJob) bool {
	if err := j.ctx.Err(); err != nil {
		j.err = err
		return false
	}
	db.runJob(tx, j)
	return j.err == nil && j.panicked == nil
}

// runJob runs j's work in tx, a panic kept in j.
func (db *DB) runJob(tx *Tx, j *writeJob) {
	tx.dropJobs()
	tx.hooks = nil
	func() {
		defer func() {
			if p := recover(); p != nil {
				j.panicked = p
			}
		}()
		j.err = db.inSavepoint(tx, j)
	}()
	tx.dropJobs() // a failed job's queue goes with its savepoint
}

// runSavepoint runs j in its own savepoint of tx, keeping its outcome in
// j. It returns an error only when the savepoint could not be undone,
// which leaves the transaction unusable.
func (db *DB) runSavepoint(tx *Tx, j *writeJob) (fatal error) {
	if err := j.ctx.Err(); err != nil {
		j.err = err
		return nil
	}
	if _, err := tx.sqlTx.ExecContext(context.Background(), `SAVEPOINT request`); err != nil {
		j.err = err
		return err
	}
	db.runJob(tx, j)
	if j.err == nil && j.panicked == nil {
		if _, err := tx.sqlTx.ExecContext(context.Background(), `RELEASE request`); err != nil {
			j.err = err
			return err
		}
		return nil
	}
	if _, err := tx.sqlTx.ExecContext(context.Background(), `ROLLBACK TO request`); err != nil {
		return fmt.Errorf("roll back to the savepoint: %w", err)
	}
	if _, err := tx.sqlTx.ExecContext(context.Background(), `RELEASE request`); err != nil {
		return fmt.Errorf("release the savepoint: %w", err)
	}
	return nil
}

// inSavepoint is tryTx's work for one transaction of a batch: fn, its
// jobs and its idempotent response, all before the shared commit.
func (db *DB) inSavepoint(tx *Tx, j *writeJob) error {
	if err := j.fn(tx); err != nil {
		return err
	}
	if err := tx.enqueueJobs(j.ctx); err != nil {
		return err
	}
	committed, err := db.storeAnswer(j.ctx, tx)
	j.committed = committed
	return err
}
