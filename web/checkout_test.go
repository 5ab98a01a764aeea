package web

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"parcela"
)

// card is a filled card form.
func card(number, cvv string, installments int) url.Values {
	return url.Values{"card_number": {number}, "card_name": {"MARIA DA SILVA"}, "card_month": {"12"}, "card_year": {"2030"},
		"card_cvv": {cvv}, "card_installments": {itoa(installments)}}
}

// postCheckout posts a form of the checkout page at path (with its code).
func (b *bundle) postCheckout(t *testing.T, checkoutPath, action string, form url.Values) response {
	t.Helper()
	page := b.get(t, checkoutPath)
	if page.status != http.StatusOK {
		t.Fatalf("checkout page: %d", page.status)
	}
	return b.postCheckoutFrom(t, checkoutPath, page.body, action, form)
}

func TestCheckoutCardRefusedThenApproved(t *testing.T) {
	t.Parallel()
	b := setup(t)
	checkout := b.buy(t, testUpfront+":credit_card")
	page := b.get(t, checkout)
	body := html.UnescapeString(page.body)
	for _, want := range []string{"Pagamento à vista", "Valor a pagar hoje", "R$\u00a01.990,00", "Cartão de crédito", "Parcelas no cartão",
		"1× de R$\u00a01.990,00 (à vista)", "3× sem juros: 2× R$\u00a0663,33 e 1× R$\u00a0663,34", "12× sem juros", "Curso de Confeitaria Profissional",
		`autocomplete="cc-number"`, "Pagar com Pix", "Pagar com boleto"} {
		if !strings.Contains(body, want) {
			t.Errorf("checkout lacks %q", want)
		}
	}
	checkLabels(t, page.body)

	refused := b.postCheckout(t, checkout, "card", card("4000 0000 0000 9995", "123", 3))
	if refused.status != http.StatusSeeOther || !strings.HasSuffix(refused.header.Get("Location"), "#cartao") {
		t.Fatalf("refused: %d %s", refused.status, refused.header.Get("Location"))
	}
	after := b.get(t, refused.header.Get("Location"))
	if !strings.Contains(after.body, "Cartão recusado") || !strings.Contains(after.body, "Saldo ou limite insuficiente") ||
		!strings.Contains(after.body, `id="cartao"`) {
		t.Fatalf("refusal page:\n%s", after.body)
	}
	bill := b.onlyOrder(t).Billings[0].Bills[0]
	if bill.Status != parcela.BillPending || len(bill.Payments) != 1 || bill.Payments[0].Status != parcela.PaymentRefused ||
		*bill.Payments[0].RefusedReason != parcela.RefusedInsufficientFunds || bill.Payments[0].Installments != 3 {
		t.Fatalf("after refusal: bill %s, payments %+v", bill.Status, bill.Payments)
	}

	approved := b.postCheckout(t, checkout, "card", card("4111111111111111", "123", 2))
	paid := b.get(t, approved.header.Get("Location"))
	if !strings.Contains(paid.body, "Pagamento aprovado!") || !strings.Contains(paid.body, "Esta cobrança já está paga") ||
		strings.Contains(paid.body, "<form") {
		t.Fatalf("approved page:\n%s", paid.body)
	}
	o := b.onlyOrder(t)
	if o.Status != parcela.OrderFinished || o.Billings[0].Bills[0].Status != parcela.BillPaid {
		t.Fatalf("order %s, bill %s", o.Status, o.Billings[0].Bills[0].Status)
	}
	if ev := b.store.eventList(); len(ev) != 1 || !strings.HasPrefix(ev[0], "bill.paid ") {
		t.Fatalf("events %v", ev)
	}
	// The numbers whole, spaced or not, and their first eight digits: a
	// four-digit piece alone also turns up by chance in a page's random
	// ids and form token.
	for _, res := range []response{refused, after, approved, paid} {
		for _, echo := range []string{"4000000000009995", "4000 0000", "40000000", "4111111111111111", "4111 1111", "41111111"} {
			if strings.Contains(res.body, echo) {
				t.Fatalf("a page echoes the card number (%q)", echo)
			}
		}
	}
}

