package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"parcela"
	"parcela/brcode"
)

// checkoutPage is a bill's checkout: what is owed now and the ways to pay.
type checkoutPage struct {
	Bill      *parcela.Bill
	Product   *parcela.Product
	Offer     *parcela.Offer
	Label     string
	Status    string
	Class     string
	Penalty   parcela.Penalty
	LateSince time.Time
	// The next business day a bill due on a weekend or holiday may still be
	// paid without penalty; zero when it is due on a business day.
	PayableUntil time.Time
	// PayableLabel names PayableUntil: an installment is payable "sem
	// multa" until then and late after; a first bill (a boleto down
	// payment or upfront bill) owes no fine and lapses after it, its order
	// canceled, so "sem multa" promised a late payment it does not take.
	PayableLabel string
	PayableNote  string // why that day: penaltyFreeNotes, or "prazo do boleto" in a first bill's grace
	Received     int64  // what the bill's payments received short of paying it
	Current      int64  // what paying it now takes: what a card is charged
	// Why nothing is offered, when the bill cannot be paid.
	NotPayable string
	Methods    []string
	Code       string
	Token      formToken
	Actions    map[string]string // method → form action
	Pay        []payView         // the payments to pay with now
	Outcome    *outcome          // what became of the payment the page was opened on
	Card       cardForm
	Notice     string
	// What became of a card form's post, said in the card's section,
	// where its answer opens (#cartao): at the top, above a Pix's QR Code
	// and a boleto's codes, a phone showed the codes and no word of it.
	CardNotice string
	// A refused card's outcome, said in the card's section, where its
	// page opens (#cartao), not at the top with the others' outcomes.
	CardOutcome *outcome
	// The page of the bill's order and its access code, when the checkout
	// was opened from its purchase (the offer page's card form): a card
	// buyer has the link to their order a Pix or boleto buyer lands on.
	OrderURL, OrderCode string
	// awaitsNotice: a first bill past its time to pay, whose order waits
	// for the bank's notice of a payment made in time.
	awaitsNotice bool
	// Checks: the page, got by its address, checks for its Pix or boleto's
	// payment (the script) and says how to look without the script, which
	// no meta refresh does here: a reload would wipe the card form.
	Checks bool
	// Why the card form is not offered: the bill's cards rest after too
	// many refusals (parcela.CardRefusalLimit); "" when it is.
	CardsRest string
}

// outcome is the fate of one payment: a card approved or refused, or an
// unpaid Pix or boleto that expired.
type outcome struct {
	Tone, Heading, Message string
}

// cardForm is the card form as typed, less what is never echoed: the
// number and the security code.
type cardForm struct {
	Name, Month, Year, Installments string
	Errors                          map[string]string
	YearOptions                     cardYears        // the expiry years offered
	InstallmentOptions              cardInstallments // the installments offered
}

// cardYears is the expiry year's choices: sixteen years from First, Chosen
// (as typed) selected.
type cardYears struct {
	First  int
	Chosen string
}

func (y cardYears) Years() []string {
	years := make([]string, 0, 16)
	for n := y.First; n < y.First+16; n++ {
		years = append(years, strconv.Itoa(n))
	}
	return years
}

// cardMonths are the expiry month's choices.
var cardMonths = []string{"01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12"}

// cardInstallments is the card installments' choices: 1 to Limit
// interest-free installments of Amount, Chosen (0 for none) selected.
type cardInstallments struct {
	Amount        int64
	Limit, Chosen int
}

type cardInstallment struct {
	Count    int
	Label    string
	Selected bool
}

// Options are the choices with their amounts.
func (c cardInstallments) Options() []cardInstallment {
	options := make([]cardInstallment, 0, c.Limit)
	for n := 1; n <= c.Limit; n++ {
		parts := parcela.CardInstallmentAmounts(c.Amount, n)
		label := strconv.Itoa(n) + "× de " + brl(parts[0]) + " sem juros"
		if parts[n-1] != parts[0] {
			label = strconv.Itoa(n) + "× sem juros: " + strconv.Itoa(n-1) + "× " + brl(parts[0]) + " e 1× " + brl(parts[n-1])
		}
		if n == 1 {
			label = "1× de " + brl(c.Amount) + " (à vista)"
		}
		options = append(options, cardInstallment{Count: n, Label: label, Selected: n == c.Chosen})
	}
	return options
}

