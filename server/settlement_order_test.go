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

// A Pix and a boleto of one late installment, priced to different days
// (the boleto re-issued on 10 March, due the 15th, payable through the
// 16th; the Pix asked for on the 14th, priced to the 17th), each paid in
// part on the 16th: what they received together is measured as the
// payment settled last measures it, whichever notice arrives first. With
// the Pix's notice first, the bill was measured as the boleto measures it
// and paid 11 cents short. And money a payment received before it
// expired counts at its own paid_at: a Pix notice dated the 14th,
// arriving after the boleto (paid in part on the 15th) expired, paid the
// bill as of the 14th, when it owed less.
func TestSettlementsOfTwoPaymentsPricedApartInAnyOrder(t *testing.T) {
	t.Parallel()
	setupPair := func(t *testing.T, b *bundle) (bill *parcela.Bill, boleto map[string]any, pix *parcela.Payment) {
		i1 := b.firstInstallment(t, "boleto", "pix") // due 1 March
		b.clock.Set(time.Date(2027, 2, 20, 9, 0, 0, 0, parcela.SaoPaulo))
		b.runSweeps(t, b.sweeps.IssueDueInstallments)
		b.clock.Set(time.Date(2027, 3, 10, 10, 0, 0, 0, parcela.SaoPaulo))
		b.runSweeps(t, b.sweeps.ExpireDuePayments, b.sweeps.MarkOverdue, b.sweeps.IssueDueInstallments)
		boleto = openPayment(t, b.bill(t, i1.ID))
		b.clock.Set(time.Date(2027, 3, 14, 9, 0, 0, 0, parcela.SaoPaulo))
		pix, err := b.app.Checkout.IssuePayment(context.Background(), parcela.Sandbox, i1.ID, i1.AuthenticationCode, parcela.MethodPix)
		if err != nil {
			t.Fatal(err)
		}
		if cents(boleto["amount_cents"]) >= pix.AmountCents {
			t.Fatalf("boleto %v, Pix %d: want the Pix priced to a later day", boleto["amount_cents"], pix.AmountCents)
		}
		return i1, boleto, pix
	}
	pay := func(t *testing.T, b *bundle, id string, amount int64, at string) map[string]any {
		return b.call("POST", "/external_api/v1/sandbox/payments/"+id+"/pay",
			map[string]any{"paid_amount_cents": amount, "paid_at": at}).want(t, 200).JSON(t)
	}
	// The Pix's part an hour after the boleto's: the money was in then,
	// as the Pix measures it, short of what the bill owed. At the same
	// instant: as the boleto, priced for the earlier day, measures it,
	// which its amount pays.
	for _, c := range []struct{ pixAt, want string }{{"2027-03-16T13:00:00.000-03:00", "overdue"}, {"2027-03-16T12:00:00.000-03:00", "paid"}} {
		each(t, func(t *testing.T, b *bundle) {
			var got [2]map[string]any
			for i, pixFirst := range []bool{false, true} {
				_, boleto, pix := setupPair(t, b)
				b.clock.Set(time.Date(2027, 3, 16, 14, 0, 0, 0, parcela.SaoPaulo))
				boletoPart := cents(boleto["amount_cents"]) - 10000
				if pixFirst {
					pay(t, b, pix.ID, 10000, c.pixAt)
					got[i] = pay(t, b, boleto["id"].(string), boletoPart, "2027-03-16T12:00:00.000-03:00")
				} else {
					pay(t, b, boleto["id"].(string), boletoPart, "2027-03-16T12:00:00.000-03:00")
					got[i] = pay(t, b, pix.ID, 10000, c.pixAt)
				}
			}
			for _, f := range []string{"status", "current_amount_cents", "received_amount_cents", "paid_at"} {
				if got[0][f] != got[1][f] {
					t.Errorf("Pix at %s, %s: %v with the boleto's notice first, %v with the Pix's", c.pixAt, f, got[0][f], got[1][f])
				}
			}
			if got[0]["status"] != c.want {
				t.Errorf("Pix at %s: bill %v, want %s", c.pixAt, got[0]["status"], c.want)
			}
		})
	}
	each(t, func(t *testing.T, b *bundle) {
		i1, boleto, pix := setupPair(t, b)
		b.clock.Set(time.Date(2027, 3, 15, 13, 0, 0, 0, parcela.SaoPaulo))
		pay(t, b, boleto["id"].(string), 10000, "2027-03-15T12:00:00.000-03:00")
		b.clock.Set(time.Date(2027, 3, 17, 9, 0, 0, 0, parcela.SaoPaulo))
		b.runSweeps(t, b.sweeps.ExpireDuePayments)
		for _, x := range b.bill(t, i1.ID)["payments"].([]any) {
			if p := x.(map[string]any); p["id"] == boleto["id"] && p["status"] == "unpaid" {
				t.Fatalf("the boleto did not expire: %v", p)
			}
		}
		// What the bill owed on the 14th, less the boleto's part of the 15th.
		bill := pay(t, b, pix.ID, latePrice(i1.AmountCents, 13)-10000, "2027-03-14T12:00:00.000-03:00")
		if bill["status"] == "paid" {
			t.Errorf("a part of the 14th and one of the 15th, summing to what the bill owed on the 14th, paid it as of %v", bill["paid_at"])
		}
	})
}

// A notice is answered as applied when sent again, though a notice dated
// later was applied after it: the notice's record keeps its own paid_at,
// not the payment's latest.
func TestSettlementNoticeDatedEarlierReplays(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		_, _, late := b.lateBoleto(t)
		b.clock.Set(time.Date(2027, 3, 12, 12, 0, 0, 0, parcela.SaoPaulo))
		notice := func(id string, at string) map[string]any {
			return b.call("POST", "/external_api/v1/sandbox/payments/"+late["id"].(string)+"/pay",
				map[string]any{"paid_amount_cents": 1000, "paid_at": at, "notice_id": id}).want(t, 200).JSON(t)
		}
		notice("n2", "2027-03-12T11:00:00.000-03:00")
		applied := notice("n1", "2027-03-10T11:00:00.000-03:00")
		again := notice("n1", "2027-03-10T11:00:00.000-03:00")
		if cents(again["received_amount_cents"]) != 2000 || again["received_amount_cents"] != applied["received_amount_cents"] {
			t.Fatalf("replayed: received %v, want 2000 as applied", again["received_amount_cents"])
		}
	})
}
