package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"parcela"
)

// gateSetup is a reader runner over an in-memory SQLite database whose
// gate admits n readers.
func gateSetup(t *testing.T, n int) runner {
	t.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(4)
	return runner{q: db, b: &binder{dialect: SQLite}, gate: newReadGate(n)}
}

// waitForWaiter returns once someone waits at the gate: taking nothing
// fails only while a waiter is queued (taking a slot would fail on a full
// gate too, before anyone queued).
func waitForWaiter(t *testing.T, g *readGate) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for g.sem.TryAcquire(0) {
		if time.Now().After(deadline) {
			t.Fatal("no one came to wait at the gate")
		}
		time.Sleep(time.Millisecond)
	}
}

// queuePage starts a page read that waits at r's gate, and returns once
// it waits; the read's outcome comes on the channel once it has passed.
func queuePage(t *testing.T, r runner) <-chan error {
	t.Helper()
	got := make(chan error, 1)
	go func() {
		page, err := r.heavy().query(context.Background(), `SELECT 1`)
		if err == nil {
			page.Close()
		}
		got <- err
	}()
	waitForWaiter(t, r.gate)
	return got
}

func blocked(t *testing.T, r runner) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, err := r.query(ctx, `SELECT 1`); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a reader passed a full gate (err %v)", err)
	}
}

func TestReadGateWeighsPagesAndGivesSlotsBack(t *testing.T) {
	t.Parallel()
	r := gateSetup(t, 4)
	ctx := context.Background()
	a, err := r.heavy().query(ctx, `SELECT 1`)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.heavy().query(ctx, `SELECT 1`)
	if err != nil {
		t.Fatal(err)
	}
	blocked(t, r) // two pages fill four readers
	a.Close()
	a.Close() // a second Close gives nothing back twice
	c, err := r.query(ctx, `SELECT 1`)
	if err != nil {
		t.Fatal(err)
	}
	d, err := r.query(ctx, `SELECT 1`)
	if err != nil {
		t.Fatal(err)
	}
	blocked(t, r)
	// A row gives its slot back when scanned, found or not.
	b.Close()
	var v int
	if err := r.queryRow(ctx, `SELECT 7`).Scan(&v); err != nil || v != 7 {
		t.Fatalf("scan: %d, %v", v, err)
	}
	if err := r.queryRow(ctx, `SELECT 1 WHERE 0`).Scan(&v); !errors.Is(err, sql.ErrNoRows) {
		t.Fatalf("no row: %v, want sql.ErrNoRows", err)
	}
	if err := r.queryRow(ctx, `SELECT nope`).Scan(&v); err == nil {
		t.Fatal("a bad statement scanned")
	}
	if _, err := r.exec(ctx, `SELECT 1`); err != nil {
		t.Fatal(err)
	}
	c.Close()
	d.Close()
	if !r.gate.sem.TryAcquire(4) {
		t.Fatal("the gate did not get every slot back")
	}
	r.gate.sem.Release(4)
}

// A reader that arrives while another waits queues behind it, even with a
// slot free: database/sql's own pool would hand it to either.
func TestReadGateServesInArrivalOrder(t *testing.T) {
	t.Parallel()
	r := gateSetup(t, 2)
	ctx := context.Background()
	held, err := r.query(ctx, `SELECT 1`)
	if err != nil {
		t.Fatal(err)
	}
	got := queuePage(t, r)
	blocked(t, r) // one slot is free, but the page came first
	held.Close()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if _, err := r.exec(ctx, `SELECT 1`); err != nil {
		t.Fatal(err)
	}
}

// SQLite's reader pool passes a gate as wide as the pool; PostgreSQL's
// reads, and transactions, pass none.
func TestSQLiteReadsPassAGateAsWideAsThePool(t *testing.T) {
	t.Parallel()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "gate.db"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	g := db.reader.gate
	if g == nil {
		t.Fatal("SQLite's reads pass no gate")
	}
	if pool := db.read.Stats().MaxOpenConnections; g.n != int64(pool) {
		t.Fatalf("the gate admits %d readers, the pool has %d", g.n, pool)
	}
	if db.writer().gate != nil {
		t.Fatal("the writer's statements pass the readers' gate")
	}
	if db.reader.pool != nil {
		t.Fatal("SQLite's reads go to a PostgreSQL pool")
	}
}

