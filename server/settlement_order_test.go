package server_test

import (
	"context"
	"testing"
	"time"

	"parcela"
)

// Two parts of a late installment, the same money at the same instants,
// come to one bill whichever notice arrives first: banks send them in any
// order. The parts sum to what the bill owed at the first part (10 March)
// and fall short of what it owed when the second came in (12 March), so
// the bill stays open owing those days' interest; the rest, paid on 12
// March, pays it as of that day. Sent the later-dated notice first, the
// earlier one paid the bill as of 10 March, the interest since lost.
// Parts on one boleto, and on a Pix and a boleto of the bill.
func TestSettlementsInAnyOrderPayALateBillAlike(t *testing.T) {
	t.Parallel()
	const t1, t2 = "2027-03-10T11:00:00.000-03:00", "2027-03-12T11:00:00.000-03:00"
	for _, twoPayments := range []bool{false, true} {
		for _, laterFirst := range []bool{false, true} {
			each(t, func(t *testing.T, b *bundle) {
				var amount int64
				var first, second string
				if twoPayments {
					// A Pix for the bill beside its boleto, paid the later part.
					i1 := b.firstInstallment(t, "boleto", "pix") // due 1 March
					amount = i1.AmountCents
					b.clock.Set(time.Date(2027, 2, 20, 9, 0, 0, 0, parcela.SaoPaulo))
					b.runSweeps(t, b.sweeps.IssueDueInstallments)
					b.clock.Set(time.Date(2027, 3, 10, 10, 0, 0, 0, parcela.SaoPaulo))
					b.runSweeps(t, b.sweeps.ExpireDuePayments, b.sweeps.MarkOverdue, b.sweeps.IssueDueInstallments)
					first = openPayment(t, b.bill(t, i1.ID))["id"].(string)
					pix, err := b.app.Checkout.IssuePayment(context.Background(), parcela.Sandbox, i1.ID, i1.AuthenticationCode, parcela.MethodPix)
					if err != nil {
						t.Fatal(err)
					}
					second = pix.ID
				} else {
					_, a, late := b.lateBoleto(t) // re-issued 10 March 10:00, due 1 March
					amount, first, second = a, late["id"].(string), late["id"].(string)
				}
				b.clock.Set(time.Date(2027, 3, 12, 12, 0, 0, 0, parcela.SaoPaulo))
				owedT1, owedT2 := latePrice(amount, 9), latePrice(amount, 11)
				const part2 = 10000
				pay := func(id string, cents int64, at string) map[string]any {
					return b.call("POST", "/external_api/v1/sandbox/payments/"+id+"/pay",
						map[string]any{"paid_amount_cents": cents, "paid_at": at}).want(t, 200).JSON(t)
				}
				var bill map[string]any
				if laterFirst {
					pay(second, part2, t2)
					bill = pay(first, owedT1-part2, t1)
				} else {
					pay(first, owedT1-part2, t1)
					bill = pay(second, part2, t2)
				}
				if bill["status"] != "overdue" || bill["paid_at"] != nil || cents(bill["received_amount_cents"]) != owedT1 ||
					cents(bill["current_amount_cents"]) != owedT2 {
					t.Fatalf("two payments %v, later-dated first %v: bill %v paid at %v, received %v of %v; want overdue, %d received of %d",
						twoPayments, laterFirst, bill["status"], bill["paid_at"], bill["received_amount_cents"], bill["current_amount_cents"], owedT1, owedT2)
				}
				for _, x := range bill["payments"].([]any) {
					if p := x.(map[string]any); p["id"] == first && p["paid_at"] != map[bool]string{false: t1, true: t2}[!twoPayments] {
						t.Errorf("the boleto's paid_at %v: want its latest settlement's", p["paid_at"])
					}
				}
				bill = pay(second, owedT2-owedT1, t2)
				if bill["status"] != "paid" || bill["paid_at"] != t2 {
					t.Fatalf("the rest paid on 12 March: bill %v paid at %v; want paid at %s", bill["status"], bill["paid_at"], t2)
				}
			})
		}
	}
}
