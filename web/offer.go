package web

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"parcela"
	"parcela/brcode"
)

// offerPage is the offer's purchase page.
type offerPage struct {
	Offer   *parcela.Offer
	Product *parcela.Product
	Company *parcela.Company
	Action  string
	Groups  []optionGroup
	Form    offerForm
	Errors  map[string]string
	Summary []errorLink // the errors in the form's order, each linking to its field
	General []string
	Notice  string
	Token   formToken
	Cities  []parcela.City
}

// unavailablePage says why an offer takes no orders.
type unavailablePage struct {
	Product *parcela.Product
	Heading string
	Message string
}

// loadOffer finds the path's offer with its product and company. It writes
// the page and returns nil when there is nothing to sell: 404 for an offer
// that does not exist here, 410 for one that no longer sells.
func (h *Handler) loadOffer(w http.ResponseWriter, r *http.Request) (*parcela.Offer, *parcela.Company) {
	offer, err := h.d.Checkout.PublicOffer(r.Context(), h.d.Environment, r.PathValue("slug"), r.PathValue("offer"))
	if parcela.ErrorCode(err) == parcela.ENOTFOUND {
		h.render(w, r, http.StatusNotFound, "unavailable", page{Title: "Oferta não encontrada",
			Content: unavailablePage{Heading: "Oferta não encontrada", Message: "Confira o link que você recebeu: esta oferta não existe."}})
		return nil, nil
	} else if err != nil {
		h.fail(w, r, err)
		return nil, nil
	}
	if offer.Product == nil || offer.Product.Company == nil {
		h.fail(w, r, parcela.Errorf(parcela.EINTERNAL, "offer %s came without its product and company", offer.ID))
		return nil, nil
	}
	c := offer.Product.Company
	if msg := unavailable(offer, h.d.Clock.Now(), h.d.CardCharges != nil); msg != "" {
		h.render(w, r, http.StatusGone, "unavailable", page{Title: offer.Product.Name, Company: c,
			Content: unavailablePage{Product: offer.Product, Heading: "Oferta indisponível", Message: msg}})
		return nil, nil
	}
	return offer, c
}

// unavailable says why the offer cannot be bought now, or "". A
// configuration paid by card alone is no way to pay without cards.
func unavailable(o *parcela.Offer, now time.Time, cards bool) string {
	if o.Sellable(now) == nil {
		for _, pc := range o.PaymentConfigurations {
			first := pc.PaymentMethods // what its first bill is paid with
			if pc.PaymentType == parcela.Financed {
				first = pc.AllowedDownPaymentMethods
			}
			if pc.Availability == "enabled" && (cards || slices.ContainsFunc(first, func(m string) bool { return m != parcela.MethodCreditCard })) {
				return ""
			}
		}
		return "Esta oferta está sem formas de pagamento no momento. Fale com o vendedor."
	}
	switch {
	case o.Availability != "enabled":
		return "Esta oferta não está mais disponível. Fale com o vendedor."
	case o.Product != nil && o.Product.Availability != "enabled":
		return "Este produto não está mais à venda. Fale com o vendedor."
	case o.ExpiresAt != nil && !now.Before(*o.ExpiresAt):
		return "As vendas desta oferta encerraram em " + dateTime(*o.ExpiresAt) + "."
	case o.Seats != nil && o.SeatsTaken >= *o.Seats:
		return "As vagas desta oferta esgotaram."
	}
	return "Esta oferta não está à venda no momento."
}

func (h *Handler) handleOffer(w http.ResponseWriter, r *http.Request) {
	offer, c := h.loadOffer(w, r)
	if offer == nil {
		return
	}
	f := offerForm{Installments: map[string]string{}, DueDay: map[string]string{}, PlanDigest: map[string]string{}}
	h.renderOffer(w, r, http.StatusOK, offer, c, f, nil, nil, "")
}

