package sqldb

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"testing"
)

// openScratch opens a SQLite store with a table of names to write.
func openScratch(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "group.db"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.write.Exec(`CREATE TABLE names (name TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	return db
}

func insertName(name string) func(tx *Tx) error {
	return func(tx *Tx) error {
		_, err := tx.r.exec(context.Background(), `INSERT INTO names (name) VALUES (?)`, name)
		return err
	}
}

func storedNames(t *testing.T, db *DB) []string {
	t.Helper()
	names, err := collect(context.Background(), db.reader, scanString, `SELECT name FROM names ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// runOneBatch runs jobs as one batch, as the writer would had they queued
// together.
func runOneBatch(db *DB, jobs ...*writeJob) {
	rest := jobs[1:]
	db.runBatch(jobs[0], func() *writeJob {
		if len(rest) == 0 {
			return nil
		}
		j := rest[0]
		rest = rest[1:]
		return j
	})
}

func job(ctx context.Context, fn func(tx *Tx) error) *writeJob {
	return &writeJob{ctx: ctx, fn: fn, done: make(chan struct{})}
}

// insertThen inserts name, then ends as then does (an error, a panic, a
// second insert).
func insertThen(name string, then func(tx *Tx) error) func(tx *Tx) error {
	return func(tx *Tx) error {
		if err := insertName(name)(tx); err != nil {
			return err
		}
		return then(tx)
	}
}

func fail(err error) func(*Tx) error { return func(*Tx) error { return err } }

func panics(msg string) func(*Tx) error { return func(*Tx) error { panic(msg) } }

// allTold fails t unless every job was told its outcome.
func allTold(t *testing.T, jobs []*writeJob) {
	t.Helper()
	for i, j := range jobs {
		select {
		case <-j.done:
		default:
			t.Fatalf("job %d was not told its outcome", i)
		}
	}
}

// In one group commit, a transaction that fails (an error, a failed
// statement, a panic, a canceled request) loses its own writes only; the
// others' commit.
func TestGroupCommitKeepsTheOthersOfAFailure(t *testing.T) {
	t.Parallel()
	db := openScratch(t)
	ctx := context.Background()
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	failure := errors.New("b fails")
	jobs := []*writeJob{
		job(ctx, insertName("a")),
		job(ctx, insertThen("b", fail(failure))),
		job(ctx, insertThen("c", panics("c panics"))),
		job(ctx, insertThen("d", insertName("a"))), // a: taken by the first
		job(canceled, insertName("f")),
		job(ctx, insertName("e")),
	}
	runOneBatch(db, jobs...)
	allTold(t, jobs)
	if jobs[0].err != nil || jobs[5].err != nil {
		t.Errorf("the good jobs failed: %v, %v", jobs[0].err, jobs[5].err)
	}
	if !errors.Is(jobs[1].err, failure) || jobs[2].panicked != "c panics" || classify(jobs[3].err) != uniqueViolation ||
		!errors.Is(jobs[4].err, context.Canceled) {
		t.Errorf("outcomes: %v, %v, %v, %v", jobs[1].err, jobs[2].panicked, jobs[3].err, jobs[4].err)
	}
	if got := fmt.Sprint(storedNames(t, db)); got != "[a e]" {
		t.Errorf("stored %s, want [a e]", got)
	}
}

// The first transaction of a batch runs without a savepoint: when it
// fails, the batch begins again with the next, and nothing of the failed
// one is kept.
func TestGroupCommitAFailedFirstBeginsAnother(t *testing.T) {
	t.Parallel()
	db := openScratch(t)
	ctx := context.Background()
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	failure := errors.New("x fails")
	jobs := []*writeJob{
		job(ctx, insertThen("x", fail(failure))),
		job(ctx, insertThen("y", panics("y panics"))),
		job(canceled, insertName("z")),
		job(ctx, insertName("a")),
		job(ctx, insertThen("b", insertName("a"))), // a: taken by the one before, in this batch
		job(ctx, insertName("c")),
	}
	runOneBatch(db, jobs...)
	allTold(t, jobs)
	if !errors.Is(jobs[0].err, failure) || jobs[1].panicked != "y panics" || !errors.Is(jobs[2].err, context.Canceled) ||
		classify(jobs[4].err) != uniqueViolation {
		t.Errorf("outcomes: %v, %v, %v, %v", jobs[0].err, jobs[1].panicked, jobs[2].err, jobs[4].err)
	}
	if jobs[3].err != nil || jobs[5].err != nil {
		t.Errorf("the good jobs failed: %v, %v", jobs[3].err, jobs[5].err)
	}
	if got := fmt.Sprint(storedNames(t, db)); got != "[a c]" {
		t.Errorf("stored %s, want [a c]", got)
	}
}

// A transaction that ends the shared transaction itself takes the batch
// with it; the others are told to run again, and nothing is half kept.
func TestGroupCommitAbortedBatch(t *testing.T) {
	t.Parallel()
	db := openScratch(t)
	ctx := context.Background()
	first := job(ctx, insertName("a"))
	breaker := job(ctx, func(tx *Tx) error {
		if _, err := tx.sqlTx.Exec(`ROLLBACK`); err != nil {
			return err
		}
		return errors.New("gave up")
	})
	runOneBatch(db, first, breaker)
	if !errors.Is(first.err, errBatchAborted) || breaker.err == nil {
		t.Fatalf("outcomes: %v, %v", first.err, breaker.err)
	}
	if got := storedNames(t, db); len(got) != 0 {
		t.Fatalf("stored %v after the abort", got)
	}
	// The writer is usable again, and inTx runs an aborted transaction again.
	if err := db.inTx(ctx, insertName("a")); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(storedNames(t, db)); got != "[a]" {
		t.Errorf("stored %s, want [a]", got)
	}
}

// Many writers at once: each is told its own outcome, and exactly the
// successful ones are stored.
func TestGroupCommitConcurrentWriters(t *testing.T) {
	t.Parallel()
	db := openScratch(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var kept []string
	for i := range 200 {
		wg.Go(func() {
			name := fmt.Sprintf("n%03d", i)
			err := db.inTx(ctx, func(tx *Tx) error {
				if err := insertName(name)(tx); err != nil {
					return err
				}
				if i%3 == 0 {
					return errors.New("refused")
				}
				return nil
			})
			if (err == nil) != (i%3 != 0) {
				t.Errorf("%s: %v", name, err)
			}
			if err == nil {
				mu.Lock()
				kept = append(kept, name)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	sort.Strings(kept)
	if got, want := fmt.Sprint(storedNames(t, db)), fmt.Sprint(kept); got != want {
		t.Errorf("stored %s, want %s", got, want)
	}
}
