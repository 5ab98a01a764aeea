package web

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"parcela"
)

// The payment choices of an offer and the plan each gives. Every number is
// the domain's: a preview is planned by PlanCharge (PlanCardCharge for a
// card) on the very request the purchase sends, so what the page shows is
// what the charge creates.

// defaultDueDay is the due day offered first.
const defaultDueDay = 10

// optionGroup is one payment configuration on the offer page.
type optionGroup struct {
	Config   *parcela.PaymentConfiguration
	Financed bool
	Title    string
	Choices  []choice
	// Financed only: the counts that pass the charge's rules, the due days,
	// the choice shown, and its plan.
	Installments []installmentChoice
	Chosen       int
	DueDay       int
	Plan         *planView
	PlanURL      string
	// Digest fingerprints the plan shown (financed) or the upfront amount,
	// sent back with the purchase.
	Digest string
	// The form's errors on the choice and the plan's controls.
	OptionError, InstallmentsError, DueDayError string
}

// choice is one radio button: a configuration and the method of its first
// bill, as "configuration-id:method".
type choice struct {
	Value, Label, Detail string
	Checked              bool
}

type installmentChoice struct {
	Count    int
	Label    string
	Selected bool
}

// planView is a plan as the customer reads it.
type planView struct {
	Bills         []planBill
	TotalCents    int64
	InterestCents int64
	FeeCents      int64
	InterestRate  parcela.Rate
	CET           *parcela.Rate // the effective annual cost; nil when nothing is financed
}

type planBill struct {
	Label       string
	DueDate     string // the day (a Pix or card down payment's with its hours after the purchase) as shown; an option group is kept by what it shows
	AmountCents int64
	First       bool
}

// signature is the customer's consent record sent with a charge.
type signature struct{ remoteIP, userAgent string }

// chargeRequest is the charge the page sends for a choice.
func chargeRequest(configID, method string, installments, dueDay int, sig signature) parcela.ChargeRequest {
	var r parcela.ChargeRequest
	r.PaymentConfigurationID, r.Installments, r.DueDay = &configID, &installments, &dueDay
	r.Payment = &struct {
		PaymentMethod *string `json:"payment_method"`
	}{&method}
	r.Signature = &struct {
		RemoteIP  *string `json:"remote_ip"`
		UserAgent *string `json:"user_agent"`
	}{&sig.remoteIP, &sig.userAgent}
	return r
}

// previewBirthdate stands for the customer in a preview, made before the
// birthdate is typed: the plan does not depend on who buys, but financing
// is refused to minors, so previews are made for an adult and the purchase
// is checked with the birthdate typed.
const previewBirthdate = "1970-01-01"

// planFor plans a charge of order o as the purchase would.
func planFor(req parcela.ChargeRequest, o *parcela.Order, c *parcela.Company, now time.Time) (*parcela.ChargePlan, error) {
	if req.Payment != nil && req.Payment.PaymentMethod != nil && *req.Payment.PaymentMethod == parcela.MethodCreditCard {
		return parcela.PlanCardCharge(req, o, c, now)
	}
	return parcela.PlanCharge(req, o, c, now, "")
}

// splitOption reads "configuration-id:method".
func splitOption(v string) (configID, method string) {
	configID, method, _ = strings.Cut(v, ":")
	return configID, method
}

// optionGroups lists the offer's enabled configurations with their choices
// and, for financed ones, the plan of the chosen installments and due day.
// Card choices are left out when cards cannot be charged here.
func optionGroups(offer *parcela.Offer, c *parcela.Company, f offerForm, sig signature, now time.Time, planURL string, cards bool) []optionGroup {
	var groups []optionGroup
	order := &parcela.Order{Offer: offer, CustomerBirthdate: previewBirthdate}
	for _, pc := range offer.PaymentConfigurations {
		if pc.Availability != "enabled" {
			continue
		}
		g := optionGroup{Config: pc, Financed: pc.PaymentType == parcela.Financed}
		if !g.Financed {
			g.Title = "À vista"
			for _, m := range pc.PaymentMethods {
				if m == parcela.MethodCreditCard && !cards {
					continue
				}
				p, err := planFor(chargeRequest(pc.ID, m, 1, defaultDueDay, sig), order, c, now)
				if err != nil {
					continue
				}
				g.Choices = append(g.Choices, upfrontChoice(pc, c, m, p))
				g.Digest = planDigest(p.Schedule)
			}
		} else {
			g.financed(order, c, f, sig, now, planURL, cards)
		}
		if len(g.Choices) > 0 {
			groups = append(groups, g)
		}
	}
	checkChosen(groups, f.Option)
	return groups
}