// A session enters the gate once: its statements run while others queue
// at the gate, ahead of them, and done gives its weight back.
func TestReadGateSessionEntersOnce(t *testing.T) {
	t.Parallel()
	r := gateSetup(t, 2)
	ctx := context.Background()
	s, done, err := r.heavy().session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Someone queues at the gate, which the session fills.
	got := make(chan error, 1)
	go func() {
		rows, err := r.query(ctx, `SELECT 1`)
		if err == nil {
			rows.Close()
		}
		got <- err
	}()
	waitForWaiter(t, r.gate)
	// The session's statements do not queue behind the waiter.
	for i := 0; i < 3; i++ {
		var v int
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := s.queryRow(sctx, `SELECT ?`, i).Scan(&v)
		cancel()
		if err != nil || v != i {
			t.Fatalf("statement %d of the session: %d, %v", i, v, err)
		}
	}
	select {
	case err := <-got:
		t.Fatalf("a reader passed the gate the session fills (err %v)", err)
	default:
	}
	done()
	if err := <-got; err != nil {
		t.Fatalf("the waiter after the session: %v", err)
	}
	if !r.gate.sem.TryAcquire(2) {
		t.Fatal("the session did not give its weight back")
	}
	r.gate.sem.Release(2)
	// A session that cannot enter before its context ends holds nothing.
	_, release, err := r.heavy().session(ctx) // fills the gate
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := r.session(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("a session at a full gate with its context over: %v", err)
	}
	release()
	if !r.gate.sem.TryAcquire(2) {
		t.Fatal("the gate did not get every slot back")
	}
	r.gate.sem.Release(2)
}

// PostgreSQL's page gate admits pages one slot each and lets every other
// read pass, even while a page waits for a slot.
func TestPageGateAdmitsOnlyPages(t *testing.T) {
	t.Parallel()
	r := gateSetup(t, 2)
	r.gate = newPageGate(2)
	ctx := context.Background()
	a, err := r.heavy().query(ctx, `SELECT 1`)
	if err != nil {
		t.Fatal(err)
	}
	_, done, err := r.heavy().session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The gate is full: a third page waits.
	got := queuePage(t, r)
	// Single-row reads and statements pass; a read that took nothing still
	// queued behind the waiting page would time out here.
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	var v int
	err = r.queryRow(qctx, `SELECT 5`).Scan(&v)
	if err == nil {
		_, err = r.exec(qctx, `SELECT 1`)
	}
	cancel()
	if err != nil || v != 5 {
		t.Fatalf("a read that is not a page waited at the page gate: %d, %v", v, err)
	}
	a.Close()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	done()
	if !r.gate.sem.TryAcquire(2) {
		t.Fatal("the page gate did not get every slot back")
	}
	r.gate.sem.Release(2)
	// A quarter of the pool, never none.
	for pool, want := range map[int32]int{1: 1, 7: 1, 16: 4, 40: 10} {
		if got := pageReaders(pool); got != want {
			t.Errorf("a pool of %d reads %d pages at once, want %d", pool, got, want)
		}
	}
}