func TestCheckoutCardErrorsKeepAllButTheCard(t *testing.T) {
	t.Parallel()
	b := setup(t)
	checkout := b.buy(t, testUpfront+":credit_card")
	form := card("4111 1111 1111 1112", "12", 2)
	form.Set("card_month", "01")
	form.Set("card_year", "2026")
	res := b.postCheckout(t, checkout, "card", form)
	if res.status != http.StatusUnprocessableEntity {
		t.Fatalf("status %d", res.status)
	}
	body := html.UnescapeString(res.body)
	for _, want := range []string{"Número de cartão inválido", "Este cartão está vencido.", "Código de segurança inválido",
		`value="MARIA DA SILVA"`, `<option value="01" selected>`, `<option value="2026" selected>`, `<option value="2" selected>`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, input := range []string{"card_number", "card_cvv"} {
		tag := regexp.MustCompile(`<input id="f-` + input + `"[^>]*>`).FindString(res.body)
		if !strings.Contains(tag, `value=""`) {
			t.Errorf("%s echoed: %s", input, tag)
		}
	}
	for _, echo := range []string{"4111111111111112", "4111 1111", "41111111"} { // see TestCheckoutCardRefusedThenApproved
		if strings.Contains(res.body, echo) {
			t.Errorf("the card number is echoed (%q)", echo)
		}
	}
	if bill := b.onlyOrder(t).Billings[0].Bills[0]; len(bill.Payments) != 0 {
		t.Fatal("an invalid card made a payment")
	}
}

// A month or a year not chosen (the selects' first option) asks for the
// expiry, where the missing year read as 2000 and the card was said to be
// expired.
func TestCheckoutCardExpiryNotChosen(t *testing.T) {
	t.Parallel()
	b := setup(t)
	checkout := b.buy(t, testUpfront+":credit_card")
	for _, missing := range []string{"card_month", "card_year"} {
		form := card("4111 1111 1111 1111", "123", 1)
		form.Set(missing, "")
		res := b.postCheckout(t, checkout, "card", form)
		body := html.UnescapeString(res.body)
		if res.status != http.StatusUnprocessableEntity || !strings.Contains(body, "Informe o mês e o ano de validade.") || strings.Contains(body, "vencido") {
			t.Errorf("%s not chosen: status %d, expiry error %q", missing, res.status, regexp.MustCompile(`id="f-card_expiry-error">[^<]*`).FindString(body))
		}
	}
	if bill := b.onlyOrder(t).Billings[0].Bills[0]; len(bill.Payments) != 0 {
		t.Fatal("a card without its expiry made a payment")
	}
}

func TestCheckoutPixOnDemandForAnInstallment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.buy(t, testFinanced+":pix")
	o := b.onlyOrder(t)
	second := o.Billings[0].Bills[1]
	checkout := parcela.Links{}.CheckoutURL(second.ID, second.AuthenticationCode)

	// Before the down payment is paid, the installment waits.
	early := b.get(t, checkout)
	if !strings.Contains(early.body, "Esta parcela só pode ser paga depois da entrada.") || strings.Contains(early.body, "<form") {
		t.Fatalf("installment before the down payment:\n%s", early.body)
	}
	b.pay(t, o.Billings[0].Bills[0].Payments[0].ID)

	page := b.get(t, checkout)
	if !strings.Contains(page.body, "Parcela 1 de 11") || strings.Contains(page.body, "Pagar com Pix") || !strings.Contains(page.body, "Pagar com boleto") ||
		strings.Contains(page.body, `id="cartao"`) {
		t.Fatalf("the installment offers other methods than its configuration's:\n%s", page.body)
	}
	// The configuration lists boleto (bolepix) for installments: issued on demand, with its Pix code.
	res := b.postCheckout(t, checkout, "boleto", url.Values{})
	if res.status != http.StatusSeeOther {
		t.Fatalf("issue: %d\n%s", res.status, res.body)
	}
	shown := b.get(t, res.header.Get("Location"))
	bill := b.onlyOrder(t).Billings[0].Bills[1]
	if len(bill.Payments) != 1 || bill.Payments[0].PixCode == nil {
		t.Fatalf("payments %+v", bill.Payments)
	}
	p := bill.Payments[0]
	for _, want := range []string{formatLinha(*p.Barcode), *p.PixCode, "/external_api/v1/payments/" + p.ID + "/pix.png",
		"/external_api/v1/payments/" + p.ID + "/barcode.png", "Copiar linha digitável", "Copiar código Pix"} {
		if !strings.Contains(html.UnescapeString(shown.body), want) {
			t.Errorf("issued boleto lacks %q", want)
		}
	}
	// Asking again shows the live one rather than issuing another.
	b.postCheckout(t, checkout, "boleto", url.Values{})
	if n := len(b.onlyOrder(t).Billings[0].Bills[1].Payments); n != 1 {
		t.Fatalf("%d payments after a second request", n)
	}
	// A method the configuration does not list is refused.
	if res := b.postCheckout(t, checkout, "pix", url.Values{}); res.status != http.StatusUnprocessableEntity ||
		!strings.Contains(res.body, "não está disponível para esta cobrança") {
		t.Fatalf("pix for a boleto installment: %d", res.status)
	}
}

func TestCheckoutPixOnDemandForTheDownPayment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	checkout := b.buy(t, testFinanced+":credit_card")
	res := b.postCheckout(t, checkout, "pix", url.Values{})
	if res.status != http.StatusSeeOther || !strings.HasSuffix(res.header.Get("Location"), "#pagamento") {
		t.Fatalf("issue: %d", res.status)
	}
	p := b.onlyOrder(t).Billings[0].Bills[0].Payments[0]
	page := b.get(t, res.header.Get("Location"))
	if p.Method != parcela.MethodPix || !strings.Contains(html.UnescapeString(page.body), *p.Barcode) || !strings.Contains(page.body, "Expira em") {
		t.Fatalf("Pix not shown:\n%s", page.body)
	}
	// The payment's own address shows its codes and nothing of the customer.
	own := b.get(t, parcela.Links{}.PaymentURL(p.ID))
	if own.status != http.StatusOK || !strings.Contains(html.UnescapeString(own.body), *p.Barcode) || strings.Contains(own.body, "Maria") {
		t.Fatalf("payment page: %d", own.status)
	}
	if b.get(t, parcela.Links{}.PaymentURL("5b0e8f5e-0000-4000-8000-000000000000")).status != http.StatusNotFound {
		t.Fatal("unknown payment found")
	}
}

// secondInstallmentByCard is the bill firstInstallmentBoleto issues (the
// order's second, installment 1), its billing's configuration taking
// cards too, and its checkout's address.
func (b *bundle) secondInstallmentByCard(t *testing.T) (*parcela.Bill, string) {
	t.Helper()
	second, _ := b.firstInstallmentBoleto(t)
	b.store.mu.Lock()
	b.store.bills[second.ID].Billing.PaymentConfiguration.PaymentMethods = []string{parcela.MethodBoleto, parcela.MethodCreditCard}
	b.store.mu.Unlock()
	return second, parcela.Links{}.CheckoutURL(second.ID, second.AuthenticationCode)
}

// firstInstallmentBoleto buys the financed configuration, pays its down
// payment, and issues installment 1's boleto ten days before its due date,
// at which it leaves the clock.
func (b *bundle) firstInstallmentBoleto(t testing.TB) (*parcela.Bill, *parcela.Payment) {
	t.Helper()
	b.buy(t, testFinanced+":pix")
	o := b.onlyOrder(t)
	b.pay(t, o.Billings[0].Bills[0].Payments[0].ID)
	second := o.Billings[0].Bills[1]
	b.clock.Set(second.DueDate.AddDate(0, 0, -10))
	b.store.mu.Lock()
	defer b.store.mu.Unlock()
	boleto, err := b.store.issue(b.store.bills[second.ID], parcela.MethodBoleto, second.AmountCents, second.DueDate, true)
	if err != nil {
		t.Fatal(err)
	}
	return second, boleto
}