// loadBill reads the path's bill for the code (from the query on GET, the
// form on POST) and the offer it sells.
func (h *Handler) loadBill(r *http.Request, code string) (*parcela.Bill, *parcela.Offer, error) {
	if code == "" {
		return nil, nil, parcela.NotFound("bill")
	}
	return h.d.Checkout.BillForPayer(r.Context(), h.d.Environment, r.PathValue("bill"), code)
}

func (h *Handler) handleCheckout(w http.ResponseWriter, r *http.Request) {
	code := r.URL.Query().Get("code")
	b, offer, err := h.loadBill(r, code)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.renderCheckout(w, r, http.StatusOK, b, offer, code, r.URL.Query().Get("payment"), cardForm{}, "")
}

// handleIssue issues (or finds) the bill's live Pix or boleto and shows it.
func (h *Handler) handleIssue(method string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !h.parseForm(w, r) {
			return
		}
		code := r.PostFormValue("code")
		b, offer, err := h.loadBill(r, code)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		nonce, ok := h.csrf.verify(r)
		if !ok {
			h.renderCheckout(w, r, http.StatusForbidden, b, offer, code, "", cardForm{}, "Por segurança, escolha a forma de pagamento de novo.")
			return
		}
		target, _, err := h.submissions.do(r.Context(), submissionKey(r, nonce), func() (string, error) {
			p, err := h.d.Checkout.IssuePayment(r.Context(), h.d.Environment, b.ID, code, method)
			if err != nil {
				return "", err
			}
			return paymentTarget(b.ID, code, p.ID, h.orderCode(r, b), "pagamento"), nil
		})
		h.afterPayment(w, r, target, err, b, offer, code, cardForm{})
	}
}

// handleCard charges the typed card. Approved or refused, the page is then
// opened on the attempt; a card that fails validation is shown again
// without its number and security code.
func (h *Handler) handleCard(w http.ResponseWriter, r *http.Request) {
	if !h.parseForm(w, r) {
		return
	}
	code := r.PostFormValue("code")
	b, offer, err := h.loadBill(r, code)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	form := cardForm{Name: r.PostFormValue("card_name"), Month: r.PostFormValue("card_month"), Year: r.PostFormValue("card_year"),
		Installments: r.PostFormValue("card_installments")}
	nonce, ok := h.csrf.verify(r)
	if !ok {
		h.renderCheckout(w, r, http.StatusForbidden, b, offer, code, "", form, "Por segurança, digite os dados do cartão de novo.")
		return
	}
	// A year not chosen is no year: as 0 the domain would read it as 2000
	// (a two-digit 00) and call the card expired.
	month, year := atoiOr(form.Month, 0), atoiOr(form.Year, -1)
	installments, _ := strconv.Atoi(form.Installments)
	// The total the page showed beside the button: a bill that owes
	// another amount by now (its fine began at midnight) charges nothing,
	// and the page shows it again as it is.
	// The page always sends it: one missing, or no positive number of
	// cents, is no total shown, and charges nothing (as 0 it read as "no
	// total to check" and charged whatever the bill owed by then).
	shown, err := strconv.ParseInt(r.PostFormValue("card_amount"), 10, 64)
	if err != nil || shown <= 0 {
		h.afterPayment(w, r, "", parcela.Errorf(parcela.EINVALIDSTATE, "the card form carries no total the page showed; the card was not charged"),
			b, offer, code, form)
		return
	}
	// The code's spaces around it are none of it: its field hides what
	// was typed (or pasted), and " 123" was refused as not 3 digits.
	card := parcela.CardPayment{Number: r.PostFormValue("card_number"), HolderName: form.Name, ExpiryMonth: month, ExpiryYear: year,
		CVV: strings.TrimSpace(r.PostFormValue("card_cvv")), Installments: installments, ShownCents: shown}
	target, _, err := h.submissions.do(r.Context(), submissionKey(r, nonce+"\x00"+h.cardKey(card)), func() (string, error) {
		p, err := h.d.Checkout.PayByCard(r.Context(), h.d.Environment, b.ID, code, card)
		if err != nil {
			return "", err
		}
		orderCode := h.orderCode(r, b)
		if p.Status == parcela.PaymentPaid && orderCode != "" {
			// Approved on a purchase: the order's page confirms it, as it
			// does a Pix or boleto bought there.
			return parcela.Links{}.OrderURL(b.OrderID, orderCode), nil
		}
		anchor := "pagamento"
		if p.Status == parcela.PaymentRefused {
			anchor = "cartao"
		}
		return paymentTarget(b.ID, code, p.ID, orderCode, anchor), nil
	})
	h.afterPayment(w, r, target, err, b, offer, code, form)
}