// A read that queues at the gate is counted, with its time in the queue;
// one that finds room is not.
func TestReadGateCountsWaits(t *testing.T) {
	t.Parallel()
	r := gateSetup(t, 2)
	db := &DB{reader: r}
	ctx := context.Background()
	if _, err := r.exec(ctx, `SELECT 1`); err != nil {
		t.Fatal(err)
	}
	if s := db.ReadGate(); s != (ReadGateStats{}) {
		t.Fatalf("a read that found room counted as a wait: %+v", s)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := r.heavy().session(canceled); !errors.Is(err, context.Canceled) {
		t.Fatalf("a canceled read passed the gate: %v", err)
	}
	held, err := r.heavy().query(ctx, `SELECT 1`)
	if err != nil {
		t.Fatal(err)
	}
	got := queuePage(t, r)
	const hold = 30 * time.Millisecond
	time.Sleep(hold)
	held.Close()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if s := db.ReadGate(); s.Waits != 1 || s.Waited < hold {
		t.Fatalf("after one read queued %v: %+v", hold, s)
	}
}

// One company's pages take at most half of the page slots, waiting for
// their turn outside the gate: another company's page finds the other half
// free, where the first company's second page had taken it (and a burst of
// its deep pages, seconds each, had filled the gate and its queue ahead of
// everyone). On SQLite's gate of four readers (two pages) a company has
// one page in at a time; on PostgreSQL's page gate of four, two.
func TestReadGateAdmitsACompanysPagesByTurns(t *testing.T) {
	t.Parallel()
	busy := parcela.Auth{CompanyID: "busy", Environment: parcela.Production}
	quiet := parcela.Auth{CompanyID: "quiet", Environment: parcela.Production}
	sandbox := parcela.Auth{CompanyID: "busy", Environment: parcela.Sandbox}
	deep := parcela.Page{Page: deepPageRows/100 + 1, PerPage: 100}
	for name, gate := range map[string]*readGate{"sqlite": newReadGate(4), "postgres": newPageGate(4)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := gateSetup(t, 4)
			r.gate = gate
			ctx := context.Background()
			turns := map[string]int{"sqlite": 1, "postgres": 2}[name]
			var held []*gatedRows
			for range turns {
				rows, err := r.pagesOf(busy, deep).query(ctx, `SELECT 1`)
				if err != nil {
					t.Fatal(err)
				}
				held = append(held, rows)
			}
			// Its next page waits for its turn, not at the gate.
			next := make(chan error, 1)
			go func() {
				rows, err := r.pagesOf(busy, deep).query(ctx, `SELECT 1`)
				if err == nil {
					rows.Close()
				}
				next <- err
			}()
			deadline := time.Now().Add(5 * time.Second)
			for {
				gate.turns.mu.Lock()
				waiting := gate.turns.turns[busy.CompanyID+"/"+string(busy.Environment)].users
				gate.turns.mu.Unlock()
				if waiting == turns+1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the company's next page never came to wait")
				}
				time.Sleep(time.Millisecond)
			}
			select {
			case err := <-next:
				t.Fatalf("the company's page beyond its turns was let in (%v)", err)
			case <-time.After(30 * time.Millisecond):
			}
			// Another company's page, and the same company's other
			// environment, pass at once.
			for _, a := range []parcela.Auth{quiet, sandbox} {
				qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				rows, err := r.pagesOf(a, deep).query(qctx, `SELECT 1`)
				cancel()
				if err != nil {
					t.Fatalf("%s's page waited behind another's: %v", a.CompanyID+"/"+string(a.Environment), err)
				}
				rows.Close()
			}
			// The same company's shallow page takes no turn: it queues at
			// the gate at once.
			sctx, scancel := context.WithTimeout(ctx, 5*time.Second)
			rows, err := r.pagesOf(busy, parcela.Page{Page: 1, PerPage: 100}).query(sctx, `SELECT 1`)
			scancel()
			if err != nil {
				t.Fatalf("the company's first page waited for its deep pages' turn: %v", err)
			}
			rows.Close()
			// A page that gives up waiting for its turn leaves nothing behind.
			cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			_, err = r.pagesOf(busy, deep).query(cctx, `SELECT 1`)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("a page past its company's turns: %v", err)
			}
			held[0].Close()
			if err := <-next; err != nil {
				t.Fatal(err)
			}
			for _, rows := range held[1:] {
				rows.Close()
			}
			gate.turns.mu.Lock()
			left := len(gate.turns.turns)
			gate.turns.mu.Unlock()
			if left != 0 || !gate.sem.TryAcquire(4) {
				t.Fatalf("turns of %d companies left, or the gate's slots were not all given back", left)
			}
			gate.sem.Release(4)
			if got := int(gate.perOwner()); got != turns {
				t.Fatalf("a company has %d pages in at once, want %d", got, turns)
			}
		})
	}
}

// A page of bills filtered by payment date reads and sorts the whole range
// whatever its offset, so its first page takes its company's turn as a deep
// page does: where it passed at once, one company's wide paid_at ranges
// filled the gate ahead of every other company's reads. Its first page
// filtered by due date (read in order, LIMIT stops early) takes none.
func TestReadGateAdmitsPaidRangePagesByTurns(t *testing.T) {
	t.Parallel()
	busy := parcela.Auth{CompanyID: "busy", Environment: parcela.Production}
	owner := busy.CompanyID + "/" + string(busy.Environment)
	from, to := time.Date(2000, 1, 1, 0, 0, 0, 0, parcela.SaoPaulo), time.Date(2030, 1, 1, 0, 0, 0, 0, parcela.SaoPaulo)
	first := parcela.Page{Page: 1, PerPage: 100}
	for name, gate := range map[string]*readGate{"sqlite": newReadGate(4), "postgres": newPageGate(4)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := gateSetup(t, 4)
			r.gate = gate
			ctx := context.Background()
			// The company's turns are all taken by its deep pages.
			var held []*gatedRows
			for range gate.perOwner() {
				rows, err := r.pagesOf(busy, parcela.Page{Page: deepPageRows/100 + 1, PerPage: 100}).query(ctx, `SELECT 1`)
				if err != nil {
					t.Fatal(err)
				}
				held = append(held, rows)
			}
			paid := make(chan error, 1)
			go func() {
				rows, err := r.billPagesOf(busy, parcela.BillFilter{Page: first, PaidFrom: &from, PaidTo: &to}).query(ctx, `SELECT 1`)
				if err == nil {
					rows.Close()
				}
				paid <- err
			}()
			for waiting := 0; waiting != len(held)+1; {
				select {
				case err := <-paid:
					t.Fatalf("the first page of a paid_at range passed without its company's turn (%v)", err)
				case <-time.After(time.Millisecond):
				}
				gate.turns.mu.Lock()
				if turn := gate.turns.turns[owner]; turn != nil {
					waiting = turn.users
				}
				gate.turns.mu.Unlock()
			}
			due := r.billPagesOf(busy, parcela.BillFilter{Page: first, DueFrom: &from, DueTo: &to})
			if due.owner != "" {
				t.Fatal("the first page of a due date range takes a turn")
			}
			for _, rows := range held {
				rows.Close()
			}
			if err := <-paid; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// recordingQuerier records the statements run through it.
type recordingQuerier struct {
	querier
	mu  sync.Mutex
	ran []string
}

func (q *recordingQuerier) QueryContext(ctx context.Context, s string, args ...any) (*sql.Rows, error) {
	q.mu.Lock()
	q.ran = append(q.ran, s)
	q.mu.Unlock()
	return q.querier.QueryContext(ctx, s, args...)
}

func (q *recordingQuerier) statements() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.ran)
}