func TestCheckoutLateBill(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// Installment 1 is due on 10 April 2026 (a Friday); its boleto is issued
	// ten days before, and 12 days after the due date, unpaid, it is late
	// (a bill is late only with a payment to pay it with).
	second, _ := b.firstInstallmentBoleto(t)
	b.clock.Set(second.EffectiveDueDate.Add(12 * 24 * time.Hour))
	b.store.mu.Lock()
	b.store.bills[second.ID].Status = parcela.BillOverdue
	second = b.store.billCopy(b.store.bills[second.ID], false)
	b.store.mu.Unlock()
	page := b.get(t, parcela.Links{}.CheckoutURL(second.ID, second.AuthenticationCode))
	c := b.company
	pen := second.Penalty(b.clock.Now(), c)
	body := html.UnescapeString(page.body)
	for _, want := range []string{"Vencida", "Multa por atraso", brl(pen.FineCents), "Juros de 12 dias desde " + date(second.EffectiveDueDate),
		brl(pen.InterestCents), brl(pen.Total(second.AmountCents))} {
		if !strings.Contains(body, want) {
			t.Errorf("late bill lacks %q", want)
		}
	}
	if pen.FineCents == 0 || pen.InterestCents == 0 {
		t.Fatalf("penalty %+v", pen)
	}

	// A day late, in the singular.
	b.clock.Set(second.EffectiveDueDate.Add(24 * time.Hour))
	if pen := second.Penalty(b.clock.Now(), c); pen.DaysLate != 1 || pen.InterestCents == 0 {
		t.Fatalf("a day late: penalty %+v", pen)
	}
	body = html.UnescapeString(b.get(t, parcela.Links{}.CheckoutURL(second.ID, second.AuthenticationCode)).body)
	if want := "Juros de 1 dia desde " + date(second.EffectiveDueDate); !strings.Contains(body, want) {
		t.Errorf("a day late, the checkout lacks %q", want)
	}
}

// An installment due on a weekend may be paid without penalty through the
// next business day: its checkout says until when, beside the due date
// that has passed.
func TestCheckoutWeekendDueDate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.buy(t, testFinanced+":pix")
	o := b.onlyOrder(t)
	b.pay(t, o.Billings[0].Bills[0].Payments[0].ID)
	// Installment 2 falls due on Sunday 10 May 2026: payable through Monday.
	bill := o.Billings[0].Bills[2]
	if date(bill.DueDate) != "10/05/2026" || date(bill.EffectiveDueDate) != "11/05/2026" {
		t.Fatalf("installment 2 due %s, effective %s", date(bill.DueDate), date(bill.EffectiveDueDate))
	}
	checkout := parcela.Links{}.CheckoutURL(bill.ID, bill.AuthenticationCode)
	b.clock.Set(time.Date(2026, time.May, 11, 9, 0, 0, 0, parcela.SaoPaulo))
	body := html.UnescapeString(b.get(t, checkout).body)
	for _, want := range []string{"<dd>10/05/2026</dd>", "<dt>Pagável sem multa até</dt><dd>11/05/2026 (próximo dia útil)</dd>", "A vencer"} {
		if !strings.Contains(body, want) {
			t.Errorf("checkout lacks %q", want)
		}
	}
	// A weekday due date needs no such line.
	first := o.Billings[0].Bills[1]
	if body := b.get(t, parcela.Links{}.CheckoutURL(first.ID, first.AuthenticationCode)).body; strings.Contains(body, "sem multa até") {
		t.Error("a weekday due date said to move")
	}
}

// A boleto first bill due on a weekend is payable through the next
// business day too, but owes no fine after it: it lapses, and its order
// is canceled. Its checkout says "Pagável até", where "Pagável sem multa
// até" promised a late payment with a fine that is never taken.
func TestCheckoutWeekendDueDateOfAFirstBill(t *testing.T) {
	t.Parallel()
	for _, option := range []string{testFinanced + ":boleto", testUpfront + ":boleto"} {
		b := setup(t)
		b.buy(t, option) // due Sunday 8 March 2026, payable through Monday
		first := b.onlyOrder(t).Billings[0].Bills[0]
		body := html.UnescapeString(b.get(t, parcela.Links{}.CheckoutURL(first.ID, first.AuthenticationCode)).body)
		if want := "<dt>Pagável até</dt><dd>09/03/2026 (próximo dia útil)</dd>"; !strings.Contains(body, want) {
			t.Errorf("%s: checkout lacks %q", option, want)
		}
		if strings.Contains(body, "sem multa") {
			t.Errorf("%s: a first bill, which owes no fine, is said payable without one", option)
		}
	}
}

// A Pix down payment past its due instant is not payable, and its bill
// stays pending until the expiry sweep cancels it, an hour later (the
// bank's notice of a payment in its last seconds is still taken). Its
// checkout says the time is over, and its status so: it showed "A vencer"
// beside "O prazo para pagar esta cobrança acabou".
func TestCheckoutOfALapsedFirstBillSaysItsTimeIsOver(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.buy(t, testFinanced+":pix") // due 08/03/2026 at 10:00
	first := b.onlyOrder(t).Billings[0].Bills[0]
	b.clock.Set(time.Date(2026, time.March, 8, 10, 30, 0, 0, parcela.SaoPaulo))
	body := html.UnescapeString(b.get(t, parcela.Links{}.CheckoutURL(first.ID, first.AuthenticationCode)).body)
	if !strings.Contains(body, "O prazo para pagar esta cobrança acabou") {
		t.Fatal("the checkout does not say the time to pay is over")
	}
	if want := `<span class="badge off">Prazo encerrado</span>`; !strings.Contains(body, want) || strings.Contains(body, "A vencer") {
		t.Errorf("the lapsed bill's status is not %q", want)
	}
}

