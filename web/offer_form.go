package web

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"parcela"
)

// offerForm is what the customer typed on the offer page, kept as typed so
// that a page with errors shows it back.
type offerForm struct {
	Name, CPF, Birthdate, Email, Phone                         string
	CEP, Street, Number, Complement, Neighborhood, State, City string
	Option                                                     string // "configuration-id:method"
	// By configuration id: the installments and due day chosen, and the
	// fingerprint of the plan the page showed for them.
	Installments, DueDay, PlanDigest map[string]string
	// Cut names the inputs cut at maxInputLen: refused as too long.
	Cut []string
	// Nonce is the form's, once its post verified it: the form shown again
	// keeps it (csrf.issueFor).
	Nonce string
}

// formKey names the order a purchase form creates (CreateFormOrder): its
// nonce, which only this browser's form carries, and the order it asks for.
// The same form sent again is the same order, charged or not; one sent
// with other customer data is another order.
func formKey(nonce string, req parcela.OrderRequest) string {
	body, _ := json.Marshal(req) // plain strings: it cannot fail
	h := sha256.New()
	h.Write([]byte("offer-form\x00" + nonce + "\x00"))
	h.Write(body)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// maxInputLen bounds what one input keeps, in characters as the domain
// counts its limits (255 at most): the domain refuses anything longer, and
// the page need not echo more. Cut in bytes, it shortened valid accented
// text and split a letter, which the domain then refused as not UTF-8.
const maxInputLen = 300

func parseOfferForm(r *http.Request, offer *parcela.Offer) offerForm {
	var cut []string
	v := func(name string) string {
		typed := r.PostFormValue(name)
		kept := parcela.CutText(typed, maxInputLen)
		if len(kept) < len(typed) {
			// Cut, it might pass where the whole is refused: the domain
			// trims the blanks at its ends, and "Maria", 300 spaces and
			// "Silva" was kept as "Maria" (an audit). Refused on a buy; and
			// ended with "…", which no limit of the domain's takes, so the
			// form shown again (the update button) is no way around it.
			cut = append(cut, name)
			kept += "…"
		}
		return kept
	}
	f := offerForm{
		Name: v("name"), CPF: v("cpf"), Birthdate: v("birthdate"), Email: v("email"), Phone: v("phone"),
		CEP: v("cep"), Street: v("street"), Number: v("number"), Complement: v("complement"), Neighborhood: v("neighborhood"),
		State: v("state"), City: v("city"), Option: v("option"),
		Installments: map[string]string{}, DueDay: map[string]string{}, PlanDigest: map[string]string{},
	}
	for _, pc := range offer.PaymentConfigurations {
		f.Installments[pc.ID] = v("installments." + pc.ID)
		f.DueDay[pc.ID] = v("due_day." + pc.ID)
		f.PlanDigest[pc.ID] = v("plan_digest." + pc.ID)
	}
	f.Cut = cut
	return f
}

// brDate is a date as Brazilians type it: 17/05/1990, 17-05-1990,
// 17.05.1990 or 17051990, and 5/3/1990 with a day or month of one digit
// between separators.
var brDate = regexp.MustCompile(`^(?:(\d{1,2})[/.-](\d{1,2})[/.-]|(\d{2})(\d{2}))(\d{4})$`)

// orderRequest is the API's order request for what was typed. The
// birthdate is typed day first and sent as ISO.
func (f offerForm) orderRequest(offerID string) parcela.OrderRequest {
	var req parcela.OrderRequest
	o := &req.Order
	birth := strings.TrimSpace(f.Birthdate)
	if m := brDate.FindStringSubmatch(birth); m != nil {
		day, month := m[1]+m[3], m[2]+m[4] // one pair matched, the other is empty
		birth = m[5] + "-" + twoDigits(month) + "-" + twoDigits(day)
	}
	o.OfferID, o.CustomerName, o.CustomerBirthdate = &offerID, ptr(f.Name), &birth
	o.CustomerDocument, o.Email, o.Phone = ptr(f.CPF), ptr(strings.TrimSpace(f.Email)), ptr(f.Phone)
	o.Address = &parcela.AddressInput{Zipcode: ptr(f.CEP), Street: ptr(f.Street), Number: ptr(f.Number), Complement: ptr(f.Complement),
		Neighborhood: ptr(f.Neighborhood), CityIBGECode: ptr(f.City)}
	return req
}

func ptr(s string) *string { return &s }

func twoDigits(s string) string {
	if len(s) == 1 {
		return "0" + s
	}
	return s
}

// charge is the charge the form asks for, and whether the option named one
// of the offer's enabled configurations.
func (f offerForm) charge(offer *parcela.Offer, sig signature) (parcela.ChargeRequest, bool) {
	id, method := splitOption(f.Option)
	for _, pc := range offer.PaymentConfigurations {
		if pc.ID != id || pc.Availability != "enabled" {
			continue
		}
		installments := 1
		if pc.PaymentType == parcela.Financed {
			installments = atoiOr(f.Installments[id], 0)
		}
		// No due day sent is the list's default; one sent that is no
		// number is out of the list (0), refused as 32 is.
		dueDay := defaultDueDay
		if s := strings.TrimSpace(f.DueDay[id]); s != "" {
			dueDay = atoiOr(s, 0)
		}
		return chargeRequest(id, method, installments, dueDay, sig), true
	}
	return parcela.ChargeRequest{}, false
}

// planDigest fingerprints what the plan box disclosed: the bills' amounts
// and due dates, and the plan's CET, interest, fee and total, so a
// purchase is sent only for the plan the customer saw. The CET counts
// days from the charge: a page seen before midnight and posted after it,
// the same bills due the same days (no interest, a fee), disclosed a CET
// the billing then did not carry.
func planDigest(s parcela.Schedule) string {
	h := sha256.New()
	var line []byte
	for _, b := range s.Bills { // "%d|%s|%d\n": number, date, cents
		line = strconv.AppendInt(line[:0], int64(b.Number), 10)
		line = append(append(line, '|'), date(b.DueDate)...)
		line = append(strconv.AppendInt(append(line, '|'), b.AmountCents, 10), '\n')
		h.Write(line)
	}
	cet := "-"
	if s.CETAnnualRate != nil {
		cet = s.CETAnnualRate.String()
	}
	// "cet|%s|%d|%d|%d\n": CET, interest, fee and total cents
	line = append(append(line[:0], "cet|"...), cet...)
	for _, c := range []int64{s.TotalInterestCents, s.RegistrationFeeCents, s.TotalCents} {
		line = strconv.AppendInt(append(line, '|'), c, 10)
	}
	h.Write(append(line, '\n'))
	return hex.EncodeToString(h.Sum(nil)[:8])
}
