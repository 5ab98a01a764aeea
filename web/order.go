package web

import (
	"net/http"
	"sort"
	"strings"
	"time"

	"parcela"
)

// orderPage is the order's page: where the customer lands after buying.
type orderPage struct {
	Order    *parcela.Order
	Product  *parcela.Product
	Billing  *parcela.Billing
	Headline string
	Message  string
	Tone     string // ok, wait, off
	Due      *dueBill
	Bills    []billRow
	// The sum of a plan of several bills, none canceled; 0 for none.
	TotalCents int64
	// The page checks for a payment: while the down payment is awaited,
	// and while it shows a Pix or boleto, which is paid elsewhere (the
	// bank's app), lest the payer back from it read the code still due.
	Checks bool
}

// dueBill is the bill to pay now, with its live payments.
type dueBill struct {
	Label       string
	AmountCents int64
	DueDate     time.Time
	// EffectiveDueDate is when it stops being payable on time (dueWhen).
	EffectiveDueDate time.Time
	Overdue          bool
	Penalized        bool // its amount includes a late fine or interest
	Pay              []payView
	CheckoutURL      string
}

type billRow struct {
	Label            string
	DueDate          time.Time
	EffectiveDueDate time.Time
	AmountCents      int64
	Status           string
	StatusLabel      string // the status as shown: a lapsed first bill's is lapsedStatus
	Class            string
	PaidAt           *time.Time
	CheckoutURL      string
}

func (h *Handler) handleOrder(w http.ResponseWriter, r *http.Request) {
	code := r.URL.Query().Get("code")
	if code == "" {
		h.renderError(w, r, http.StatusNotFound)
		return
	}
	o, err := h.d.Checkout.OrderForPayer(r.Context(), h.d.Environment, r.PathValue("order"), code)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	now := h.d.Clock.Now()
	var c *parcela.Company
	if o.Offer != nil && o.Offer.Product != nil {
		c = o.Offer.Product.Company
	}
	v := newOrderPage(o, c, now)
	p := page{Title: "Seu pedido", Content: v, State: o.Status}
	if o.Offer != nil && o.Offer.Product != nil {
		p.Title, p.Company = "Pedido — "+o.Offer.Product.Name, o.Offer.Product.Company
	}
	if v.Billing != nil {
		p.State += "/" + v.Billing.Status
		for _, b := range v.Billing.Bills {
			p.State += "/" + b.Status + ":" + itoa(len(b.Payments))
		}
	}
	if v.Checks {
		p.Refresh = int(h.d.Refresh / time.Second)
	}
	h.render(w, r, http.StatusOK, "order", p)
}