// The order page of that hour says the time to pay the down payment is
// over, where it said "Aguardando pagamento" with its bill "A vencer", as
// if there were still time to pay.
func TestOrderPageOfALapsedFirstBillSaysItsTimeIsOver(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.buy(t, testFinanced+":pix") // due 08/03/2026 at 10:00
	o := b.onlyOrder(t)
	b.clock.Set(time.Date(2026, time.March, 8, 10, 30, 0, 0, parcela.SaoPaulo))
	body := html.UnescapeString(b.get(t, parcela.Links{}.OrderURL(o.ID, o.AccessCode)).body)
	for _, want := range []string{"<h1>Prazo encerrado</h1>", "O prazo para pagar a entrada acabou", `<td class="wide-only"><span class="badge off">Prazo encerrado</span></td>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the order page lacks %q", want)
		}
	}
	if strings.Contains(body, "Aguardando pagamento") {
		t.Error("the order page says it waits for a payment the down payment can no longer take")
	}
	// Before its due instant, it waits for the payment.
	b.clock.Set(time.Date(2026, time.March, 8, 9, 59, 0, 0, parcela.SaoPaulo))
	if body := b.get(t, parcela.Links{}.OrderURL(o.ID, o.AccessCode)).body; !strings.Contains(body, "Aguardando pagamento") || strings.Contains(body, "Prazo encerrado") {
		t.Error("the order page before the due instant does not wait for the payment")
	}
}

func TestCheckoutNeedsItsCode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	checkout := b.buy(t, testUpfront+":credit_card")
	u, _ := url.Parse(checkout)
	for name, path := range map[string]string{
		"no code":    u.Path,
		"wrong code": u.Path + "?code=nope",
		"other bill": "/checkout/bills/0f0e0d0c-0000-4000-8000-000000000000?" + u.RawQuery,
	} {
		if res := b.get(t, path); res.status != http.StatusNotFound || strings.Contains(res.body, "Confeitaria") {
			t.Errorf("%s: %d", name, res.status)
		}
	}
	// A post with a wrong code pays nothing.
	page := b.get(t, checkout)
	form := tokens(t, page.body, card("4111111111111111", "123", 1))
	form.Set("code", "nope")
	if res := b.post(t, u.Path+"/card", form); res.status != http.StatusNotFound {
		t.Fatalf("card with a wrong code: %d", res.status)
	}
	if len(b.onlyOrder(t).Billings[0].Bills[0].Payments) != 0 {
		t.Fatal("paid with a wrong code")
	}
}

func TestCheckoutCanceledBilling(t *testing.T) {
	t.Parallel()
	b := setup(t)
	checkout := b.buy(t, testUpfront+":credit_card")
	o := b.onlyOrder(t)
	if _, err := b.store.CancelOrder(t.Context(), parcela.Auth{CompanyID: b.company.ID, Environment: parcela.Sandbox}, o.ID, "customer_dropout"); err != nil {
		t.Fatal(err)
	}
	page := b.get(t, checkout)
	if !strings.Contains(page.body, "Esta cobrança foi cancelada") || strings.Contains(page.body, "<form") {
		t.Fatalf("canceled:\n%s", page.body)
	}
	// A page opened before the cancelation posts into a conflict and shows why.
	res := b.postCheckoutFrom(t, checkout, page.body, "card", card("4111111111111111", "123", 1))
	if res.status != http.StatusForbidden && res.status != http.StatusConflict {
		t.Fatalf("post after cancel: %d", res.status)
	}
}

// postCheckoutFrom posts with the tokens of a page already shown.
func (b *bundle) postCheckoutFrom(t *testing.T, checkoutPath, page, action string, form url.Values) response {
	t.Helper()
	u, _ := url.Parse(checkoutPath)
	if csrfField.FindStringSubmatch(page) == nil {
		// The page offered no form: post with a fresh cookie's token anyway.
		return b.post(t, u.Path+"/"+action, withCode(form, u))
	}
	if action == "card" && form.Get("card_amount") == "" {
		// As a browser sends the form's hidden total.
		form.Set("card_amount", hiddenValue(page, "card_amount"))
	}
	return b.post(t, u.Path+"/"+action, tokens(t, page, withCode(form, u)))
}

// A card form sent after the amount its page showed changed (the page
// shown in the due day's last minute, the form sent after midnight, when
// the installment owes its fine and a day's interest) charges nothing: the
// page is shown again with what the bill owes now. It charged the new
// amount, which the payer never saw.
func TestCheckoutCardChargesWhatThePageShowed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	second, checkout := b.secondInstallmentByCard(t)
	b.clock.Set(second.EffectiveDueDate.Add(-time.Minute))
	page := b.get(t, checkout)
	if got := hiddenValue(page.body, "card_amount"); got != itoa(int(second.AmountCents)) ||
		!strings.Contains(html.UnescapeString(page.body), "Pagar "+brl(second.AmountCents)+" no cartão") {
		t.Fatalf("the card form's total %q, want %d shown on its button", got, second.AmountCents)
	}
	b.clock.Set(second.EffectiveDueDate.Add(2 * time.Minute))
	res := b.postCheckoutFrom(t, checkout, page.body, "card", card("4111111111111111", "123", 1))
	b.store.mu.Lock()
	bill := b.store.billCopy(b.store.bills[second.ID], false)
	b.store.mu.Unlock()
	for _, p := range bill.Payments {
		if p.Method == parcela.MethodCreditCard {
			t.Fatalf("the card was charged %d cents; the page showed %d", p.AmountCents, second.AmountCents)
		}
	}
	owed := bill.Outstanding(b.clock.Now(), b.company)
	if body := html.UnescapeString(res.body); res.status != http.StatusConflict || !strings.Contains(body, "a cobrança mudou") ||
		!strings.Contains(body, "Pagar "+brl(owed)+" no cartão") || hiddenValue(res.body, "card_amount") != itoa(int(owed)) {
		t.Fatalf("card sent after the amount changed: %d, want 409 showing %s\n%s", res.status, brl(owed), res.body)
	}
	if owed <= second.AmountCents {
		t.Fatalf("the late bill owes %d, not more than %d", owed, second.AmountCents)
	}
}

func TestAssets(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for name, ctype := range map[string]string{"app.css": "text/css; charset=utf-8", "app.js": "text/javascript; charset=utf-8"} {
		res := b.get(t, "/pay/assets/"+name)
		if res.status != 200 || res.header.Get("Content-Type") != ctype || len(res.body) < 100 {
			t.Errorf("%s: %d %s", name, res.status, res.header.Get("Content-Type"))
		}
	}
	if b.get(t, "/pay/assets/nope.css").status != http.StatusNotFound {
		t.Error("unknown asset served")
	}
	res := b.get(t, "/pay/nothing/here")
	if res.status != http.StatusNotFound || !strings.Contains(res.body, "Página não encontrada") {
		t.Errorf("unknown page: %d", res.status)
	}
	checkSecurityHeaders(t, res.header)
}

// A method a page does not take is a 405 whose Allow lists every method
// its address takes, and whose page says so (not "not found").
func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for path, allow := range map[string]string{
		b.offerPath():                             "GET, HEAD, POST",
		"/checkout/bills/" + testOfferID:          "GET, HEAD",
		"/checkout/bills/" + testOfferID + "/pix": "POST",
	} {
		for _, method := range []string{http.MethodPut, http.MethodDelete, http.MethodOptions} {
			res := b.do(t, method, path, nil)
			if res.status != http.StatusMethodNotAllowed || res.header.Get("Allow") != allow {
				t.Errorf("%s %s: %d, Allow %q, want %q", method, path, res.status, res.header.Get("Allow"), allow)
			}
			if !strings.Contains(res.body, "Operação não permitida") || strings.Contains(res.body, "Página não encontrada") {
				t.Errorf("%s %s: the page does not say the operation is not allowed", method, path)
			}
		}
	}
}

// A first bill charged for a card and never paid lapses at its due date:
// the page says so and offers nothing, before the sweep cancels it.
func TestCheckoutLapsedFirstBill(t *testing.T) {
	t.Parallel()
	b := setup(t)
	checkout := b.buy(t, testFinanced+":credit_card")
	first := b.onlyOrder(t).Billings[0].Bills[0]
	b.clock.Set(first.DueDate.Add(-time.Minute))
	if page := b.get(t, checkout); !strings.Contains(page.body, "card_number") {
		t.Fatal("no card form before the due date")
	}
	b.clock.Set(first.DueDate)
	page := b.get(t, checkout)
	if !strings.Contains(page.body, "O prazo para pagar esta cobrança acabou") || strings.Contains(page.body, "<form") {
		t.Fatalf("lapsed:\n%s", page.body)
	}
	// No bank will tell of a payment: the page does not wait for one (a
	// review: it said a payment made in time would be confirmed, and
	// reloaded itself every few seconds).
	if body := html.UnescapeString(page.body); !strings.Contains(body, lapsedWithoutNotice) || strings.Contains(body, "data-refresh") {
		t.Fatalf("a card first bill lapsed waits for a bank's notice:\n%s", body)
	}
}

// A first bill charged as a boleto is payable through the end of its due
// day moved to a business day; in the settlement grace after it no Pix is
// issued for it (it would expire before it was issued), so its checkout
// offers none: the button led to "a cobrança mudou enquanto você pagava"
// and the same page again. Its boleto is still shown.
func TestCheckoutOffersNoPixInAFirstBoletosGrace(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.firstBoletoWithItsGrace(t)
	checkout := parcela.Links{}.CheckoutURL(first.ID, first.AuthenticationCode)

	b.clock.Set(time.Date(2026, time.March, 9, 23, 59, 59, 999_000_000, parcela.SaoPaulo))
	if body := b.get(t, checkout).body; !strings.Contains(body, "Pagar com Pix") {
		t.Fatal("no Pix offered in the last millisecond of the boleto's last payable day")
	}
	b.clock.Set(time.Date(2026, time.March, 10, 0, 0, 0, 0, parcela.SaoPaulo))
	body := html.UnescapeString(b.get(t, checkout).body)
	if strings.Contains(body, "Pagar com Pix") {
		t.Error("a Pix offered in the boleto's settlement grace")
	}
	if !strings.Contains(body, formatLinha(*first.Payments[0].Barcode)) {
		t.Error("the live boleto is not shown in its grace")
	}
}

// partlyPaidCheckout buys the upfront configuration by Pix, has its Pix
// receive received cents, and returns the bill's checkout and its page as
// text.
func (b *bundle) partlyPaidCheckout(t *testing.T, received int64) (checkout, body string) {
	t.Helper()
	b.buy(t, testUpfront+":pix")
	bill := b.onlyOrder(t).Billings[0].Bills[0]
	b.store.mu.Lock()
	b.store.payments[bill.Payments[0].ID].PaidAmountCents = received
	b.store.mu.Unlock()
	checkout = parcela.Links{}.CheckoutURL(bill.ID, bill.AuthenticationCode)
	return checkout, html.UnescapeString(b.get(t, checkout).body)
}

// A bill whose payment received part of its amount asks for the rest: the
// page shows what was received, and its total, the card's button and its
// installments are what a card attempt charges.
func TestCheckoutAfterAPartialSettlement(t *testing.T) {
	t.Parallel()
	b := setup(t)
	checkout, body := b.partlyPaidCheckout(t, 50_000) // of 199_000
	for _, want := range []string{"Valor original</th><td class=\"num\">R$\u00a01.990,00", "Já recebido</th><td class=\"num\">−R$\u00a0500,00",
		"Total</th><td class=\"num total\">R$\u00a01.490,00", "Pagar R$\u00a01.490,00 no cartão", "1× de R$\u00a01.490,00 (à vista)",
		"2× de R$\u00a0745,00 sem juros"} {
		if !strings.Contains(body, want) {
			t.Errorf("checkout lacks %q", want)
		}
	}
	b.postCheckout(t, checkout, "card", card("4111111111111111", "123", 2))
	paid := b.onlyOrder(t).Billings[0].Bills[0]
	if last := paid.Payments[len(paid.Payments)-1]; paid.Status != parcela.BillPaid || last.Method != parcela.MethodCreditCard || last.AmountCents != 149_000 {
		t.Fatalf("bill %s, card payment %+v", paid.Status, last)
	}
}

// A late installment whose boleto (carrying its fine and interest)
// received more than the bill's original amount, though less than the
// boleto's, and then expired with nothing issued after it (the provider
// down at the re-issue) still owes the rest: its checkout shows the
// penalty accrued and asks for what is left, as the boleto issued next
// would, and its card button and installments are that amount.
func TestCheckoutLateBillPartlyPaidThenExpired(t *testing.T) {
	t.Parallel()
	b := setup(t)
	second, boleto := b.firstInstallmentBoleto(t)
	// Re-issued late (as the sweep does), it carried the penalty at its
	// due date; it received the original amount and R$ 1,00 more, then
	// expired.
	late := second.EffectiveDueDate.Add(3 * 24 * time.Hour)
	b.clock.Set(late)
	b.store.mu.Lock()
	bill := b.store.bills[second.ID]
	bill.Status = parcela.BillOverdue
	// The seller takes cards for installments too.
	bill.Billing.PaymentConfiguration.PaymentMethods = []string{parcela.MethodBoleto, parcela.MethodCreditCard}
	boleto.AmountCents = bill.Penalty(late, b.company).Total(bill.AmountCents)
	boleto.PaidAmountCents = bill.AmountCents + 100
	boleto.ExpiresAt = late.Add(time.Hour)
	b.store.mu.Unlock()
	b.clock.Set(late.Add(2 * time.Hour))
	b.store.mu.Lock()
	boleto.Status = parcela.PaymentExpired
	second = b.store.billCopy(bill, false)
	b.store.mu.Unlock()

	page := b.get(t, parcela.Links{}.CheckoutURL(second.ID, second.AuthenticationCode))
	if page.status != http.StatusOK {
		t.Fatalf("checkout: %d\n%s", page.status, page.body)
	}
	now := b.clock.Now()
	pen := second.Penalty(now, b.company)
	if pen.FineCents == 0 || pen.InterestCents == 0 {
		t.Fatalf("penalty %+v of a late bill with no live payment", pen)
	}
	owed := pen.Total(second.AmountCents) - (second.AmountCents + 100)
	if got := second.Outstanding(now, b.company); got != owed {
		t.Fatalf("outstanding %d, want %d", got, owed)
	}
	body := html.UnescapeString(page.body)
	for _, want := range []string{"Multa por atraso", brl(pen.FineCents), brl(pen.InterestCents), "Já recebido</th><td class=\"num\">−" + brl(second.AmountCents+100),
		"Total</th><td class=\"num total\">" + brl(owed), "Pagar " + brl(owed) + " no cartão", "1× de " + brl(owed) + " (à vista)"} {
		if !strings.Contains(body, want) {
			t.Errorf("checkout lacks %q", want)
		}
	}
}

// A bill left owing R$ 0,01 (its Pix paid all but a cent) offers the card
// in one installment only: never installments of R$ 0,00.
func TestCheckoutOwingACent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	checkout, body := b.partlyPaidCheckout(t, 198_999) // of 199_000
	for _, want := range []string{"Total</th><td class=\"num total\">R$\u00a00,01", "Pagar R$\u00a00,01 no cartão", "1× de R$\u00a00,01 (à vista)"} {
		if !strings.Contains(body, want) {
			t.Errorf("checkout lacks %q", want)
		}
	}
	if strings.Contains(body, "R$\u00a00,00") || strings.Contains(body, "2×") {
		t.Errorf("checkout offers installments of nothing:\n%s", body)
	}
	if res := b.postCheckout(t, checkout, "card", card("4111111111111111", "123", 2)); res.status != http.StatusUnprocessableEntity {
		t.Fatalf("2 installments of a cent: %d", res.status)
	}
}

// A Pix that expired with the time to pay its order's first bill says it
// expired, not to make a new one "below", where nothing is offered since
// the bill can no longer be paid.
func TestCheckoutExpiredPixOfALapsedBill(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.buy(t, testUpfront+":pix")
	bill := b.onlyOrder(t).Billings[0].Bills[0]
	p := bill.Payments[0]
	b.clock.Set(p.ExpiresAt.Add(time.Minute))
	if !b.clock.Now().After(bill.DueDate) {
		t.Fatalf("the Pix expires at %s, before the bill is due %s", p.ExpiresAt, bill.DueDate)
	}
	body := html.UnescapeString(b.get(t, paymentTarget(bill.ID, bill.AuthenticationCode, p.ID, "", "pagamento")).body)
	if !strings.Contains(body, "O prazo para pagar esta cobrança acabou") || !strings.Contains(body, "Pagamento expirado") {
		t.Fatalf("checkout of a lapsed bill:\n%s", body)
	}
	if strings.Contains(body, "Gere um novo abaixo") || strings.Contains(body, "<form") {
		t.Error("a lapsed bill's checkout tells the payer to make a new code below")
	}
}

// An installment's boleto that expired unpaid leaves the bill payable: its
// checkout says to make a new one below, and offers it.
func TestCheckoutExpiredBoletoOfAPayableBill(t *testing.T) {
	t.Parallel()
	b := setup(t)
	second, boleto := b.firstInstallmentBoleto(t)
	b.clock.Set(boleto.ExpiresAt.Add(time.Minute))
	body := html.UnescapeString(b.get(t, paymentTarget(second.ID, second.AuthenticationCode, boleto.ID, "", "pagamento")).body)
	if !strings.Contains(body, "Pagamento expirado") || !strings.Contains(body, "Este código expirou. Gere um novo abaixo.") ||
		!strings.Contains(body, "Pagar com boleto") {
		t.Fatalf("checkout of a payable bill whose boleto expired:\n%s", body)
	}
}

// A checkout with a Pix or boleto to pay has the script check for its
// payment; without the script it does not reload, which would wipe a card
// being typed on it, and says how to look instead (a link to itself, which
// the script hides): a payer back from the bank's app without the script
// read the code still due, and nothing said how to see it paid.
func TestCheckoutWaitingChecksByScriptOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	checkout := b.buy(t, testFinanced+":credit_card")
	if page := b.get(t, checkout); strings.Contains(page.body, "data-refresh") {
		t.Fatal("a checkout with nothing issued waits for a payment")
	}
	issued := b.postCheckout(t, checkout, "pix", url.Values{})
	page := b.get(t, issued.header.Get("Location"))
	if !strings.Contains(page.body, `data-refresh="1"`) || strings.Contains(page.body, `http-equiv="refresh"`) {
		t.Fatalf("checkout with a live Pix:\n%s", page.body)
	}
	const look = `<p class="js-hide refresh-note"><a href="">Já pagou? Atualize a página</a>`
	if !strings.Contains(page.body, look) {
		t.Errorf("checkout with a live Pix says nothing of looking for its payment without the script:\n%s", page.body)
	}
	// Shown again by a post (a card refused for its form), its address
	// is the post's, which the script could not fetch.
	res := b.postCheckout(t, issued.header.Get("Location"), "card", card("4111", "123", 1))
	if res.status != http.StatusUnprocessableEntity || !strings.Contains(res.body, "Pix copia e cola") || strings.Contains(res.body, "data-refresh") {
		t.Fatalf("card refused for its form: %d, checks for the payment: %v", res.status, strings.Contains(res.body, "data-refresh"))
	}
	if strings.Contains(res.body, look) {
		t.Error("a page at a post's address links to itself to look for the payment")
	}
}

// A bolepix boleto's box, which holds the boleto and the Pix that pays it,
// is named for both: it was named "Pagamento com Pix" alone.
func TestCheckoutBolepixBoxName(t *testing.T) {
	t.Parallel()
	b := setup(t)
	second, _ := b.firstInstallmentBoleto(t)
	body := html.UnescapeString(b.get(t, parcela.Links{}.CheckoutURL(second.ID, second.AuthenticationCode)).body)
	if !strings.Contains(body, `<section class="pay-box" aria-label="Pagamento com boleto ou Pix">`) || !strings.Contains(body, "Linha digitável") ||
		!strings.Contains(body, "Pix copia e cola") {
		t.Fatalf("bolepix checkout:\n%s", body)
	}
}

// A Pix that received part of its amount is shown for what is left to pay
// with it, saying what its code carries and what it received, where the
// page showed the code's whole amount above it as what to pay; its own
// page says the same. A Pix beside a boleto that received part of the
// bill is shown for no more than the bill owes.
func TestPartlyPaidCodeShowsWhatRemains(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, body := b.partlyPaidCheckout(t, 50_000) // of 199_000
	for _, want := range []string{`<p class="pay-amount">R$` + "\u00a0" + `1.490,00</p>`,
		"Este código foi emitido para R$\u00a01.990,00 e já recebeu R$\u00a0500,00: falta pagar R$\u00a01.490,00."} {
		if !strings.Contains(body, want) {
			t.Errorf("checkout lacks %q", want)
		}
	}
	if strings.Contains(body, `<p class="pay-amount">R$`+"\u00a0"+`1.990,00</p>`) {
		t.Error("checkout asks for the code's whole amount")
	}
	bill := b.onlyOrder(t).Billings[0].Bills[0]
	pix := b.get(t, parcela.Links{}.PaymentURL(bill.Payments[0].ID))
	if page := html.UnescapeString(pix.body); !strings.Contains(page, `<p class="pay-amount">R$`+"\u00a0"+`1.490,00</p>`) {
		t.Errorf("the Pix's own page does not ask for what remains:\n%s", page)
	}
	// Another payment received part of the bill: the Pix shows what the
	// bill still owes.
	b.store.mu.Lock()
	b.store.payments[bill.Payments[0].ID].PaidAmountCents = 0
	b.store.mu.Unlock()
	b.boletoPaidInPart(t, bill, 199_000, 9_000)
	body = html.UnescapeString(b.get(t, parcela.Links{}.CheckoutURL(bill.ID, bill.AuthenticationCode)).body)
	if want := "Este código foi emitido para R$\u00a01.990,00: falta pagar R$\u00a01.900,00."; !strings.Contains(body, want) {
		t.Errorf("checkout lacks %q", want)
	}
}

// A late bill's live boleto, priced with the interest to its due date days
// ahead and paid nothing, is shown for its whole amount, without a note:
// its code pays nothing less, though the bill owes less today.
func TestLateBoletoShowsItsAmount(t *testing.T) {
	t.Parallel()
	b := setup(t)
	second, _ := b.firstInstallmentBoleto(t)
	now := second.EffectiveDueDate.Add(5 * 24 * time.Hour)
	b.clock.Set(now)
	b.store.mu.Lock()
	bill := b.store.bills[second.ID]
	bill.Status = parcela.BillOverdue
	due := parcela.EndOfDay(now.Add(72 * time.Hour))
	amount := bill.Penalty(due, b.company).Total(bill.AmountCents)
	late, err := b.store.issue(bill, parcela.MethodBoleto, amount, due, false)
	b.store.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	owes := second.Penalty(now, b.company).Total(second.AmountCents)
	if owes >= late.AmountCents {
		t.Fatalf("the bill owes %d today, not less than its boleto's %d", owes, late.AmountCents)
	}
	body := html.UnescapeString(b.get(t, parcela.Links{}.CheckoutURL(second.ID, second.AuthenticationCode)).body)
	if want := `<p class="pay-amount">` + brl(late.AmountCents) + `</p>`; !strings.Contains(body, want) || strings.Contains(body, "pay-note") {
		t.Errorf("checkout lacks %q, or notes a rest:\n%s", want, body)
	}
}

// A card form whose total is missing, zero, negative or no number (a
// tampered or truncated post) charges nothing either: the page is shown
// again with what the bill owes now. Read as 0, "no total shown", it
// charged the bill's late amount, which the payer never saw.
func TestCheckoutCardWithoutAReadableTotalChargesNothing(t *testing.T) {
	t.Parallel()
	for _, sent := range []string{"", "0", "-1", "-9223372036854775808", "abc", "12.5", "9223372036854775808"} {
		t.Run(sent, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			second, checkout := b.secondInstallmentByCard(t)
			b.clock.Set(second.EffectiveDueDate.Add(-time.Minute))
			page := b.get(t, checkout)
			b.clock.Set(second.EffectiveDueDate.Add(2 * time.Minute))
			form := card("4111111111111111", "123", 1)
			form.Set("card_amount", sent)
			u, _ := url.Parse(checkout)
			res := b.post(t, u.Path+"/card", tokens(t, page.body, withCode(form, u)))
			b.store.mu.Lock()
			bill := b.store.billCopy(b.store.bills[second.ID], false)
			b.store.mu.Unlock()
			for _, p := range bill.Payments {
				if p.Method == parcela.MethodCreditCard {
					t.Fatalf("card_amount %q: the card was charged %d cents, a total the page never showed", sent, p.AmountCents)
				}
			}
			owed := bill.Outstanding(b.clock.Now(), b.company)
			if res.status != http.StatusConflict || hiddenValue(res.body, "card_amount") != itoa(int(owed)) {
				t.Fatalf("card_amount %q: %d, want 409 showing %d\n%s", sent, res.status, owed, res.body)
			}
		})
	}
}

// A bill whose only method is a card, opened on a listener no acquirer
// serves (bought while one did), says it cannot be paid here now: its
// checkout showed the amount and nothing to pay with, nor why.
func TestCheckoutCardOnlyBillWithoutACardDoorSaysWhy(t *testing.T) {
	t.Parallel()
	b := setup(t)
	checkout := b.buyCardOnly(t)
	if page := b.get(t, checkout); !strings.Contains(page.body, `name="card_number"`) {
		t.Fatalf("with an acquirer, no card form:\n%s", page.body)
	}
	d := b.deps
	d.CardCharges = nil
	b.server.Config.Handler = New(d)
	page := b.get(t, checkout)
	body := html.UnescapeString(page.body)
	if page.status != http.StatusOK || !strings.Contains(body, noMethodHere) || strings.Contains(body, `name="card_number"`) {
		t.Fatalf("status %d, the checkout of a card-only bill without an acquirer:\n%s", page.status, body)
	}
}

// Past its effective due date a boleto first bill is still payable through
// its settlement grace, and its order waits for the bank's notice: the
// checkout names the boleto's last day. It said "Pagável até" the day
// before, beside "A vencer", and offered the boleto.
func TestCheckoutFirstBillInItsBoletosGrace(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.firstBoletoWithItsGrace(t) // due Sunday 8 March 2026, payable through Monday 9, the grace Tuesday 10
	b.clock.Set(time.Date(2026, 3, 10, 10, 0, 0, 0, parcela.SaoPaulo))
	body := html.UnescapeString(b.get(t, parcela.Links{}.CheckoutURL(first.ID, first.AuthenticationCode)).body)
	if want := "<dt>Pagável até</dt><dd>10/03/2026 (prazo do boleto)</dd>"; !strings.Contains(body, want) || strings.Contains(body, "09/03/2026 (próximo dia útil)") {
		t.Errorf("checkout in the boleto's grace lacks %q:\n%s", want, body)
	}
}

// firstBoletoWithItsGrace buys the upfront configuration by boleto, due
// Sunday 8 March 2026 at 10:00, and stores its bill's effective due date
// and its boleto's expiry as the charge does: payable through Monday 9,
// expiring at the end of Tuesday 10 (the company's settlement grace).
func (b *bundle) firstBoletoWithItsGrace(t testing.TB) *parcela.Bill {
	t.Helper()
	b.buy(t, testUpfront+":boleto")
	first := b.onlyOrder(t).Billings[0].Bills[0]
	b.store.mu.Lock()
	defer b.store.mu.Unlock()
	b.store.bills[first.ID].EffectiveDueDate = parcela.BoletoPayableUntil(first.DueDate)
	b.store.payments[first.Payments[0].ID].ExpiresAt = parcela.BoletoExpiry(first.DueDate, b.company.BoletoGraceBusinessDays)
	return first
}

// buyCardOnly adds to the offer an upfront configuration whose only
// method is a card, buys it, and returns the bill's checkout.
func (b *bundle) buyCardOnly(t *testing.T) string {
	t.Helper()
	b.store.mu.Lock()
	b.offer.PaymentConfigurations = append(b.offer.PaymentConfigurations, &parcela.PaymentConfiguration{ID: testCardOnly, OfferID: testOfferID,
		Position: 2, PaymentType: parcela.Upfront, PaymentMethods: []string{"credit_card"}, AllowedDownPaymentMethods: []string{},
		Availability: "enabled", ExpiresIn: 72, MaxInstallments: 1, MinInstallmentCents: 5000})
	b.store.mu.Unlock()
	return b.buy(t, testCardOnly+":credit_card")
}