// handleBuy creates and charges the order, or shows the form again: with
// the cities of a newly chosen state and the plan of newly chosen options
// (the "update" button of browsers without JavaScript), or with its errors.
func (h *Handler) handleBuy(w http.ResponseWriter, r *http.Request) {
	if !h.parseForm(w, r) {
		return
	}
	offer, c := h.loadOffer(w, r)
	if offer == nil {
		return
	}
	f := parseOfferForm(r, offer)
	nonce, ok := h.csrf.verify(r)
	if !ok {
		h.renderOffer(w, r, http.StatusForbidden, offer, c, f, nil, nil, "Por segurança, confira os dados e envie de novo.")
		return
	}
	f.Nonce = nonce
	if r.PostFormValue("intent") == "update" {
		h.renderOffer(w, r, http.StatusOK, offer, c, f, nil, nil, "")
		return
	}
	sig := h.signature(r)
	now := h.d.Clock.Now()
	orderReq := f.orderRequest(offer.ID)
	charge, plan, fields := h.checkPurchase(offer, c, f, orderReq, sig, now)
	for _, input := range f.Cut {
		fields = append([]parcela.FieldError{{Field: fieldOfInput(input), Code: "too_long"}}, fields...)
	}
	if len(fields) > 0 {
		h.renderOffer(w, r, http.StatusUnprocessableEntity, offer, c, f, fields, nil, "")
		return
	}
	// The plan of an adult buyer is the one the page previewed for anyone.
	if planDigest(plan.Schedule) != f.PlanDigest[*charge.PaymentConfigurationID] {
		h.renderOffer(w, r, http.StatusOK, offer, c, f, nil, nil, planChangedNotice)
		return
	}
	// Compared again at the charge's own instant: the order is written
	// first, and a post checked at 23:59:59.990 could be charged after
	// midnight under the next day's plan.
	shown := f.PlanDigest[*charge.PaymentConfigurationID]
	charge.Expect = func(p *parcela.ChargePlan) error {
		if planDigest(p.Schedule) != shown {
			return errPlanChanged
		}
		return nil
	}
	key := formKey(nonce, orderReq)
	target, _, err := h.submissions.do(r.Context(), submissionKey(r, key), func() (string, error) {
		return h.purchase(r, offer, key, orderReq, charge)
	})
	var limited ordersLimited
	switch code := parcela.ErrorCode(err); {
	case err == nil:
		http.Redirect(w, r, target, http.StatusSeeOther)
	case errors.Is(err, errPlanChanged):
		h.renderOffer(w, r, http.StatusOK, offer, c, f, nil, nil, planChangedNotice)
	case errors.As(err, &limited):
		setRetryAfter(w, limited.until.Sub(h.d.Clock.Now()))
		h.renderOffer(w, r, http.StatusTooManyRequests, offer, c, f, nil, []string{"Foram feitos muitos pedidos a partir da sua conexão " +
			"na última hora. Por segurança, um novo pedido poderá ser feito a partir de " + dateTime(limited.until) +
			". Se você já fez o seu, fale com o vendedor."}, "")
	case code == parcela.EINVALID && notSellable(err):
		// The offer stopped selling after this post read it (disabled,
		// expired, sold out): shown as a GET would now show it.
		if offer, c = h.loadOffer(w, r); offer != nil {
			h.renderOffer(w, r, http.StatusUnprocessableEntity, offer, c, f, fieldsOf(err), nil, "")
		}
	case code == parcela.EINVALID:
		h.renderOffer(w, r, http.StatusUnprocessableEntity, offer, c, f, fieldsOf(err), nil, "")
	case code == parcela.ECONFLICT || code == parcela.EINVALIDSTATE:
		h.renderOffer(w, r, http.StatusConflict, offer, c, f, nil, []string{"Não foi possível concluir a compra agora. Confira os dados e tente de novo."}, "")
	default:
		h.fail(w, r, err)
	}
}

// errPlanChanged refuses a charge whose plan is not the one the page
// showed (ChargeRequest.Expect); the page is shown again with the new one.
var errPlanChanged = errors.New("the plan changed since the page showed it")

// planChangedNotice tells the payer the plan shown was not the one to be
// charged, and shows the new one.
const planChangedNotice = "Os valores do plano foram atualizados. Confira e finalize a compra."