// cardKey names the card a card form sent, in its submission: the same
// card sent twice from one page (a double click) is one attempt, but
// another card typed on the page restored by the Back button after a
// refusal is a submission of its own, and is charged; it was answered with
// the first card's refusal and never sent. It is an HMAC under the pages'
// key, so what is remembered neither holds nor reveals the card.
func (h *Handler) cardKey(c parcela.CardPayment) string {
	m := hmac.New(sha256.New, h.csrf.key)
	m.Write([]byte("card\x00" + brcode.NormalizeDigits(c.Number) + "\x00" + c.HolderName + "\x00" + c.CVV + "\x00" +
		strconv.Itoa(c.ExpiryMonth) + "/" + strconv.Itoa(c.ExpiryYear) + "\x00" + strconv.Itoa(c.Installments) + "\x00" +
		strconv.FormatInt(c.ShownCents, 10)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (h *Handler) afterPayment(w http.ResponseWriter, r *http.Request, target string, err error, b *parcela.Bill,
	offer *parcela.Offer, code string, form cardForm) {
	switch parcela.ErrorCode(err) {
	case "":
		http.Redirect(w, r, target, http.StatusSeeOther)
	case parcela.EINVALID:
		errs, _ := formErrors(fieldsOf(err))
		form.Errors = map[string]string{}
		for input, msg := range errs {
			if strings.HasPrefix(input, "card_") {
				form.Errors[input] = msg
			}
		}
		notice := ""
		if len(form.Errors) == 0 {
			notice = "Esta forma de pagamento não está disponível para esta cobrança."
		}
		h.renderCheckout(w, r, http.StatusUnprocessableEntity, b, offer, code, "", form, notice)
	case parcela.ERATELIMITED:
		// The bill's cards rest (too many refusals): shown as it is now,
		// with why and until when, and the other ways to pay.
		if fresh, fo, lerr := h.loadBill(r, code); lerr == nil {
			b, offer = fresh, fo
		}
		var methods []string
		if b.Billing != nil && b.Billing.PaymentConfiguration != nil {
			methods = b.Billing.PaymentConfiguration.BillMethods(b)
		}
		notice := "O cartão não foi cobrado: houve muitas tentativas com cartão nesta cobrança ao mesmo tempo. Aguarde um instante e tente de novo" + orPayWith(methods) + "."
		wait := time.Second // another card attempt on the bill under way
		now := h.d.Clock.Now()
		if until := b.CardsRestUntil(now); !until.IsZero() {
			notice = "O cartão não foi cobrado."
			wait = until.Sub(now)
		}
		setRetryAfter(w, wait) // every 429 says when to come back
		h.renderCheckout(w, r, http.StatusTooManyRequests, b, offer, code, "", form, notice)
	case parcela.EINVALIDSTATE, parcela.ECONFLICT:
		// The bill moved (paid, canceled) since the page was shown: show it as it is now.
		if fresh, fo, lerr := h.loadBill(r, code); lerr == nil {
			b, offer = fresh, fo
		}
		h.renderCheckout(w, r, http.StatusConflict, b, offer, code, "", form, "Não foi possível concluir: a cobrança mudou enquanto você pagava. Confira abaixo.")
	default:
		h.fail(w, r, err)
	}
}

// methodPaths are the checkout's action paths by payment method.
var methodPaths = map[string]string{parcela.MethodPix: "pix", parcela.MethodBoleto: "boleto", parcela.MethodCreditCard: "card"}

// paymentTarget opens the checkout on one payment, with the order's access
// code when the checkout was opened with it.
func paymentTarget(billID, code, paymentID, orderCode, anchor string) string {
	target := parcela.Links{}.CheckoutURL(billID, code) + "&payment=" + url.QueryEscape(paymentID)
	if orderCode != "" {
		target += "&order_code=" + url.QueryEscape(orderCode)
	}
	return target + "#" + anchor
}

// orderCode is the access code of b's order the request carries (the
// query's or the form's order_code), "" when it carries none or one that
// does not open the order.
func (h *Handler) orderCode(r *http.Request, b *parcela.Bill) string {
	code := r.FormValue("order_code")
	if code == "" || len(code) > 64 {
		return ""
	}
	if err := h.d.Checkout.CheckOrderCode(r.Context(), h.d.Environment, b.OrderID, code); err != nil {
		return ""
	}
	return code
}

func (h *Handler) renderCheckout(w http.ResponseWriter, r *http.Request, status int, b *parcela.Bill, offer *parcela.Offer,
	code, paymentID string, form cardForm, notice string) {
	now, c := h.d.Clock.Now(), offer.Product.Company
	v := checkoutPage{Bill: b, Offer: offer, Label: billLabel(b, b.Billing), Status: billStatus[b.Status], Class: statusClass(b.Status),
		Code: code, Notice: notice, Actions: map[string]string{}, Product: offer.Product}
	if v.OrderCode = h.orderCode(r, b); v.OrderCode != "" {
		v.OrderURL = parcela.Links{}.OrderURL(b.OrderID, v.OrderCode)
	}
	v.Penalty, v.Received, v.Current = b.Penalty(now, c), b.Received(), b.Outstanding(now, c)
	v.LateSince = b.LateSince()
	if reason := b.NotPayableAt(now); reason != "" {
		v.NotPayable = notPayableMessages[reason]
		if b.Status == parcela.BillCanceled && v.Received > 0 {
			v.NotPayable += refundNote(v.Received)
		}
		if reason == parcela.NotPayableFirstBillLapsed {
			// Still pending until the expiry sweep cancels it (an hour
			// after a Pix's expiry, the next business day after a
			// boleto's, for the bank's notice of a payment made in time):
			// "A vencer" beside "o prazo acabou".
			v.Status, v.Class = lapsedStatus, statusClass(parcela.BillCanceled)
			if noticeMayCome(b) {
				v.awaitsNotice = true
			} else {
				// A first bill charged for a card with none paid: no bank
				// will tell of a payment (a review).
				v.NotPayable = lapsedWithoutNotice
			}
		}
	} else {
		if b.Type == parcela.BillTypeInstallment {
			// The day its penalty-free time ends, while it lasts: a bill
			// owing nothing past its due date (a late-issued boleto, a
			// waiver) was said to be payable without a fine until a day
			// already past.
			if through, why := b.PenaltyFreeThrough(); !now.After(through) && date(through) != date(b.DueDate) {
				v.PayableUntil, v.PayableLabel, v.PayableNote = through, "Pagável sem multa até", penaltyFreeNotes[why]
			}
		} else if date(b.EffectiveDueDate) != date(b.DueDate) { // never earlier
			v.PayableUntil, v.PayableLabel, v.PayableNote = b.EffectiveDueDate, "Pagável até", "próximo dia útil"
		}
		if p := b.LivePayment(parcela.MethodBoleto, now); p != nil && b.Type == parcela.BillTypeDownPayment && now.After(b.EffectiveDueDate) {
			// Past its day, a first bill's boleto is still taken through
			// the settlement grace (its order waits for the notice): the
			// page said "Pagável até" the day before beside "A vencer".
			v.PayableUntil, v.PayableLabel, v.PayableNote = p.ExpiresAt.Add(-time.Millisecond), "Pagável até", "prazo do boleto"
		}
		v.Methods = []string{parcela.MethodPix, parcela.MethodBoleto, parcela.MethodCreditCard}
		var pc *parcela.PaymentConfiguration
		if b.Billing != nil && b.Billing.PaymentConfiguration != nil {
			pc = b.Billing.PaymentConfiguration
			v.Methods = pc.BillMethods(b)
		}
		cardsRest := b.CardsRestUntil(now)
		v.Methods = slices.DeleteFunc(slices.Clone(v.Methods), func(m string) bool {
			if m == parcela.MethodCreditCard {
				if h.d.CardCharges != nil && !cardsRest.IsZero() {
					v.CardsRest = "Por segurança, esta cobrança não aceita cartão até " + dateTimeFrom(cardsRest) + ": houve " +
						strconv.Itoa(parcela.CardRefusalLimit) + " tentativas com cartão recusadas em 24 horas."
				}
				return h.d.CardCharges == nil || !cardsRest.IsZero() // no acquirer serves this listener's environment, or its cards rest
			}
			// One past its time (a first bill's Pix in its boleto's
			// settlement grace) would be refused.
			return !b.CanIssueAt(pc, c, m, now)
		})
		for _, m := range v.Methods {
			v.Actions[m] = "/checkout/bills/" + url.PathEscape(b.ID) + "/" + methodPaths[m]
		}
		switch {
		case v.CardsRest != "" && payWith(v.Methods) != "":
			v.CardsRest += " Você pode pagar agora com " + payWith(v.Methods) + "."
		case v.CardsRest != "":
			v.CardsRest += " Tente de novo depois disso ou fale com o vendedor."
		case len(v.Methods) == 0:
			// Nothing to pay with, and nothing said why: the page showed
			// the amount alone.
			v.NotPayable = noMethodHere
		}
		v.Pay = livePayViews(b, c, now, func(m string) bool { return slices.Contains(v.Methods, m) })
		v.Card = newCardForm(form, v.Current, parcela.CardInstallmentLimit(b, pc, c, v.Current), now)
		v.Token = h.csrf.issue(w, r, h.secureCookies(r))
	}
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/card") && (v.Actions[parcela.MethodCreditCard] != "" || v.CardsRest != "") {
		v.CardNotice, v.Notice = notice, ""
		if v.CardNotice == "" && len(v.Card.Errors) > 0 {
			v.CardNotice = "O cartão não foi cobrado: confira os campos destacados."
		}
	}
	v.Outcome = paymentOutcome(b, paymentID, now, v.Methods)
	if v.Outcome != nil && v.Outcome.Heading == expiredHeading && v.NotPayable == "" {
		v.Outcome.Message += " Gere um novo abaixo."
	}
	if v.Outcome != nil && v.Outcome.Heading == refusedHeading && v.CardsRest != "" {
		// Its reason alone: another card is what the bill no longer takes.
		v.Outcome.Message, _, _ = strings.Cut(v.Outcome.Message, ". ")
		v.Outcome.Message = strings.TrimSuffix(v.Outcome.Message, ".") + "."
	}
	if v.Outcome != nil && v.Outcome.Heading == refusedHeading && (v.Actions[parcela.MethodCreditCard] != "" || v.CardsRest != "") {
		v.CardOutcome, v.Outcome = v.Outcome, nil
	}
	v.Checks = len(v.Pay) > 0 && r.Method == http.MethodGet
	p := page{Title: v.Label + " — " + c.Name, Company: c, Content: v, State: b.Status}
	if v.Checks {
		// A Pix or boleto shown is paid elsewhere (the bank's app): the page
		// says so when it is, lest the payer pay again. One shown by a post
		// is at the post's address, which the script cannot fetch.
		p.Refresh, p.ScriptRefreshOnly = int(h.d.Refresh/time.Second), true
	} else if v.awaitsNotice && r.Method == http.MethodGet {
		// Past its time, its payment's notice may still come (a boleto's
		// the whole next business day): the page, with no form to wipe,
		// checks for it as the order's does.
		p.Refresh = int(h.d.Refresh / time.Second)
	}
	h.render(w, r, status, "checkout", p)
}

const (
	expiredHeading = "Pagamento expirado"
	refusedHeading = "Cartão recusado"
)

// paymentOutcome says what became of the payment the page was opened on.
func paymentOutcome(b *parcela.Bill, paymentID string, now time.Time, methods []string) *outcome {
	if paymentID == "" {
		return nil
	}
	for _, p := range b.Payments {
		if p.ID != paymentID {
			continue
		}
		switch {
		case p.Status == parcela.PaymentRefused:
			return &outcome{Tone: "late", Heading: refusedHeading, Message: refusalMessage(p.RefusedReason, methods)}
		case p.Status == parcela.PaymentPaid && p.Method == parcela.MethodCreditCard:
			return &outcome{Tone: "ok", Heading: "Pagamento aprovado!", Message: "O pagamento no cartão foi aprovado. Obrigado!"}
		case p.Status == parcela.PaymentPaid:
			return &outcome{Tone: "ok", Heading: "Pagamento confirmado!", Message: "Recebemos o pagamento. Obrigado!"}
		case p.Status == parcela.PaymentExpired || p.Status == parcela.PaymentUnpaid && !now.Before(p.ExpiresAt):
			// The checkout adds where to make a new one, when the bill may
			// still be paid.
			return &outcome{Tone: "off", Heading: expiredHeading, Message: "Este código expirou."}
		}
	}
	return nil
}

// newCardForm sets the card installments and the expiry years to choose
// from.
func newCardForm(f cardForm, amount int64, limit int, now time.Time) cardForm {
	chosen, _ := strconv.Atoi(f.Installments)
	if chosen < 1 || chosen > limit {
		chosen = 0 // none of the choices, as a number out of them selects none
	}
	f.InstallmentOptions = cardInstallments{Amount: amount, Limit: limit, Chosen: chosen}
	f.YearOptions = cardYears{First: now.In(parcela.SaoPaulo).Year(), Chosen: f.Year}
	return f
}

// handlePayment opens a payment by its own (unguessable) address: its
// codes and its seller, and nothing of the customer.
func (h *Handler) handlePayment(w http.ResponseWriter, r *http.Request) {
	p, b, c, err := h.d.Payments.PaymentForPayer(r.Context(), h.d.Environment, r.PathValue("payment"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	now := h.d.Clock.Now()
	v := paymentPage{Payment: p, Status: paymentStatus[p.Status]}
	if p.Status == parcela.PaymentUnpaid && now.Before(p.ExpiresAt) && p.Method != parcela.MethodCreditCard {
		pv := newPayView(b, p, c, now)
		if b != nil && pv.Linha != "" && pv.PixCode != "" && b.LivePayment(parcela.MethodPix, now) != nil {
			// A bolepix beside the bill's live Pix shows its boleto alone,
			// as the checkout does (livePayViews): its own page showed its
			// Pix code, a second one for the bill (a review).
			pv.PixCode, pv.PixImage = "", ""
			v.PayOne = payOneBeside
		}
		v.Pay = &pv
	} else {
		v.Message = paymentFate(p, b, now)
		if p.Status != parcela.PaymentPaid && p.PaidAmountCents > 0 && b != nil && b.Status == parcela.BillCanceled {
			// Canceled with its bill, or expired (a first bill's, its
			// order lapsed): what it took is the seller's to refund.
			v.Message += refundNote(p.PaidAmountCents)
		}
		if p.Status == parcela.PaymentUnpaid && p.Method != parcela.MethodCreditCard {
			// Past its expiry, still unpaid until the sweep marks it (a
			// Pix's hour for the bank's notice): "Aguardando pagamento"
			// beside "não pode mais ser pago" read as still to be paid.
			v.Status = paymentStatus[parcela.PaymentExpired]
			if b != nil && b.NotPayableAt(now) == parcela.NotPayableFirstBillLapsed {
				// Its order waits for the bank's notice of a payment made
				// in time: "Expirado" beside "se você já pagou, a
				// confirmação aparece aqui" read as that payment lost.
				v.Status = lapsedStatus
			}
		}
	}
	pg := page{Title: "Pagamento", Content: v, State: p.Status}
	if c != nil {
		// Who is charging, as the checkout says it: a code from a page
		// that names no seller is one a payer should not trust.
		pg.Title, pg.Company = "Pagamento — "+c.Name, c
	}
	if v.Pay != nil || p.Status == parcela.PaymentUnpaid && b != nil && b.NotPayableAt(now) == parcela.NotPayableFirstBillLapsed {
		// Shown, or past its time with its notice still to come: the page
		// checks for its payment.
		pg.Refresh = int(h.d.Refresh / time.Second)
	}
	h.render(w, r, http.StatusOK, "payment", pg)
}

// paymentPage is one payment's page.
type paymentPage struct {
	Payment *parcela.Payment
	Status  string
	Pay     *payView
	Message string // what became of a payment that is not to be paid
	PayOne  string // said when the bill has another live code
}

// paymentFate says what became of payment p of bill b, when it is not to
// be paid. A code canceled because its bill was paid another way told the
// payer to generate another, as if the bill were still owed, and a card
// approval released (the bill paid meanwhile) was called refused. A code
// of a first bill whose time is over told the payer to generate another,
// where its checkout says none can be and the order is to be canceled.
func paymentFate(p *parcela.Payment, b *parcela.Bill, now time.Time) string {
	switch {
	case p.Status == parcela.PaymentPaid:
		return "Pagamento confirmado. Obrigado!"
	case p.Method == parcela.MethodCreditCard && p.Status == parcela.PaymentRefused:
		return "Esta tentativa de pagamento no cartão foi recusada."
	case b != nil && b.Status == parcela.BillPaid && p.Method == parcela.MethodCreditCard:
		return "Esta cobrança já foi paga de outra forma. Esta tentativa no cartão foi cancelada e não será cobrada."
	case b != nil && b.Status == parcela.BillPaid:
		return "Esta cobrança já foi paga de outra forma. Este código não precisa mais ser pago."
	case p.Method == parcela.MethodCreditCard && p.Status == parcela.PaymentCanceled:
		return "Esta tentativa de pagamento no cartão foi cancelada e não será cobrada."
	case p.Method == parcela.MethodCreditCard:
		return "Esta tentativa de pagamento no cartão não foi concluída."
	case b != nil && b.Status == parcela.BillCanceled:
		return "Esta cobrança foi cancelada e não pode mais ser paga."
	case b != nil && b.NotPayableAt(now) == parcela.NotPayableFirstBillLapsed:
		return notPayableMessages[parcela.NotPayableFirstBillLapsed]
	}
	return "Este código não pode mais ser pago. Use o link de pagamento que você recebeu para gerar outro."
}

// penaltyFreeNotes says why an installment is payable without a fine
// through the day the checkout names (parcela.Bill.PenaltyFreeThrough).
var penaltyFreeNotes = map[string]string{
	parcela.PenaltyFreeEffectiveDue: "próximo dia útil",
	parcela.PenaltyFreeFirstBoleto:  "prazo do boleto",
	parcela.PenaltyFreeFirstPix:     "prazo do Pix",
	parcela.PenaltyFreeWaiver:       "multa e juros dispensados",
}
