package parcela

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
	"unicode"
)

// ChargeRequest is the body of POST /orders/{id}/charge (spec 4.1).
type ChargeRequest struct {
	PaymentConfigurationID *string `json:"payment_configuration_id"`
	DueDay                 *int    `json:"due_day"`
	Installments           *int    `json:"installments"`
	Payment                *struct {
		PaymentMethod *string `json:"payment_method"`
	} `json:"payment"`
	Signature *struct {
		RemoteIP  *string `json:"remote_ip"`
		UserAgent *string `json:"user_agent"`
	} `json:"signature"`
	// Expect, when set, refuses the plan the charge is made under with
	// its error: checked at the charge's own instant, so a page that
	// showed the payer a plan charges that plan or none. Checked by the
	// page before the charge (its order written meanwhile), a post at
	// 23:59:59.990 was charged at 00:00:00.010 under the next day's plan.
	Expect func(*ChargePlan) error `json:"-"`
}

// ChargePlan is a validated charge: the configuration chosen, the method of
// the first bill, the consent record and the schedule of bills.
type ChargePlan struct {
	Configuration *PaymentConfiguration
	Method        string
	DueDay        int
	Installments  int
	RemoteIP      string
	UserAgent     string
	Schedule      Schedule
	// FirstPaymentExpiresAt is when the first bill's payment expires: a Pix
	// at the bill's due instant, a boleto at its BoletoExpiry under the
	// company's grace.
	FirstPaymentExpiresAt time.Time
}

// MaxRemoteIPLength is the longest textual IP address (an IPv4-mapped IPv6
// address written in full).
const MaxRemoteIPLength = 45

// AdultAge is the age of civil capacity (Código Civil art. 5): a customer
// younger cannot sign a financing contract.
const AdultAge = 18

// IsAdultAt reports whether someone born on birthdate (YYYY-MM-DD) is at
// least AdultAge on now's São Paulo date. Someone born on 29 February comes
// of age on 1 March of a common year.
func IsAdultAt(birthdate string, now time.Time) bool {
	b, err := time.Parse(time.DateOnly, birthdate)
	if err != nil {
		return false
	}
	y, m, d := now.In(SaoPaulo).Date()
	return !time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Before(b.AddDate(AdultAge, 0, 0))
}

// checkSignature checks the customer's consent record: the address it
// was given from and its browser's User-Agent.
func checkSignature(v *Validation, ip, ua *string) (remoteIP, userAgent string) {
	if ip == nil || *ip == "" {
		v.Add("signature.remote_ip", "required", "is required")
	} else if addr, err := netip.ParseAddr(*ip); len(*ip) > MaxRemoteIPLength || err != nil || addr.Zone() != "" {
		v.Add("signature.remote_ip", "invalid", "must be a plain IPv4 or IPv6 address (no zone), at most 45 characters")
	} else {
		remoteIP = addr.String()
	}
	if ua == nil || strings.TrimSpace(*ua) == "" {
		v.Add("signature.user_agent", "required", "is required")
	} else if userAgent = *ua; TooLong(userAgent, MaxUserAgentLength) {
		v.Add("signature.user_agent", "too_long", "must be at most 1024 characters")
	} else {
		checkText(v, "signature.user_agent", userAgent, SingleLine)
	}
	return remoteIP, userAgent
}

// MaxUserAgentLength is the most characters of a consent's user agent.
const MaxUserAgentLength = 1024

// BrowserSignature is the consent record of a purchase made on a page, as
// checkSignature takes it: the browser's address without its zone, and
// its User-Agent as one line of at most MaxUserAgentLength characters
// (bytes that are not UTF-8, control characters, direction overrides and
// line separators replaced: each is what single-line text refuses), or a note
// that it sent none. The header is the browser's to send: refused, its
// payer could never buy, told only to try again.
func BrowserSignature(addr netip.Addr, userAgent string) (remoteIP, ua string) {
	ua = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || DirectionControl(r) || LineSeparator(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(userAgent, "\uFFFD"))
	if ua = strings.TrimSpace(CutText(ua, MaxUserAgentLength)); ua == "" {
		ua = "(nenhum User-Agent enviado)"
	}
	return addr.WithZone("").String(), ua
}