// notSellable tells whether err refuses the order or its charge because
// the offer no longer sells.
func notSellable(err error) bool {
	return slices.ContainsFunc(fieldsOf(err), func(f parcela.FieldError) bool {
		return f.Code == "not_sellable" && (f.Field == "offer" || f.Field == "order.offer_id")
	})
}

// checkPurchase validates the whole form as the order and the charge will,
// so every error shows at once and no order is created for a form that
// cannot be charged.
func (h *Handler) checkPurchase(offer *parcela.Offer, c *parcela.Company, f offerForm, orderReq parcela.OrderRequest, sig signature, now time.Time) (parcela.ChargeRequest, *parcela.ChargePlan, []parcela.FieldError) {
	var fields []parcela.FieldError
	birthRefused := false
	if _, err := parcela.BuildOrder(orderReq, now); err != nil {
		fields = append(fields, fieldsOf(err)...)
		birthRefused = slices.ContainsFunc(fields, func(f parcela.FieldError) bool { return f.Field == "order.customer_birthdate" })
	}
	p, err := loadPlaces()
	if err != nil {
		fields = append(fields, parcela.FieldError{Field: "order.address.city_ibge_code", Code: "unavailable"})
	} else if _, ok := p.cities[f.State]; !ok {
		fields = append(fields, parcela.FieldError{Field: "state", Code: "required"})
	} else if f.City != "" && !p.cityIn(f.City, f.State) {
		fields = append(fields, parcela.FieldError{Field: "order.address.city_ibge_code", Code: "not_found"})
	} else if zip := brcode.NormalizeDigits(f.CEP); len(zip) == 8 && !parcela.ZipcodeInState(zip, f.State) {
		fields = append(fields, parcela.FieldError{Field: "order.address.zipcode", Code: "other_state"})
	}
	charge, ok := f.charge(offer, sig)
	if _, method := splitOption(f.Option); method == parcela.MethodCreditCard && h.d.CardCharges == nil {
		ok = false // no card door here: the choice was not offered
	}
	if !ok {
		return charge, nil, append(fields, parcela.FieldError{Field: "payment_configuration_id", Code: "required"})
	}
	birthdate := *orderReq.Order.CustomerBirthdate
	if !parcela.IsAdultAt(birthdate, now) {
		// An unknown or invalid birthdate has its own error: plan for an
		// adult so that only a real minor is told financing is refused.
		// A date the order refuses is no minor's either: one in the
		// future (2090 typed for 1990) was also told to pay upfront.
		if _, err := time.Parse(time.DateOnly, birthdate); err != nil || birthRefused {
			birthdate = previewBirthdate
		}
	}
	order := &parcela.Order{Offer: offer, CustomerBirthdate: birthdate}
	plan, err := planFor(charge, order, c, now)
	if err != nil {
		fs := fieldsOf(err)
		if fs == nil {
			fs = []parcela.FieldError{{Field: "payment.payment_method", Code: parcela.ErrorCode(err)}}
		}
		for _, f := range fs {
			if f.Field == "payment_configuration_id" && f.Code == "not_allowed" && !parcela.IsAdultAt(birthdate, now) {
				f.Code = "under_age"
				if !sellsUpfront(offer) {
					// "escolha pagar à vista" pointed at no choice.
					f.Code = "under_age_financed_only"
				}
			}
			fields = append(fields, f)
		}
	}
	return charge, plan, fields
}