func newOrderPage(o *parcela.Order, c *parcela.Company, now time.Time) orderPage {
	v := orderPage{Order: o}
	if o.Offer != nil {
		v.Product = o.Offer.Product
	}
	if len(o.Billings) > 0 {
		v.Billing = o.Billings[len(o.Billings)-1]
	}
	// What lapses unpaid: a financed plan's down payment, or an upfront
	// purchase's one bill, which is no "entrada" (its row says "Pagamento
	// à vista").
	first := "a entrada"
	if v.Billing != nil && v.Billing.Installments <= 1 {
		first = "esta compra"
	}
	switch {
	case o.Status == parcela.OrderCanceled:
		v.Headline, v.Tone = "Pedido cancelado", "off"
		v.Message = "Este pedido foi cancelado e não precisa ser pago."
		if o.CancelationReason != nil && *o.CancelationReason == parcela.ReasonExpired {
			v.Message = "O prazo para pagar " + first + " acabou e o pedido foi cancelado. Você pode fazer um novo pedido pela oferta."
		}
	case o.Status == parcela.OrderFinished:
		v.Headline, v.Tone, v.Message = "Pagamento confirmado!", "ok", "Tudo pago. Obrigado pela compra!"
	case v.Billing == nil:
		v.Headline, v.Tone, v.Message = "Pedido recebido", "wait", "O pagamento ainda não foi gerado."
	case v.Billing.Status == parcela.BillingWaitingPayment && firstBillLapsed(v.Billing, now):
		// Past its time to pay, the order waits for the expiry sweep (a
		// Pix's hour for the bank's notice of a payment in its last
		// seconds): "Aguardando pagamento" read as still time to pay.
		v.Headline, v.Tone = "Prazo encerrado", "off"
		v.Message = "O prazo para pagar " + first + " acabou. Se você pagou a tempo, esta página se atualiza sozinha quando o pagamento for confirmado; senão, o pedido será cancelado."
	case v.Billing.Status == parcela.BillingWaitingPayment:
		v.Headline, v.Tone = "Aguardando pagamento", "wait"
		v.Message = "Assim que o pagamento for confirmado, esta página se atualiza sozinha."
	case v.Billing.Status == parcela.BillingActive:
		v.Headline, v.Tone = "Pagamento da entrada confirmado!", "ok"
		v.Message = "Sua compra está garantida. As próximas parcelas chegam por boleto " + issueLead(c) + ", e você pode pagá-las antes por aqui."
	default:
		v.Headline, v.Tone, v.Message = "Pagamento confirmado!", "ok", "Tudo pago. Obrigado pela compra!"
	}
	if v.Billing == nil {
		return v
	}
	var received int64 // by bills canceled after their payments took part of them
	for _, b := range v.Billing.Bills {
		if b.Status == parcela.BillCanceled {
			received += b.Received()
		}
	}
	if received > 0 {
		v.Message += refundNote(received)
	}
	bills := append([]*parcela.Bill(nil), v.Billing.Bills...)
	sort.Slice(bills, func(i, j int) bool { return bills[i].Number < bills[j].Number })
	canceled := false
	for _, b := range bills {
		withBilling := *b
		withBilling.Billing = v.Billing
		b = &withBilling
		row := billRow{Label: billLabel(b, v.Billing), DueDate: b.DueDate, EffectiveDueDate: b.EffectiveDueDate, AmountCents: b.AmountCents, Status: b.Status,
			StatusLabel: billStatus[b.Status], Class: statusClass(b.Status), PaidAt: b.PaidAt}
		reason := b.NotPayableAt(now)
		if reason == parcela.NotPayableFirstBillLapsed { // pending until the expiry sweep cancels it
			row.StatusLabel, row.Class = lapsedStatus, statusClass(parcela.BillCanceled)
		}
		if reason == "" {
			row.CheckoutURL = parcela.Links{}.CheckoutURL(b.ID, b.AuthenticationCode)
			if v.Due == nil {
				v.Due = newDueBill(b, c, row, now)
			}
		}
		v.Bills = append(v.Bills, row)
		v.TotalCents += b.AmountCents
		if b.Status == parcela.BillCanceled {
			canceled = true
		}
	}
	if canceled || len(v.Bills) < 2 {
		v.TotalCents = 0 // no plan left to sum, or one payment that is its own total
	}
	v.Checks = o.Status != parcela.OrderCanceled &&
		(v.Billing.Status == parcela.BillingWaitingPayment || v.Due != nil && len(v.Due.Pay) > 0)
	if d := v.Due; d != nil && d.Overdue && o.Status != parcela.OrderCanceled {
		// Whatever was paid before, what the payer must know now is the
		// bill that is late.
		v.Headline, v.Tone = "Pagamento em atraso", "late"
		v.Message = "A " + strings.ToLower(d.Label[:1]) + d.Label[1:] + " venceu em " + date(d.DueDate) + ". Pague o quanto antes"
		if d.Penalized {
			v.Message += ": o valor abaixo já inclui a multa e os juros por atraso até hoje."
		} else {
			v.Message += "."
		}
	}
	return v
}

// newDueBill shows the bill to pay now at what it asks for (late
// penalties included when the company is known), less what its payments
// received.
func newDueBill(b *parcela.Bill, c *parcela.Company, row billRow, now time.Time) *dueBill {
	d := &dueBill{Label: row.Label, AmountCents: b.AmountCents - b.Received(), DueDate: b.DueDate, EffectiveDueDate: b.EffectiveDueDate, CheckoutURL: row.CheckoutURL,
		Overdue: b.Status == parcela.BillOverdue}
	if c != nil {
		owed := d.AmountCents
		d.AmountCents = b.Outstanding(now, c)
		d.Penalized = d.AmountCents > owed
	}
	for _, pv := range livePayViews(b, c, now, nil) {
		// The page says the amount below carries the penalty only when
		// each box's does: a bolepix in its grace shows its Pix's amount,
		// and its note the boleto's late one.
		d.Penalized = d.Penalized && pv.ShownCents() >= d.AmountCents
		d.Pay = append(d.Pay, pv)
	}
	return d
}

// firstBillLapsed tells whether billing's first bill is past its time to
// pay at now, not yet canceled (Bill.NotPayableAt).
func firstBillLapsed(billing *parcela.Billing, now time.Time) bool {
	for _, b := range billing.Bills {
		if b.Number == 0 {
			withBilling := *b
			withBilling.Billing = billing
			return withBilling.NotPayableAt(now) == parcela.NotPayableFirstBillLapsed
		}
	}
	return false
}