func upfrontChoice(pc *parcela.PaymentConfiguration, c *parcela.Company, method string, p *parcela.ChargePlan) choice {
	ch := choice{Value: pc.ID + ":" + method, Label: "À vista no " + methodNames[method] + " — " + brl(p.Schedule.TotalCents)}
	switch method {
	case parcela.MethodPix:
		ch.Label = "Pix à vista — " + brl(p.Schedule.TotalCents)
		ch.Detail = "QR Code e código copia e cola na hora; confirmação em instantes."
	case parcela.MethodBoleto:
		ch.Label = "Boleto à vista — " + brl(p.Schedule.TotalCents)
		ch.Detail = "Pague em qualquer banco ou app; a confirmação leva até 2 dias úteis."
	case parcela.MethodCreditCard:
		ch.Label = "Cartão de crédito — " + brl(p.Schedule.TotalCents)
		ch.Detail = "Em 1 vez ou parcelado sem juros no cartão, na próxima tela."
		if p.Schedule.TotalCents < 2 || (c != nil && min(c.MaxInstallments, parcela.MaxCardInstallments) < 2) {
			// Not split: one installment is all the checkout will offer.
			ch.Detail = "Em 1 vez no cartão, na próxima tela."
		}
	}
	if p.Schedule.RegistrationFeeCents > 0 {
		ch.Detail += " Inclui taxa de matrícula de " + brl(p.Schedule.RegistrationFeeCents) + "."
	}
	return ch
}

// financed fills a financed group: its down payment choices, every count
// of installments the charge would accept, and the plan of the chosen one.
func (g *optionGroup) financed(order *parcela.Order, c *parcela.Company, f offerForm, sig signature, now time.Time, planURL string, cards bool) {
	pc := g.Config
	g.Title = "Parcelado no boleto"
	if pc.FinancedType != nil && *pc.FinancedType == "bolepix" {
		g.Title = "Parcelado no boleto com Pix"
	}
	g.PlanURL = planURL
	g.DueDay = atoiOr(f.DueDay[pc.ID], defaultDueDay)
	if g.DueDay < 1 || g.DueDay > 31 {
		// Not a day of the list (a form posted by hand): no plan falls due
		// on it, and the group would vanish with the error beside it.
		g.DueDay = defaultDueDay
	}
	method := ""
	if id, m := splitOption(f.Option); id == pc.ID && slices.Contains(pc.AllowedDownPaymentMethods, m) {
		method = m
	}
	if method == "" && len(pc.AllowedDownPaymentMethods) > 0 {
		method = pc.AllowedDownPaymentMethods[0]
	}
	limit := min(pc.MaxInstallments, c.MaxInstallments)
	want := atoiOr(f.Installments[pc.ID], 0)
	counts := make([]int, 0, max(0, limit-1))
	for n := 2; n <= limit; n++ {
		counts = append(counts, n)
	}
	plans := map[int]*parcela.ChargePlan{}
	byCard := method == parcela.MethodCreditCard
	for i, p := range parcela.PlanCounts(chargeRequest(pc.ID, method, 0, g.DueDay, sig), order, c, now, counts, byCard, want) {
		if p == nil {
			continue
		}
		plans[counts[i]] = p
		g.Installments = append(g.Installments, installmentChoice{Count: counts[i], Label: installmentLabel(p.Schedule)})
	}
	if len(g.Installments) == 0 {
		return
	}
	if _, ok := plans[want]; !ok {
		want = g.Installments[len(g.Installments)-1].Count
	}
	g.Chosen = want
	for i := range g.Installments {
		g.Installments[i].Selected = g.Installments[i].Count == want
	}
	byBoletoOnly := true // every down payment offered is a boleto, payable through its day's end
	for _, m := range pc.AllowedDownPaymentMethods {
		if m == parcela.MethodCreditCard && !cards {
			continue
		}
		byBoletoOnly = byBoletoOnly && m == parcela.MethodBoleto
		g.Choices = append(g.Choices, choice{Value: pc.ID + ":" + m, Label: "Entrada no " + methodInSentence[m] + " + parcelas no boleto",
			Detail: downPaymentDetail(m, c)})
	}
	g.Plan = newPlanView(plans[want], pc, byBoletoOnly)
	g.Digest = planDigest(plans[want].Schedule)
}