// purchase creates the form's order, or finds the one an earlier post of
// the form created, and charges it with the Auth of the offer's company,
// as the API does. It returns where the customer goes next: the order's
// page, or the first bill's card form. An order an earlier post charged
// already (on any instance) is not charged again: the customer goes where
// that post sent them.
func (h *Handler) purchase(r *http.Request, offer *parcela.Offer, key string, orderReq parcela.OrderRequest, charge parcela.ChargeRequest) (string, error) {
	ctx := r.Context()
	a := parcela.Auth{CompanyID: offer.CompanyID, Environment: h.d.Environment}
	order, err := h.d.Orders.FormOrder(ctx, a, key)
	if parcela.ErrorCode(err) == parcela.ENOTFOUND {
		// A new order: counted against the address's orders of the hour.
		until, ok, twin, give, lerr := h.orders.take(ctx, h.clientAddr(r), key)
		if lerr != nil {
			h.logger(r).Warn("count a page order", "error", lerr.Error())
		}
		if !ok {
			give(ctx) // refused, it made no order: the next one counts from where it was
			// The other post of a double click, at the hour's last place,
			// may be making the form's order: its page, not a refusal, is
			// what the payer sees (the browser shows the last answer).
			if !twin {
				return "", ordersLimited{until}
			}
			if order, err = h.awaitFormOrder(ctx, a, key); err != nil {
				return "", ordersLimited{until}
			}
		} else {
			var created bool
			if order, created, err = h.d.Orders.CreateFormOrder(ctx, a, key, orderReq); !created {
				give(ctx)
			}
		}
	}
	if err != nil {
		return "", err
	}
	if order.Status != parcela.OrderPending {
		return purchaseTarget(order), nil
	}
	var charged *parcela.Order
	if *charge.Payment.PaymentMethod == parcela.MethodCreditCard {
		charged, err = h.d.CardCharges.ChargeOrderForCard(ctx, a, order.ID, charge)
	} else {
		charged, err = h.d.Orders.ChargeOrder(ctx, a, order.ID, charge)
	}
	if code := parcela.ErrorCode(err); code == parcela.EINVALIDSTATE || code == parcela.ECONFLICT {
		// Another post of this form charged it meanwhile.
		if fresh, rerr := h.d.Orders.Order(ctx, a, order.ID); rerr == nil && fresh.Status != parcela.OrderPending {
			return purchaseTarget(fresh), nil
		}
	}
	if err != nil {
		return "", err
	}
	return purchaseTarget(charged), nil
}

// ordersLimited refuses an order: the client's address made its orders of
// the hour (orderLimits), until then.
type ordersLimited struct{ until time.Time }

func (ordersLimited) Error() string {
	return "this address created its orders of the hour from the offer pages"
}

// purchaseTarget is where a purchase sends the customer: the card form of
// a first bill charged for a card and not yet paid or given a Pix or
// boleto, or else the order's page.
func purchaseTarget(o *parcela.Order) string {
	if first := firstBill(o); first != nil && o.Status == parcela.OrderInProgress && first.Status == parcela.BillPending && len(first.Payments) == 0 {
		// With the order's code: the card form links to the order's page,
		// and an approved card goes there.
		return parcela.Links{}.CheckoutURL(first.ID, first.AuthenticationCode) + "&order_code=" + url.QueryEscape(o.AccessCode) + "#cartao"
	}
	return parcela.Links{}.OrderURL(o.ID, o.AccessCode)
}

// firstBill is the first bill of the order's latest billing.
func firstBill(o *parcela.Order) *parcela.Bill {
	if len(o.Billings) == 0 {
		return nil
	}
	for _, b := range o.Billings[len(o.Billings)-1].Bills {
		if b.Number == 0 {
			return b
		}
	}
	return nil
}

// signature is the consent record of the request's customer
// (parcela.BrowserSignature).
func (h *Handler) signature(r *http.Request) signature {
	ip, ua := parcela.BrowserSignature(h.clientAddr(r), r.UserAgent())
	return signature{remoteIP: ip, userAgent: ua}
}

func (h *Handler) renderOffer(w http.ResponseWriter, r *http.Request, status int, offer *parcela.Offer, c *parcela.Company,
	f offerForm, fields []parcela.FieldError, general []string, notice string) {
	p, err := loadPlaces()
	if err != nil {
		h.fail(w, r, err)
		return
	}
	errs, more := formErrors(fields)
	action := parcela.Links{}.OfferURL(c.Slug, offer.ID)
	v := offerPage{
		Offer: offer, Product: offer.Product, Company: c, Action: action, Form: f, Errors: errs,
		General: append(general, more...), Notice: notice, Token: h.csrf.issueFor(w, r, h.secureCookies(r), f.Nonce),
		Cities: p.cities[f.State],
		Groups: optionGroups(offer, c, f, h.signature(r), h.d.Clock.Now(), action+"/plan", h.d.CardCharges != nil),
	}
	chosen, _ := splitOption(f.Option)
	for i := range v.Groups {
		v.Groups[i].OptionError = errs["option"]
		// The plan's errors are the chosen configuration's: beside its
		// controls, not every financed configuration's.
		if v.Groups[i].Config.ID == chosen {
			v.Groups[i].InstallmentsError, v.Groups[i].DueDayError = errs["installments"], errs["due_day"]
		}
	}
	v.Summary = errorSummary(errs, f.Option)
	h.render(w, r, status, "offer", page{Title: offer.Product.Name + " — " + c.Name, Company: c, Content: v})
}