// fullPageGate is a SQLite store behind PostgreSQL's page gate, one page
// wide and held (held.Close frees it), its statements recorded.
func fullPageGate(t *testing.T) (*DB, *recordingQuerier, *gatedRows) {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "gated.db"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec := &recordingQuerier{querier: db.reader.q}
	db.reader.q, db.reader.gate = rec, newPageGate(1)
	held, err := db.reader.heavy().query(context.Background(), `SELECT 1`)
	if err != nil {
		t.Fatal(err)
	}
	return db, rec, held
}

// A listing of deliveries counts the company's whole delivery log (or its
// webhook's), which every event lengthens, so its count is read within
// the page's place at the gate and its company's turn. It was read before,
// ungated on PostgreSQL: a company with a long log sending listings at once
// held a pool connection with each count, as many as its rate limit let
// through, and every company's reads waited for a connection.
func TestDeliveryListingCountsWithinItsTurn(t *testing.T) {
	t.Parallel()
	db, rec, held := fullPageGate(t)
	ctx := context.Background()
	busy := parcela.Auth{CompanyID: "busy", Environment: parcela.Production}
	for _, webhookID := range []string{"", "5f0c6c9e-6f55-4b8e-9a43-0d4c4c2d7f10"} {
		rec.mu.Lock()
		rec.ran = nil
		rec.mu.Unlock()
		got := make(chan error, 1)
		go func() {
			_, _, err := db.Deliveries(ctx, busy, webhookID, parcela.Page{Page: 1, PerPage: 100})
			got <- err
		}()
		waitForWaiter(t, db.reader.gate)
		for _, s := range rec.statements() {
			if strings.Contains(s, "webhook_deliveries") {
				t.Fatalf("deliveries of webhook %q counted outside the gate, while it was full:\n%s", webhookID, s)
			}
		}
		db.reader.gate.turns.mu.Lock()
		turn := db.reader.gate.turns.turns[busy.CompanyID+"/"+string(busy.Environment)]
		db.reader.gate.turns.mu.Unlock()
		if turn == nil {
			t.Fatalf("deliveries of webhook %q listed without the company's turn", webhookID)
		}
		held.Close()
		if err := <-got; err != nil && (webhookID == "" || parcela.ErrorCode(err) != parcela.ENOTFOUND) {
			t.Fatal(err)
		}
		var err error
		if held, err = db.reader.heavy().query(ctx, `SELECT 1`); err != nil {
			t.Fatal(err)
		}
	}
	held.Close()
}

// A listing of products counts them within its page's place at the gate,
// as the offers' does: counted before the gate (ungated on PostgreSQL), a
// company's listings at once held a pool connection with each count of its
// catalog, which nothing bounds but its rate limit.
func TestProductListingCountsWithinTheGate(t *testing.T) {
	t.Parallel()
	db, rec, held := fullPageGate(t)
	ctx := context.Background()
	got := make(chan error, 1)
	go func() {
		_, _, err := db.Products(ctx, parcela.Auth{CompanyID: "busy", Environment: parcela.Production}, parcela.Page{Page: 1, PerPage: 100})
		got <- err
	}()
	waitForWaiter(t, db.reader.gate)
	for _, s := range rec.statements() {
		if strings.Contains(s, "FROM products") {
			t.Fatalf("products counted outside the gate, while it was full:\n%s", s)
		}
	}
	held.Close()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}
