package sqldb_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// A bill listing answers the truth after every kind of change: random
// charges, payments in full and in part, cancelations of orders and
// billings, waivers, sandbox expiries, rolled-back changes (a savepoint of
// a group commit on SQLite) racing each other, the sweeps past due dates,
// and, on PostgreSQL, the compactor folding the deltas meanwhile. After
// each round, with nothing changing, every filter's total_items is the
// number of bills a plain read of the table finds for it (by São Paulo
// calendar dates, both ends included), the page holds exactly those bills
// by due date then id, and pages of any size walk them once each.
// Another company's bills and the other environment's are never counted.
func TestBillListingsCountWhatTheyList(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) { billListingsCountWhatTheyList(t, e) })
	}
}

func billListingsCountWhatTheyList(t *testing.T, e sqldb.Dialect) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	var rngMu sync.Mutex
	intn := func(n int) int {
		rngMu.Lock()
		defer rngMu.Unlock()
		return rng.Intn(n)
	}
	ctx := context.Background()
	clock := parcela.NewTestClock(raceStart)
	db := sqldbtest.Open(t, e, sqldb.Config{Clock: clock, Enqueuer: quietEnqueuer{}})
	app := sqldbtest.Services(db, clock)
	c := sqldbtest.Company(t, db)
	a := parcela.Auth{CompanyID: c.ID, Environment: parcela.Sandbox}
	other := parcela.Auth{CompanyID: sqldbtest.Company(t, db).ID, Environment: parcela.Sandbox}
	foreign := chargedOrder(t, app, other, financedOffer(t, app, other))
	production := parcela.Auth{CompanyID: c.ID, Environment: parcela.Production}
	chargedOrder(t, app, production, financedOffer(t, app, production))
	offer := financedOffer(t, app, a)

	var mu sync.Mutex
	var orders []string
	charge := func() error {
		o, err := app.Orders.CreateOrder(ctx, a, fromJSON[parcela.OrderRequest](t, `{"order": {"offer_id": "`+offer.ID+`",
				"customer_name": "Maria da Silva", "customer_birthdate": "1990-05-17", "customer_document": "52998224725",
				"email": "maria@example.com", "phone": "11987654321", "address": {"zipcode": "01310100", "street": "Avenida Paulista",
				"number": "1000", "neighborhood": "Bela Vista", "city_ibge_code": "3550308"}}}`))
		if err != nil {
			return err
		}
		method := []string{"pix", "boleto", "boleto"}[intn(3)]
		_, err = app.Orders.ChargeOrder(ctx, a, o.ID, fromJSON[parcela.ChargeRequest](t, fmt.Sprintf(`{"payment_configuration_id": %q,
				"due_day": %d, "installments": %d, "payment": {"payment_method": %q}, "signature": {"remote_ip": "203.0.113.7", "user_agent": "test"}}`,
			offer.PaymentConfigurations[0].ID, 1+intn(28), 2+intn(11), method)))
		if err != nil {
			return err
		}
		mu.Lock()
		orders = append(orders, o.ID)
		mu.Unlock()
		if intn(2) == 0 { // its down payment paid: its billing active
			o, err := db.Order(ctx, a, o.ID)
			if err != nil {
				return err
			}
			_, _, err = app.Payments.PayPayment(ctx, a, o.Billings[0].Bills[0].Payments[0].ID, parcela.Settlement{})
			return err
		}
		return nil
	}
	// anOrder reads one of the orders charged, at random.
	anOrder := func() (*parcela.Order, error) {
		mu.Lock()
		id := orders[intn(len(orders))]
		mu.Unlock()
		return db.Order(ctx, a, id)
	}
	aBill := func(o *parcela.Order) *parcela.Bill {
		bills := o.Billings[0].Bills
		return bills[intn(len(bills))]
	}
	// unpaid is a live Pix or boleto of one of o's bills.
	unpaid := func(o *parcela.Order) *parcela.Payment {
		var live []*parcela.Payment
		for _, b := range o.Billings[0].Bills {
			for _, p := range b.Payments {
				if p.Status == parcela.PaymentUnpaid && p.Method != parcela.MethodCreditCard {
					live = append(live, p)
				}
			}
		}
		if len(live) == 0 {
			return nil
		}
		return live[intn(len(live))]
	}
	errNothing := errors.New("nothing to do")
	// anUnpaid is one of the orders charged, at random, and a live Pix or
	// boleto of it; errNothing if it has none.
	anUnpaid := func() (*parcela.Order, *parcela.Payment, error) {
		o, err := anOrder()
		if err != nil {
			return nil, nil, err
		}
		if p := unpaid(o); p != nil {
			return o, p, nil
		}
		return nil, nil, errNothing
	}
	ops := map[string]func() error{
		"charge": charge,
		"pay": func() error {
			_, p, err := anUnpaid()
			if err != nil {
				return err
			}
			_, _, err = app.Payments.PayPayment(ctx, a, p.ID, parcela.Settlement{})
			return err
		},
		"pay in part": func() error {
			_, p, err := anUnpaid()
			if err != nil {
				return err
			}
			part := p.AmountCents / 3
			_, _, err = app.Payments.PayPayment(ctx, a, p.ID, parcela.Settlement{PaidAmountCents: &part})
			return err
		},
		"expire": func() error {
			_, p, err := anUnpaid()
			if err != nil {
				return err
			}
			_, _, err = app.Payments.ExpirePayment(ctx, a, p.ID)
			return err
		},
		"cancel order": func() error {
			o, err := anOrder()
			if err != nil {
				return err
			}
			if intn(3) > 0 {
				return errNothing // rarer than the rest
			}
			_, err = app.Orders.CancelOrder(ctx, a, o.ID, "")
			return err
		},
		"cancel billing": func() error {
			o, err := anOrder()
			if err != nil {
				return err
			}
			if intn(3) > 0 {
				return errNothing
			}
			_, err = app.Billings.CancelBilling(ctx, a, o.Billings[0].ID, "desistência")
			return err
		},
		"waive": func() error {
			o, err := anOrder()
			if err != nil {
				return err
			}
			var until *time.Time
			if intn(4) > 0 {
				until = new(clock.Now().AddDate(0, 0, intn(60)))
			}
			_, _, err = app.Bills.WaivePenalties(ctx, a, aBill(o).ID, until)
			return err
		},
		"race one bill": func() error {
			// Its payment paid, expired, paid in part (or its order
			// canceled) and its penalty waived at the same instant.
			o, p, err := anUnpaid()
			if err != nil {
				return err
			}
			errs := race(func() error {
				_, _, err := app.Payments.PayPayment(ctx, a, p.ID, parcela.Settlement{})
				return err
			}, func() error {
				_, _, err := app.Payments.ExpirePayment(ctx, a, p.ID)
				return err
			}, func() error {
				_, _, err := app.Bills.WaivePenalties(ctx, a, p.BillID, new(clock.Now().AddDate(0, 0, 30)))
				return err
			}, func() error {
				if intn(4) > 0 {
					part := p.AmountCents / 2
					_, _, err := app.Payments.PayPayment(ctx, a, p.ID, parcela.Settlement{PaidAmountCents: &part})
					return err
				}
				_, err := app.Orders.CancelOrder(ctx, a, o.ID, "")
				return err
			})
			for _, err := range errs {
				if err != nil && parcela.ErrorCode(err) != parcela.EINVALIDSTATE {
					return err
				}
			}
			return nil
		},
		"roll back": func() error {
			// Two bills moved in one change whose second guard fails:
			// the first bill's move (and its count) is rolled back.
			o, err := anOrder()
			if err != nil {
				return err
			}
			first, second := *aBill(o), *aBill(o)
			if first.ID == second.ID || first.Status != parcela.BillPending {
				return errNothing
			}
			from := first.Status
			first.Status = parcela.BillPaid
			first.PaidAt = new(clock.Now())
			err = db.Apply(ctx, &parcela.Change{At: clock.Now(), Bills: []parcela.BillMove{{Bill: &first, From: from}, {Bill: &second, From: "none"}}})
			if _, ok := errors.AsType[*parcela.Conflict](err); !ok {
				return fmt.Errorf("a change with a stale guard: %v", err)
			}
			return nil
		},
	}
	// Payments are drawn more often: most draws find none live.
	var names []string
	for name := range ops {
		names = append(names, name)
		if name == "pay" || name == "pay in part" {
			names = append(names, name, name, name)
		}
	}
	sort.Strings(names)
	done, refused := map[string]int{}, map[string]int{}

	for range 4 {
		if err := charge(); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 5 {
		// A round's changes race each other, and on PostgreSQL the
		// compactor folds their deltas as they come.
		stop := make(chan struct{})
		var compactions sync.WaitGroup
		if db.Dialect() == sqldb.Postgres {
			compactions.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := db.CompactBillCounts(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		var wg sync.WaitGroup
		var failures atomic.Int32
		for w := range 4 {
			wg.Go(func() {
				for i := range 6 {
					name := names[intn(len(names))]
					if round == 0 && w == 0 && i == 0 {
						name = "roll back"
					}
					err := ops[name]()
					switch {
					case err == nil:
						mu.Lock()
						done[name]++
						mu.Unlock()
					case errors.Is(err, errNothing), parcela.ErrorCode(err) == parcela.EINVALIDSTATE, parcela.ErrorCode(err) == parcela.EINVALID:
						mu.Lock()
						refused[name+" "+parcela.ErrorCode(err)]++
						mu.Unlock()
					default:
						failures.Add(1)
						t.Errorf("%s: %v", name, err)
					}
				}
			})
		}
		wg.Wait()
		close(stop)
		compactions.Wait()
		if failures.Load() > 0 {
			t.FailNow()
		}
		checkBillListings(t, db, a, other, foreign, rng, fmt.Sprintf("round %d", round))
		// Then past due dates: the sweeps expire, mark overdue, issue
		// and lapse, and the listing is checked again.
		clock.Advance(time.Duration(1+rng.Intn(12)) * 24 * time.Hour)
		sweeps := app.Sweeps.Only(a.CompanyID)
		for _, sweep := range []func(context.Context) (parcela.SweepReport, error){sweeps.MarkOverdue, sweeps.ExpireDuePayments, sweeps.IssueDueInstallments, sweeps.MarkOverdue, sweeps.LapseFirstBills} {
			if _, err := sweep(ctx); err != nil {
				t.Fatal(err)
			}
		}
		checkBillListings(t, db, a, other, foreign, rng, fmt.Sprintf("round %d swept", round))
	}
	if _, err := db.CompactBillCounts(ctx); err != nil {
		t.Fatal(err)
	}
	checkBillListings(t, db, a, other, foreign, rng, "folded")
	t.Logf("done: %v; refused: %v", done, refused)
}

// heldBill is a bill as a plain read of the table finds it.
type heldBill struct {
	id, status, order, billing string
	due                        time.Time
	paid                       *time.Time
}

// checkBillListings lists a's bills under filters of every kind, alone and
// combined, and compares each answer with the bills a plain read finds.
func checkBillListings(t *testing.T, db *sqldb.DB, a, other parcela.Auth, foreign *parcela.Order, rng *rand.Rand, step string) {
	t.Helper()
	ctx := context.Background()
	rows, err := db.SQLDB().QueryContext(ctx, sqldb.Rebind(db, `SELECT id, status, order_id, billing_id, due_date, paid_at FROM bills WHERE company_id = ? AND environment = ?`),
		a.CompanyID, string(a.Environment))
	if err != nil {
		t.Fatal(err)
	}
	var held []heldBill
	for rows.Next() {
		var b heldBill
		var due int64
		var paid *int64
		if err := rows.Scan(&b.id, &b.status, &b.order, &b.billing, &due, &paid); err != nil {
			t.Fatal(err)
		}
		b.due = time.UnixMilli(due)
		if paid != nil {
			b.paid = new(time.Time)
			*b.paid = time.UnixMilli(*paid)
		}
		held = append(held, b)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if step == "folded" {
		statuses := map[string]int{}
		for _, b := range held {
			statuses[b.status]++
		}
		t.Logf("%d bills by status: %v", len(held), statuses)
	}
	slices.SortFunc(held, func(x, y heldBill) int {
		if c := x.due.Compare(y.due); c != 0 {
			return c
		}
		if x.id < y.id {
			return -1
		}
		return 1
	})

	// The dates of the filters: every bill's due and paid date, and the
	// days either side.
	dateOf := func(t time.Time) string { return t.In(parcela.SaoPaulo).Format(time.DateOnly) }
	dateSet := map[string]bool{}
	var paidDates []string
	for _, b := range held {
		for _, d := range []int{-1, 0, 1} {
			dateSet[dateOf(b.due.AddDate(0, 0, d))] = true
		}
		if b.paid != nil {
			paidDates = append(paidDates, dateOf(*b.paid))
		}
	}
	dates := make([]string, 0, len(dateSet))
	for d := range dateSet {
		dates = append(dates, d)
	}
	sort.Strings(dates)
	pick := func(from []string) *string {
		if len(from) == 0 || rng.Intn(3) == 0 {
			return nil
		}
		return &from[rng.Intn(len(from))]
	}
	// at is the instant the server makes of a date filter (server/query.go).
	at := func(date *string, end bool) *time.Time {
		if date == nil {
			return nil
		}
		d, err := time.Parse(time.DateOnly, *date)
		if err != nil {
			t.Fatal(err)
		}
		if end {
			d = d.AddDate(0, 0, 1)
		}
		return new(parcela.StartOfDay(d.Date()))
	}
	type filter struct {
		status, order, billing           string
		dueFrom, dueTo, paidFrom, paidTo *string
	}
	within := func(t time.Time, from, to *string) bool {
		d := dateOf(t)
		return (from == nil || d >= *from) && (to == nil || d <= *to)
	}
	var filters []filter
	statuses := append([]string{""}, parcela.BillStatuses...)
	for _, s := range statuses {
		filters = append(filters, filter{status: s})
		for range 3 {
			filters = append(filters, filter{status: s, dueFrom: pick(dates), dueTo: pick(dates)})
		}
		filters = append(filters, filter{status: s, paidFrom: pick(paidDates), paidTo: pick(paidDates)})
	}
	for range 30 {
		f := filter{status: statuses[rng.Intn(len(statuses))], dueFrom: pick(dates), dueTo: pick(dates)}
		if rng.Intn(3) == 0 {
			f.paidFrom, f.paidTo = pick(paidDates), pick(paidDates)
		}
		switch b := held[rng.Intn(len(held))]; rng.Intn(6) {
		case 0:
			f.order = b.order
		case 1:
			f.billing = b.billing
		case 2:
			f.order, f.billing = b.order, b.billing
		case 3:
			f.order = foreign.ID // another company's order
		case 4:
			f.billing = foreign.Billings[0].ID
		}
		filters = append(filters, f)
	}
	wrong := 0
	for _, f := range filters {
		if f.dueFrom != nil && f.dueTo != nil && *f.dueTo < *f.dueFrom || f.paidFrom != nil && f.paidTo != nil && *f.paidTo < *f.paidFrom {
			continue // 422
		}
		var want []string
		for _, b := range held {
			if (f.status == "" || b.status == f.status) && (f.order == "" || b.order == f.order) && (f.billing == "" || b.billing == f.billing) &&
				within(b.due, f.dueFrom, f.dueTo) && (f.paidFrom == nil && f.paidTo == nil || b.paid != nil && within(*b.paid, f.paidFrom, f.paidTo)) {
				want = append(want, b.id)
			}
		}
		bf := parcela.BillFilter{Status: f.status, OrderID: f.order, BillingID: f.billing,
			DueFrom: at(f.dueFrom, false), DueTo: at(f.dueTo, true), PaidFrom: at(f.paidFrom, false), PaidTo: at(f.paidTo, true)}
		show := func() string {
			s := func(p *string) string {
				if p == nil {
					return "-"
				}
				return *p
			}
			return fmt.Sprintf("%s: status %q order %q billing %q due %s..%s paid %s..%s", step, f.status, f.order, f.billing, s(f.dueFrom), s(f.dueTo), s(f.paidFrom), s(f.paidTo))
		}
		list := func(page, perPage int) ([]string, int) {
			bf.Page = parcela.Page{Page: page, PerPage: perPage}
			bills, total, _, err := db.Bills(ctx, a, bf)
			if err != nil {
				t.Fatalf("%s: %v", show(), err)
			}
			ids := make([]string, len(bills))
			for i, b := range bills {
				ids[i] = b.ID
				if b.CompanyID != a.CompanyID || b.Environment != a.Environment {
					t.Fatalf("%s: bill %s of %s %s listed", show(), b.ID, b.CompanyID, b.Environment)
				}
			}
			return ids, total
		}
		ids, total := list(1, parcela.MaxPerPage)
		if total != len(want) || !slices.Equal(ids, want) {
			if wrong++; wrong <= 10 {
				t.Errorf("%s: total_items %d and %d bills, want %d\n got %v\nwant %v", show(), total, len(ids), len(want), ids, want)
			}
			continue
		}
		// Pages of a few bills walk the same bills once each, in order,
		// and the page past the end is empty with the same total.
		if rng.Intn(6) == 0 && len(want) > 0 {
			perPage := 1 + rng.Intn(5)
			var walked []string
			for page := 1; ; page++ {
				ids, total := list(page, perPage)
				if total != len(want) {
					t.Errorf("%s: page %d of %d: total_items %d, want %d", show(), page, perPage, total, len(want))
				}
				if len(ids) == 0 {
					if page != (len(want)+perPage-1)/perPage+1 {
						t.Errorf("%s: page %d of %d is empty, %d bills", show(), page, perPage, len(want))
					}
					break
				}
				walked = append(walked, ids...)
			}
			if !slices.Equal(walked, want) {
				t.Errorf("%s: pages of %d walked %v, want %v", show(), perPage, walked, want)
			}
		}
	}
	if wrong > 10 {
		t.Errorf("%s: %d wrong listings in all", step, wrong)
	}
	// The other company sees its own bills only.
	if _, total, _, err := db.Bills(ctx, other, parcela.BillFilter{Page: parcela.Page{Page: 1, PerPage: 1}}); err != nil || total != len(foreign.Billings[0].Bills) {
		t.Errorf("%s: the other company lists %d bills (%v), want %d", step, total, err, len(foreign.Billings[0].Bills))
	}
}