// errorLink is an error of the form's summary and the id of its field.
type errorLink struct{ ID, Message string }

// formOrder is the offer form's inputs in the order they are shown.
var formOrder = []string{"option", "installments", "due_day", "name", "cpf", "birthdate", "email", "phone",
	"cep", "number", "street", "complement", "neighborhood", "state", "city"}

// errorSummary lists the form's errors in the order of their fields, each
// with the id of the element to go to; the plan's controls are the chosen
// configuration's.
func errorSummary(errs map[string]string, option string) []errorLink {
	configID, _ := splitOption(option)
	var links []errorLink
	for _, input := range formOrder {
		msg, ok := errs[input]
		if !ok {
			continue
		}
		id := "f-" + input
		switch input {
		case "option":
			id = "f-option-error"
		case "installments":
			id = "installments-" + configID
		case "due_day":
			id = "due-day-" + configID
		}
		links = append(links, errorLink{ID: id, Message: msg})
	}
	return links
}

// secureCookies tells whether the browser reached us over https.
func (h *Handler) secureCookies(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(h.d.Links.PublicURL, "https://")
}

// handlePlanPreview renders a financed configuration's plan for the
// installments and due day in the query, for the script that updates the
// page in place.
func (h *Handler) handlePlanPreview(w http.ResponseWriter, r *http.Request) {
	offer, c := h.loadOffer(w, r)
	if offer == nil {
		return
	}
	q := r.URL.Query()
	id, _ := splitOption(q.Get("option"))
	f := offerForm{Option: q.Get("option"), Installments: map[string]string{id: q.Get("installments")}, DueDay: map[string]string{id: q.Get("due_day")}}
	// Only the configuration asked about is planned.
	one := *offer
	one.PaymentConfigurations = slices.DeleteFunc(slices.Clone(offer.PaymentConfigurations), func(pc *parcela.PaymentConfiguration) bool { return pc.ID != id })
	for _, g := range optionGroups(&one, c, f, h.signature(r), h.d.Clock.Now(), "", h.d.CardCharges != nil) {
		if g.Config.ID == id && g.Financed {
			var buf bytes.Buffer
			if err := h.pages["offer"].ExecuteTemplate(&buf, "plan-preview", g); err != nil {
				h.fail(w, r, err)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			w.Write(buf.Bytes())
			return
		}
	}
	h.renderError(w, r, http.StatusNotFound)
}

// formOrderWait is how long a refused post of a double click waits for
// the order its other post is making.
const formOrderWait = 2 * time.Second

// awaitFormOrder looks for the order formKey's other post is making, every
// 50 ms for up to formOrderWait: not found then, the post is refused.
func (h *Handler) awaitFormOrder(ctx context.Context, a parcela.Auth, key string) (*parcela.Order, error) {
	ctx, cancel := context.WithTimeout(ctx, formOrderWait)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		order, err := h.d.Orders.FormOrder(ctx, a, key)
		if parcela.ErrorCode(err) != parcela.ENOTFOUND {
			return order, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-tick.C:
		}
	}
}

// sellsUpfront tells whether offer has an enabled upfront configuration,
// the choice a minor, refused financing, is pointed at.
func sellsUpfront(offer *parcela.Offer) bool {
	for _, pc := range offer.PaymentConfigurations {
		if pc.PaymentType == parcela.Upfront && pc.Availability == "enabled" {
			return true
		}
	}
	return false
}
