package web

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"parcela"
)

// The CET counts days from the charge: a plan with no interest and a
// registration fee, its down payment due hours after the charge, seen at
// 23:50 and bought at 00:05, has the same bills due the same days and a
// higher CET. Its digest covered the bills only, so the purchase went
// through under a CET the page never showed.
func TestPlanDigestCoversTheDisclosedCET(t *testing.T) {
	t.Parallel()
	in := parcela.ScheduleInput{AmountCents: 100000, DownPaymentType: parcela.DownPaymentPercentage, DownPaymentValue: parcela.MustRate("0.1"),
		RegistrationFee: parcela.MustRate("0.05"), InterestRate: parcela.MustRate("0"), Installments: 3, DueDay: 10, ExpiresIn: 3 * time.Hour}
	in.ChargedAt = time.Date(2026, time.March, 5, 23, 50, 0, 0, parcela.SaoPaulo)
	shown, err := parcela.BuildSchedule(in)
	if err != nil {
		t.Fatal(err)
	}
	in.ChargedAt = time.Date(2026, time.March, 6, 0, 5, 0, 0, parcela.SaoPaulo)
	charged, err := parcela.BuildSchedule(in)
	if err != nil {
		t.Fatal(err)
	}
	if shown.CETAnnualRate.Equal(*charged.CETAnnualRate) || len(shown.Bills) != len(charged.Bills) {
		t.Fatalf("CET %s and %s: the scenario is wrong", shown.CETAnnualRate, charged.CETAnnualRate)
	}
	for i := range shown.Bills {
		if a, b := shown.Bills[i], charged.Bills[i]; a.AmountCents != b.AmountCents || date(a.DueDate) != date(b.DueDate) {
			t.Fatalf("bill %d differs (%+v, %+v): the scenario is wrong", i, a, b)
		}
	}
	if planDigest(shown) == planDigest(charged) {
		t.Errorf("CET %s shown and %s charged share the digest %s", percent(*shown.CETAnnualRate), percent(*charged.CETAnnualRate), planDigest(shown))
	}
}

// End to end: the page seen before midnight, posted after it, is shown
// again with the plan's new CET, and no order is made.
func TestPurchaseAfterMidnightShowsTheNewCET(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.store.mu.Lock()
	for _, pc := range b.store.offers[testOfferID].PaymentConfigurations {
		if pc.ID == testFinanced {
			pc.InterestRate, pc.RegistrationFee, pc.ExpiresIn = parcela.MustRate("0"), parcela.MustRate("0.05"), 3
		}
	}
	b.store.mu.Unlock()
	cet := regexp.MustCompile(`CET de ([0-9.,]+%) ao ano`)
	b.clock.Set(time.Date(2026, time.March, 5, 23, 50, 0, 0, parcela.SaoPaulo))
	page := b.get(t, b.offerPath())
	before := cet.FindStringSubmatch(page.body)
	if before == nil {
		t.Fatalf("no CET shown:\n%s", page.body)
	}
	b.clock.Set(time.Date(2026, time.March, 6, 0, 5, 0, 0, parcela.SaoPaulo))
	res := b.post(t, b.offerPath(), buyForm(t, page.body, testFinanced+":pix", nil))
	if res.status != http.StatusOK || !strings.Contains(res.body, "Os valores do plano foram atualizados") {
		t.Fatalf("purchase under another CET than shown: status %d, orders %d", res.status, len(b.store.orderList()))
	}
	if after := cet.FindStringSubmatch(res.body); after == nil || after[1] == before[1] {
		t.Errorf("the page shown again discloses CET %v, before %s", after, before[1])
	}
	if n := len(b.store.orderList()); n != 0 {
		t.Errorf("%d orders made", n)
	}
}

// slowOrders is the form's orders whose new order takes until after
// midnight to write: the post was checked before it, the charge planned
// after.
type slowOrders struct {
	parcela.FormOrderService
	clock *parcela.TestClock
	at    time.Time
}

func (s slowOrders) CreateFormOrder(ctx context.Context, a parcela.Auth, key string, req parcela.OrderRequest) (*parcela.Order, bool, error) {
	o, created, err := s.FormOrderService.CreateFormOrder(ctx, a, key, req)
	s.clock.Set(s.at)
	return o, created, err
}

// A purchase posted at 23:59:59.990 whose order is written past midnight
// is charged at 00:00:00.010: a day fewer to installment 1 and the down
// payment due a day later, a plan the page did not show. The page's digest
// was compared at the post's instant only, and the charge went through
// under the plan of the next day; it is compared at the charge's own now.
func TestPurchaseChargedAfterMidnightShowsTheNewPlan(t *testing.T) {
	t.Parallel()
	var b *bundle
	after := time.Date(2026, time.March, 6, 0, 0, 0, 10_000_000, parcela.SaoPaulo)
	b = setup(t, func(d *Deps) {
		d.Orders = slowOrders{FormOrderService: d.Orders, clock: d.Clock.(*parcela.TestClock), at: after}
	})
	before := time.Date(2026, time.March, 5, 23, 59, 59, 990_000_000, parcela.SaoPaulo)
	b.clock.Set(before)
	page := b.get(t, b.offerPath())
	res := b.post(t, b.offerPath(), buyForm(t, page.body, testFinanced+":pix", nil))
	if res.status != http.StatusOK || !strings.Contains(res.body, "Os valores do plano foram atualizados") {
		t.Errorf("status %d: want the page shown again with the new plan", res.status)
	}
	for _, o := range b.store.orderList() {
		if o.Status != parcela.OrderPending {
			t.Errorf("order %s charged (%s) under a plan the page did not show", o.ID, o.Status)
		}
	}
	// Posted again, the plan now shown is charged.
	b.clock.Set(after)
	res = b.post(t, b.offerPath(), buyForm(t, res.body, testFinanced+":pix", nil))
	if res.status != http.StatusSeeOther {
		t.Errorf("posted again: status %d, want a redirect to the order", res.status)
	}
}
