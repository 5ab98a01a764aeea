package web

import (
	"context"
	"html"
	"strings"
	"testing"
	"time"

	"parcela"
)

// An installment that owes nothing past its due date says until when it
// owes nothing: its first boleto issued only past that date settles it
// without a fine until it expires, and a waiver holds its penalties off to
// its end. The checkout named the effective due date, a day already past,
// beside a bill owing its bare amount (an audit).
func TestCheckoutSaysWhenAPenaltyFreeInstallmentStartsOwing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.buy(t, testFinanced+":pix")
	o := b.onlyOrder(t)
	b.pay(t, o.Billings[0].Bills[0].Payments[0].ID)
	late, waived := o.Billings[0].Bills[1], o.Billings[0].Bills[2]

	// The waived installment's boleto is issued before its due date, and
	// its penalties waived to the end of the fifth day after it.
	b.clock.Set(waived.DueDate.Add(-5 * 24 * time.Hour))
	if _, err := b.store.IssuePayment(context.Background(), parcela.Sandbox, waived.ID, waived.AuthenticationCode, parcela.MethodBoleto); err != nil {
		t.Fatal(err)
	}
	until := parcela.EndOfDay(waived.EffectiveDueDate.Add(5 * 24 * time.Hour)).Add(time.Millisecond)
	b.store.mu.Lock()
	b.store.bills[waived.ID].DisablePenaltiesUntil = &until
	b.store.mu.Unlock()

	// The other's first boleto is asked for only three days past its due date.
	b.clock.Set(late.EffectiveDueDate.Add(3 * 24 * time.Hour))
	p, err := b.store.IssuePayment(context.Background(), parcela.Sandbox, late.ID, late.AuthenticationCode, parcela.MethodBoleto)
	if err != nil {
		t.Fatal(err)
	}
	b.clock.Set(late.EffectiveDueDate.Add(4 * 24 * time.Hour))
	body := html.UnescapeString(b.get(t, parcela.Links{}.CheckoutURL(late.ID, late.AuthenticationCode)).body)
	if want := "<dt>Pagável sem multa até</dt><dd>" + dayOrTime(p.ExpiresAt.Add(-time.Millisecond)) + " (prazo do boleto)</dd>"; !strings.Contains(body, want) {
		t.Errorf("a late-issued boleto's checkout lacks %q", want)
	}
	if strings.Contains(body, date(late.EffectiveDueDate)+" (próximo dia útil)") || strings.Contains(body, "Multa") {
		t.Errorf("a late-issued boleto's checkout names its past due date, or a fine:\n%s", body)
	}
	// Past its expiry the bill is late, and no such line is shown.
	b.clock.Set(p.ExpiresAt.Add(time.Hour))
	if body := b.get(t, parcela.Links{}.CheckoutURL(late.ID, late.AuthenticationCode)).body; strings.Contains(body, "sem multa até") || !strings.Contains(body, "Multa por atraso") {
		t.Errorf("a late bill is said payable without a fine, or shows none:\n%s", body)
	}

	b.clock.Set(waived.EffectiveDueDate.Add(2 * 24 * time.Hour))
	body = html.UnescapeString(b.get(t, parcela.Links{}.CheckoutURL(waived.ID, waived.AuthenticationCode)).body)
	if want := "<dt>Pagável sem multa até</dt><dd>" + date(until.Add(-time.Millisecond)) + " (multa e juros dispensados)</dd>"; !strings.Contains(body, want) {
		t.Errorf("a waived bill's checkout lacks %q", want)
	}
	if strings.Contains(body, "Multa") {
		t.Errorf("a waived bill's checkout shows a fine:\n%s", body)
	}
}
