package parcela

import (
	"testing"
	"time"
)

// A paid bill's current amount is what it owed when paid, as the
// settlement that paid it measured it, so that what it received beyond is
// only the seller's to refund. It fell back to the original amount, and a
// late bill's fine and interest, paid, read as paid over: a seller
// refunding received − current would have handed them back.
func TestPaidBillOwedWhatItsSettlementMeasured(t *testing.T) {
	t.Parallel()
	type part struct {
		pix   bool // else the boleto
		at    time.Time
		cents int64 // 0: a notice without an amount (what the bank took)
	}
	for _, tt := range []struct {
		name          string
		expired       int64 // received by the first boleto before it expired
		parts         []part
		owed, receive int64
	}{
		// Priced at the end of Saturday the 16th: 10227.
		{"the boleto's amount on its due day", 0, []part{{false, calSP(2027, 1, 18, 9, 0, 0, 0), 10227}}, 10227, 10227},
		{"the boleto's amount before the day it was priced for", 0, []part{{false, calSP(2027, 1, 14, 9, 0, 0, 0), 10227}}, 10227, 10227},
		{"the boleto's amount in its settlement grace", 0, []part{{false, calSP(2027, 1, 19, 10, 0, 0, 0), 10227}}, 10227, 10227},
		{"the Pix's amount", 0, []part{{true, calSP(2027, 1, 15, 9, 0, 0, 0), 10227}}, 10227, 10227},
		// Two parts on the Wednesday: the bill owed three days' interest.
		{"two parts together", 0, []part{{true, calSP(2027, 1, 13, 9, 0, 0, 0), 5000}, {false, calSP(2027, 1, 13, 10, 0, 0, 0), 5210}}, 10210, 10210},
		// A part and the Pix's whole amount at one instant: the Pix's
		// amount paid the bill, as 1 ms later; measured as the part
		// (priced alike, listed first), it owed the 14th's 10213.
		{"a part and a whole amount at one instant", 0, []part{{false, calSP(2027, 1, 14, 9, 0, 0, 0), 3000}, {true, calSP(2027, 1, 14, 9, 0, 0, 0), 10227}}, 10227, 13227},
		// Paid over: the boleto's whole amount after 4000 came in.
		{"paid over", 1000, []part{{true, calSP(2027, 1, 14, 9, 0, 0, 0), 3000}, {false, calSP(2027, 1, 14, 10, 0, 0, 0), 10227}}, 10227, 14227},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o, c, bill, boleto, pix := lateInstallment(t)
			bill.Payments[0].PaidAmountCents = tt.expired
			for _, p := range tt.parts {
				q := boleto
				if p.pix {
					q = pix
				}
				settleForTest(t, o, c, bill, q, p.at, p.cents)
			}
			f := NewBillEndpointForm(bill, c, calSP(2027, 3, 1, 9, 0, 0, 0), Links{})
			if bill.Status != BillPaid || f.CurrentAmountCents != tt.owed || f.ReceivedAmountCents != tt.receive {
				t.Fatalf("bill %s owing %d, received %d; want paid, owing %d, received %d",
					bill.Status, f.CurrentAmountCents, f.ReceivedAmountCents, tt.owed, tt.receive)
			}
		})
	}
	// Paid by its barcode after the due date it carries, the bank took the
	// bill's fine and interest to that day, which it owed.
	o, c, bill, boleto, _ := lateInstallment(t)
	at := calSP(2027, 1, 19, 10, 0, 0, 0)
	m := newMover(Auth{CompanyID: c.ID, Environment: Sandbox}, at, Links{})
	if err := m.pay(o, o.Billings[0], bill, boleto, c, Settlement{}); err != nil {
		t.Fatal(err)
	}
	want := bill.penaltyAt(at, c).Total(bill.AmountCents)
	f := NewBillEndpointForm(bill, c, at.AddDate(0, 1, 0), Links{})
	if bill.Status != BillPaid || want <= 10227 || f.CurrentAmountCents != want || f.ReceivedAmountCents != want {
		t.Fatalf("paid late by its barcode: bill %s owing %d, received %d; want %d both", bill.Status, f.CurrentAmountCents, f.ReceivedAmountCents, want)
	}
	// Canceled, it owes its amount: all it received is the seller's to refund.
	bill.Status = BillCanceled
	if got := bill.CurrentAmount(at, c); got != bill.AmountCents {
		t.Fatalf("canceled: owes %d, want its amount %d", got, bill.AmountCents)
	}
}

// A waiver that pays the bill (what its payments received reaches what it
// now owes) paid it at the waiver's instant, by no payment's settlement:
// it owed then its amount with what the waiver left of the penalty. It
// read as the bare amount, the fine and interest the payer still owed
// read as paid over for the seller to refund.
func TestPaidByAWaiverOwedWhatTheWaiverLeft(t *testing.T) {
	t.Parallel()
	o, c, bill, _, pix := lateInstallment(t)
	settleForTest(t, o, c, bill, pix, calSP(2027, 1, 15, 9, 0, 0, 0), 10212) // the bill owes 10217 that day
	at := calSP(2027, 1, 15, 10, 0, 0, 0)
	m := newMover(Auth{CompanyID: c.ID, Environment: Sandbox}, at, Links{})
	until := calEndOfDay(2027, 1, 12) // the fine, and interest from the 13th only: 10210
	if err := m.waive(o, o.Billings[0], bill, c, &until); err != nil {
		t.Fatal(err)
	}
	f := NewBillEndpointForm(bill, c, calSP(2027, 3, 1, 9, 0, 0, 0), Links{})
	if bill.Status != BillPaid || f.CurrentAmountCents != 10210 || f.ReceivedAmountCents != 10212 {
		t.Fatalf("bill %s owing %d, received %d; want paid, owing 10210, received 10212", bill.Status, f.CurrentAmountCents, f.ReceivedAmountCents)
	}
}