// PlanCharge validates a charge of order o (whose offer, with its
// configurations, is loaded) for company c at now. It allows the four
// variations of the spec and nothing else: financed boleto with a boleto or
// Pix down payment, upfront Pix, upfront boleto.
func PlanCharge(req ChargeRequest, o *Order, c *Company, now time.Time, checkoutURL string) (*ChargePlan, error) {
	var v Validation
	p := &ChargePlan{}
	if req.Payment == nil || req.Payment.PaymentMethod == nil || *req.Payment.PaymentMethod == "" {
		v.Add("payment.payment_method", "required", "is required: boleto or pix")
	} else {
		p.Method = *req.Payment.PaymentMethod
		if p.Method == MethodCreditCard {
			return nil, &Error{Code: ECREDITCARD, Message: "credit card payments are not accepted by the charge endpoint; " +
				"the customer pays by card on the hosted checkout page (" + checkoutURL + "); charge with boleto or pix",
				Fields: []FieldError{{Field: "payment.payment_method", Code: "credit_card_not_supported", Message: "use boleto or pix; cards go through the hosted checkout"}}}
		}
		if p.Method != MethodBoleto && p.Method != MethodPix {
			v.Add("payment.payment_method", "invalid", "must be boleto or pix")
			p.Method = "" // one error on the field: not also "not allowed" by the configuration
		}
	}
	if req.PaymentConfigurationID == nil || *req.PaymentConfigurationID == "" {
		v.Add("payment_configuration_id", "required", "is required")
	} else {
		for _, pc := range o.Offer.PaymentConfigurations {
			if pc.ID == LowerUUID(*req.PaymentConfigurationID) {
				p.Configuration = pc
			}
		}
		if p.Configuration == nil {
			v.Add("payment_configuration_id", "not_found", "is not a payment configuration of the order's offer")
		}
	}
	if req.DueDay == nil {
		v.Add("due_day", "required", "is required")
	} else if p.DueDay = *req.DueDay; p.DueDay < 1 || p.DueDay > 31 {
		v.Add("due_day", boundCode(p.DueDay < 1), "must be between 1 and 31")
	}
	if req.Installments == nil {
		v.Add("installments", "required", "is required")
	} else {
		p.Installments = *req.Installments
	}
	if req.Signature == nil {
		v.Add("signature", "required", "is required: the customer's remote_ip and user_agent")
	} else {
		p.RemoteIP, p.UserAgent = checkSignature(&v, req.Signature.RemoteIP, req.Signature.UserAgent)
	}
	if err := o.Offer.Sellable(now); err != nil {
		// A field's message follows its name ("offer cannot be sold: …").
		v.Add("offer", "not_sellable", "cannot be sold: "+ErrorMessage(err))
	}
	pc := p.Configuration
	if pc != nil && req.Installments != nil {
		p.checkVariation(&v, c)
	}
	if pc != nil && pc.PaymentType == Financed && !IsAdultAt(o.CustomerBirthdate, now) {
		v.Add("payment_configuration_id", "not_allowed",
			fmt.Sprintf("is a financed configuration, and the customer is under %d: choose an upfront configuration", AdultAge))
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	s, err := BuildSchedule(p.scheduleInput(o.Offer, now))
	if err != nil {
		return nil, &Error{Code: EINVALID, Message: "installments: " + ErrorMessage(err),
			Fields: []FieldError{{Field: "installments", Code: "invalid", Message: ErrorMessage(err)}}}
	}
	if err := p.checkFloor(s, c); err != nil {
		return nil, err
	}
	p.Schedule = s
	p.FirstPaymentExpiresAt = PaymentExpiry(p.Method, s.Bills[0].DueDate, c.BoletoGraceBusinessDays)
	if req.Expect != nil {
		if err := req.Expect(p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// scheduleInput is what the plan's schedule is built from.
func (p *ChargePlan) scheduleInput(offer *Offer, now time.Time) ScheduleInput {
	pc := p.Configuration
	in := ScheduleInput{
		AmountCents: offer.AmountCents, Upfront: pc.PaymentType == Upfront, RegistrationFee: pc.RegistrationFee,
		InterestRate: pc.InterestRate, Installments: p.Installments, DueDay: p.DueDay, ChargedAt: now,
		ExpiresIn: time.Duration(pc.ExpiresIn) * time.Hour, DownPaymentValue: pc.DownPaymentValue,
	}
	if pc.DownPaymentType != nil {
		in.DownPaymentType = *pc.DownPaymentType
	}
	return in
}

// checkFloor refuses installments below the minimum. The company may have
// raised its floor since the offer was made; the configuration's own can
// only be higher.
func (p *ChargePlan) checkFloor(s Schedule, c *Company) error {
	floor := max(p.Configuration.MinInstallmentCents, c.MinInstallmentCents)
	for _, b := range s.Bills[1:] {
		if b.AmountCents < floor {
			msg := fmt.Sprintf("gives installments of %d cents, below the minimum of %d; choose fewer installments", b.AmountCents, floor)
			return &Error{Code: EINVALID, Message: "installments " + msg, Fields: []FieldError{{Field: "installments", Code: "too_large", Message: msg}}}
		}
	}
	return nil
}

func (p *ChargePlan) checkVariation(v *Validation, c *Company) {
	pc := p.Configuration
	if pc.Availability != "enabled" {
		v.Add("payment_configuration_id", "not_allowed", "the payment configuration is disabled")
	}
	if pc.PaymentType == Upfront {
		if p.Installments != 1 {
			v.Add("installments", boundCode(p.Installments < 1), "must be 1 for an upfront configuration")
		}
		if p.Method != "" && !slices.Contains(pc.PaymentMethods, p.Method) {
			v.Add("payment.payment_method", "not_allowed", "must be one of the configuration's payment_methods: "+strings.Join(pc.PaymentMethods, ", "))
		}
		return
	}
	// A number past its bounds is too_small or too_large, as the field
	// codes' catalogue names them; it answered invalid (an audit).
	limit := min(pc.MaxInstallments, c.MaxInstallments)
	if p.Installments < 2 || p.Installments > limit {
		v.Add("installments", boundCode(p.Installments < 2), fmt.Sprintf("must be between 2 and %d for this financed configuration", limit))
	}
	if p.Method != "" && !slices.Contains(pc.AllowedDownPaymentMethods, p.Method) {
		v.Add("payment.payment_method", "not_allowed", "the configuration does not allow this down payment method; allowed: "+strings.Join(pc.AllowedDownPaymentMethods, ", "))
	}
}