// methodInSentence names a method mid-sentence.
var methodInSentence = map[string]string{parcela.MethodPix: "Pix", parcela.MethodBoleto: "boleto", parcela.MethodCreditCard: "cartão de crédito"}

func downPaymentDetail(method string, c *parcela.Company) string {
	switch method {
	case parcela.MethodPix:
		return "Pague a entrada com Pix agora; as parcelas chegam por boleto, " + issueLead(c) + "."
	case parcela.MethodCreditCard:
		return "Pague a entrada com cartão de crédito na próxima tela; as parcelas chegam por boleto."
	}
	return "A entrada é um boleto; as parcelas também, " + issueLead(c) + "."
}

// issueLead says when an installment's boleto is issued: the company's
// installment_issue_days before its due date, which the issue sweep reads.
func issueLead(c *parcela.Company) string {
	switch {
	case c == nil || c.InstallmentIssueDays < 1:
		return "antes de cada vencimento"
	case c.InstallmentIssueDays == 1:
		return "1 dia antes de cada vencimento"
	}
	return itoa(c.InstallmentIssueDays) + " dias antes de cada vencimento"
}

// checkChosen marks the chosen radio button, or the first one.
func checkChosen(groups []optionGroup, chosen string) {
	for gi := range groups {
		for ci := range groups[gi].Choices {
			if groups[gi].Choices[ci].Value == chosen {
				groups[gi].Choices[ci].Checked = true
				return
			}
		}
	}
	if len(groups) > 0 {
		groups[0].Choices[0].Checked = true
	}
}

// installmentLabel sums a plan up in one line: "5× — entrada R$ 398,00 +
// 4× R$ 412,20", with any last installment that differs by its cents.
func installmentLabel(s parcela.Schedule) string {
	n := len(s.Bills)
	label := strconv.Itoa(n) + "× — entrada " + brl(s.Bills[0].AmountCents)
	rest := s.Bills[1:]
	for i := 0; i < len(rest); {
		j := i
		for j < len(rest) && rest[j].AmountCents == rest[i].AmountCents {
			j++
		}
		label += " + " + strconv.Itoa(j-i) + "× " + brl(rest[i].AmountCents)
		i = j
	}
	return label
}

// newPlanView shows plan p. Its down payment falls due the charge plus the
// configuration's hours: by Pix or card it lapses at that instant, so its
// row says so with the date ("até 08/03/2026, 72 h após a compra"), as
// the checkout and the order page name its time (dueWhen); by the date
// alone a buyer read the whole day to pay, and back at noon found the
// order canceled. The hours, not the time of day: the time moves with
// the minute the page is made, and a group is kept, and shown, through
// the day (TestOptionGroupsKeptThroughTheDay). Only when every down
// payment offered is a boleto, payable through its day's end, does the
// date stand alone; the row is not redrawn when the buyer picks another
// way to pay, so a boleto's buyer may be told of less time than there
// is, never more.
func newPlanView(p *parcela.ChargePlan, pc *parcela.PaymentConfiguration, byBoletoOnly bool) *planView {
	v := &planView{TotalCents: p.Schedule.TotalCents, FeeCents: p.Schedule.RegistrationFeeCents, InterestRate: pc.InterestRate,
		InterestCents: p.Schedule.TotalInterestCents, CET: p.Schedule.CETAnnualRate}
	for _, b := range p.Schedule.Bills {
		pb := planBill{DueDate: date(b.DueDate), AmountCents: b.AmountCents, First: b.Number == 0}
		if pb.First && !byBoletoOnly {
			pb.DueDate += ", " + itoa(pc.ExpiresIn) + " h após a compra"
		}
		if b.Number == 0 {
			pb.Label = "Entrada"
		} else {
			pb.Label = "Parcela " + strconv.Itoa(b.Number) + " de " + strconv.Itoa(len(p.Schedule.Bills)-1)
		}
		v.Bills = append(v.Bills, pb)
	}
	return v
}

func atoiOr(s string, def int) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return def
	}
	return n
}
