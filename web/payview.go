package web

import (
	"fmt"
	"time"

	"parcela"
)

// payView is a payment as the customer pays it: its Pix QR code and
// copy-and-paste code, or its boleto's linha digitável and barcode
// (bolepix: both).
type payView struct {
	ID          string
	Method      string
	AmountCents int64 // what its code carries
	// What is left to pay with it: its amount less what it received, and
	// no more than the bill owes once another payment received part of
	// it (Bill.LeftToPayWith). A code's amount cannot change once issued:
	// the page says what remains.
	DueCents int64
	// LateCents is what the bank takes for a boleto paid by its barcode
	// now, past the due date it carries, when more than DueCents: the
	// bill's fine and interest added (Bill.BoletoTakes); 0 otherwise.
	LateCents     int64
	ReceivedCents int64 // what it received short of its amount
	PixCode       string
	PixImage      string
	Linha         string
	BarcodeImage  string
	ExpiresAt     time.Time
	DueDate       time.Time
	TimeLeft      string
	Now           time.Time
}

// LastPayable is the last minute the payment is shown payable until: its
// expiry, or, for one expiring at midnight (the millisecond after its last
// payable day, parcela.ExpiryAfter), that day's 23:59, where 00:00 of the
// next read as one more day to pay.
func (v payView) LastPayable() time.Time {
	// The millisecond before a day's end, rather than an expiry at 00:00:
	// a day daylight saving began on started at 01:00 (a review).
	if last := v.ExpiresAt.Add(-time.Millisecond); last.Equal(parcela.EndOfDay(last)) {
		return last
	}
	return v.ExpiresAt
}

// Late tells a boleto past the due date it carries, whose barcode now
// takes the bill's fine and interest too.
func (v payView) Late() bool { return v.LateCents > 0 }

// ShownCents is the box's amount: what paying it now takes, the late
// boleto's by its barcode; a bolepix's Pix still pays DueCents, which
// its note then says.
func (v payView) ShownCents() int64 {
	if v.Late() && v.PixCode == "" {
		return v.LateCents
	}
	return v.DueCents
}

// ExpiresAtISO is the expiry the script counts down to.
func (v payView) ExpiresAtISO() string { return v.ExpiresAt.Format(parcela.TimestampLayout) }

// NowISO is when the page was made.
func (v payView) NowISO() string { return v.Now.Format(parcela.TimestampLayout) }

// newPayView shows an unpaid payment of bill b, what is left to pay with
// it at now as b and its company c price it (c nil: the code's rest);
// images are this listener's public image routes, linked by path. A
// boleto shows the due date it carries.
func newPayView(b *parcela.Bill, p *parcela.Payment, c *parcela.Company, now time.Time) payView {
	due, late := p.AmountCents-p.PaidAmountCents, int64(0)
	if c != nil {
		due, late = b.LeftToPayWith(p, now, c), b.BoletoTakes(p, now, c)
	}
	v := payView{ID: p.ID, Method: p.Method, AmountCents: p.AmountCents, DueCents: due, LateCents: late,
		ReceivedCents: p.PaidAmountCents, ExpiresAt: p.ExpiresAt, DueDate: p.BoletoDueDate(), TimeLeft: timeLeft(now, p.ExpiresAt), Now: now}
	links := parcela.Links{}
	switch {
	case p.Method == parcela.MethodPix && p.Barcode != nil:
		// A Pix payment's code is its barcode, and so is its image.
		v.PixCode, v.PixImage = *p.Barcode, links.PaymentImageURL(p.ID, false)
	case p.Method == parcela.MethodBoleto && p.Barcode != nil:
		v.Linha, v.BarcodeImage = *p.Barcode, links.PaymentImageURL(p.ID, false)
		if p.PixCode != nil {
			v.PixCode, v.PixImage = *p.PixCode, links.PaymentImageURL(p.ID, true)
		}
	}
	return v
}

// livePayViews are the boxes of bill b's live Pix and boleto codes, of the
// methods offered (nil: both), with one Pix code a bill: a bolepix live
// beside a Pix shows its boleto alone, its Pix being the same money as the
// Pix shown. Two boxes headed "Pix", each with its own code and nothing
// saying to pay one, had a payer pay a bill twice (an audit); the pages
// say to pay one when they show two boxes (payOne).
func livePayViews(b *parcela.Bill, c *parcela.Company, now time.Time, offered func(method string) bool) []payView {
	var out []payView
	for _, m := range []string{parcela.MethodPix, parcela.MethodBoleto} {
		if offered != nil && !offered(m) {
			continue
		}
		p := b.LivePayment(m, now)
		if p == nil {
			continue
		}
		v := newPayView(b, p, c, now)
		if len(out) > 0 && out[0].PixCode != "" && v.Linha != "" {
			v.PixCode, v.PixImage = "", ""
		}
		out = append(out, v)
	}
	return out
}

// payOne is what a page says above two live codes of one bill.
const payOne = "Pague só um destes códigos: cada um quita esta cobrança."

// payOneBeside is what a boleto's own page says when its bill has a live
// Pix too.
const payOneBeside = "Esta cobrança também tem um Pix gerado: pague só um dos dois, cada um a quita."

// billLabel names a bill for the customer: the down payment, installment
// k of n, or the single upfront payment.
func billLabel(b *parcela.Bill, billing *parcela.Billing) string {
	switch {
	case b.Type == parcela.BillTypeInstallment && billing != nil:
		return fmt.Sprintf("Parcela %d de %d", b.Number, billing.Installments-1)
	case b.Type == parcela.BillTypeInstallment:
		return fmt.Sprintf("Parcela %d", b.Number)
	case billing != nil && billing.Installments <= 1:
		return "Pagamento à vista"
	}
	return "Entrada"
}

// statusClass is the badge style of a bill status.
func statusClass(status string) string {
	switch status {
	case parcela.BillPaid:
		return "ok"
	case parcela.BillOverdue:
		return "late"
	case parcela.BillCanceled:
		return "off"
	}
	return "wait"
}
