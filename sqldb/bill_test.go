package sqldb_test

import (
	"reflect"
	"testing"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// A bill response reads the bill, its billing, its company's rates and its
// payments in one joined statement: what it returns is what the order's
// own reads return, for bills with no payment, one, and two (an expired
// boleto and its re-issue), and a page holds each bill once, in order.
func TestBillReadsJoinPayments(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		r := newRound(t, db, 3, false)
		before := r.state().Billings[0].Bills
		if len(before[2].Payments) != 0 {
			t.Fatalf("the last installment has %d payments before its issue window, want none", len(before[2].Payments))
		}
		r.checkBill(before[2]) // no payment yet
		r.activate()
		if _, _, err := r.app.Payments.ExpirePayment(r.ctx, r.a, r.unpaid(1).ID); err != nil {
			t.Fatal(err)
		}
		o := r.state()
		for _, b := range o.Billings[0].Bills {
			r.checkBill(b)
		}
		for i, n := range []int{1, 2, 1} { // the paid Pix; the expired boleto and its re-issue; a boleto
			if got := r.billNamed(o.Billings[0].Bills[i].ID); len(got.Payments) != n {
				t.Errorf("bill %d has %d payments, want %d", i, len(got.Payments), n)
			}
		}

		company, err := db.Company(r.ctx, r.a.CompanyID)
		if err != nil {
			t.Fatal(err)
		}
		all, total, c, err := db.Bills(r.ctx, r.a, parcela.BillFilter{Page: parcela.Page{Page: 1, PerPage: 10}})
		if err != nil {
			t.Fatal(err)
		}
		if total != 3 || len(all) != 3 {
			t.Fatalf("listing has %d bills of total %d, want 3 of 3", len(all), total)
		}
		if c.FineRate.String() != company.FineRate.String() || c.MonthlyInterestRate.String() != company.MonthlyInterestRate.String() {
			t.Errorf("listing's rates %s and %s, want the company's %s and %s", c.FineRate, c.MonthlyInterestRate, company.FineRate, company.MonthlyInterestRate)
		}
		for i, b := range all {
			if b.ID != o.Billings[0].Bills[i].ID {
				t.Errorf("listing's bill %d is %s, want %s (due date order)", i, b.ID, o.Billings[0].Bills[i].ID)
			}
			r.sameBill(b, c, o.Billings[0].Bills[i])
		}
		// The second page of one bill each is the bill with two payments.
		page, total, _, err := db.Bills(r.ctx, r.a, parcela.BillFilter{Page: parcela.Page{Page: 2, PerPage: 1}})
		if err != nil || total != 3 || len(page) != 1 || page[0].ID != all[1].ID || len(page[0].Payments) != 2 {
			t.Fatalf("page 2 of 1: %d bills of %d (%v), want bill %s with 2 payments", len(page), total, err, all[1].ID)
		}
		// Past the end: the count, no bills, and still the rates.
		page, total, c, err = db.Bills(r.ctx, r.a, parcela.BillFilter{Page: parcela.Page{Page: 5, PerPage: 1}})
		if err != nil || total != 3 || len(page) != 0 || c.FineRate.String() != company.FineRate.String() {
			t.Fatalf("page 5 of 1: %d bills of %d, rates %v (%v)", len(page), total, c, err)
		}

		// Another company, or the other environment, finds nothing.
		other := parcela.Auth{CompanyID: sqldbtest.Company(t, db).ID, Environment: parcela.Sandbox}
		prod := parcela.Auth{CompanyID: r.a.CompanyID, Environment: parcela.Production}
		for _, a := range []parcela.Auth{other, prod} {
			if _, _, err := db.Bill(r.ctx, a, all[0].ID); parcela.ErrorCode(err) != parcela.ENOTFOUND {
				t.Errorf("%v reads another's bill: %v, want not_found", a, err)
			}
			if bills, total, _, err := db.Bills(r.ctx, a, parcela.BillFilter{Page: parcela.Page{Page: 1, PerPage: 10}}); err != nil || total != 0 || len(bills) != 0 {
				t.Errorf("%v lists %d of %d bills (%v), want none", a, len(bills), total, err)
			}
		}
	})
}

func (r *raceRound) billNamed(id string) *parcela.Bill {
	r.t.Helper()
	b, _, err := r.db.Bill(r.ctx, r.a, id)
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

// checkBill reads the bill alone and compares it with the order's copy.
func (r *raceRound) checkBill(want *parcela.Bill) {
	r.t.Helper()
	b, c, err := r.db.Bill(r.ctx, r.a, want.ID)
	if err != nil {
		r.t.Fatal(err)
	}
	r.sameBill(b, c, want)
}

// sameBill compares a bill read with its billing summary and rates with
// the order's copy of it (read bill by bill, payments in a second query).
func (r *raceRound) sameBill(got *parcela.Bill, c *parcela.Company, want *parcela.Bill) {
	r.t.Helper()
	if c == nil || c.ID != r.a.CompanyID {
		r.t.Fatalf("bill %s read with company %v, want %s", got.ID, c, r.a.CompanyID)
	}
	o := r.state()
	bl := *o.Billings[0]
	bl.Bills, bl.PaymentConfiguration = nil, nil
	if got.Billing == nil {
		r.t.Fatalf("bill %s without its billing", got.ID)
	}
	if !reflect.DeepEqual(*got.Billing, bl) {
		r.t.Errorf("bill %s's billing\n%+v\nwant\n%+v", got.ID, *got.Billing, bl)
	}
	g := *got
	g.Billing = nil
	if !reflect.DeepEqual(&g, want) {
		r.t.Errorf("bill %s\n%+v\nwant\n%+v", got.ID, &g, want)
	}
	for i := range want.Payments {
		if i < len(got.Payments) && !reflect.DeepEqual(got.Payments[i], want.Payments[i]) {
			r.t.Errorf("bill %s payment %d\n%+v\nwant\n%+v", got.ID, i, got.Payments[i], want.Payments[i])
		}
	}
}
