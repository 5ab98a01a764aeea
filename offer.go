package parcela

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Offer is a priced way to buy a product, with the payment configurations
// that say how it may be paid.
type Offer struct {
	ID                    string
	CompanyID             string
	Environment           Environment
	ProductID             string
	Name                  string
	AmountCents           int64
	Availability          string // enabled or disabled
	ExpiresAt             *time.Time
	Seats                 *int
	SeatsTaken            int
	ExcludeFromCampaign   bool
	CreatedAt             time.Time
	UpdatedAt             time.Time
	Product               *Product
	PaymentConfigurations []*PaymentConfiguration
}

// Sellable tells whether the offer can take a new order or charge now, and
// if not, why. A disabled product stops the sales of every offer of it
// (its offers may still be made and changed, ready for when it opens).
func (o *Offer) Sellable(now time.Time) error {
	switch {
	case o.Availability != "enabled":
		return Errorf(EINVALID, "the offer is disabled")
	case o.Product != nil && o.Product.Availability != "enabled":
		return Errorf(EINVALID, "the product is disabled")
	case o.ExpiresAt != nil && !now.Before(*o.ExpiresAt):
		return Errorf(EINVALID, "the offer expired at %s", o.ExpiresAt.In(SaoPaulo).Format(time.RFC3339))
	case o.Seats != nil && o.SeatsTaken >= *o.Seats:
		return Errorf(EINVALID, "the offer is sold out")
	}
	return nil
}

// PaymentConfiguration is one way of paying an offer: upfront (one bill) or
// financed (a down payment and monthly boletos).
type PaymentConfiguration struct {
	ID                         string
	OfferID                    string
	Position                   int
	PaymentType                string // upfront or financed
	FinancedType               *string
	PaymentMethods             []string
	AllowedDownPaymentMethods  []string
	Availability               string
	ExpiresIn                  int // hours
	InterestRate               Rate
	MaxInstallments            int
	MaxDownPaymentInstallments *int
	MinInstallmentCents        int64
	DownPaymentType            *DownPaymentType
	DownPaymentValue           Rate
	RegistrationFee            Rate
	TakeRateType               string
	TakeRateValue              Rate
	CreatedAt                  time.Time
	UpdatedAt                  time.Time
}

// Payment types and methods.
const (
	Upfront  = "upfront"
	Financed = "financed"

	MethodPix        = "pix"
	MethodBoleto     = "boleto"
	MethodCreditCard = "credit_card"
)

var paymentMethods = []string{MethodPix, MethodBoleto, MethodCreditCard}

// PaymentMethod is the configuration's single method in the order form: the
// boleto of a financed plan, or the first method of an upfront one.
func (pc *PaymentConfiguration) PaymentMethod() string {
	if pc.PaymentType == Financed || len(pc.PaymentMethods) == 0 {
		return MethodBoleto
	}
	return pc.PaymentMethods[0]
}

// OfferRequest is the body of POST /offers.
type OfferRequest struct {
	Offer                 OfferFields                    `json:"offer"`
	PaymentConfigurations *[]PaymentConfigurationRequest `json:"payment_configurations"`
	// Also taken beside offer: the fields the contract says offer carries
	// do not name it, so a client may send it at the top level.
	ExcludeFromCampaign *bool `json:"exclude_from_campaign"`
}

// OfferFields are the offer's own fields in a create or patch request.
type OfferFields struct {
	Name                *string    `json:"name"`
	ProductID           *string    `json:"product_id"`
	AmountCents         *int64     `json:"amount_cents"`
	ExpiresAt           *time.Time `json:"expires_at"`
	Seats               *int       `json:"seats"`
	ExcludeFromCampaign *bool      `json:"exclude_from_campaign"`
	Availability        *string    `json:"availability"`
	// Read only to refuse it in a patch: an offer's ways to pay are fixed
	// (a request creating one sends them beside offer, not in it).
	PaymentConfigurations json.RawMessage `json:"payment_configurations"`
	// In a patch, an explicit null: remove the seat limit, the expiry.
	ClearSeats, ClearExpiresAt bool `json:"-"`
	// exclude_from_campaign sent beside offer, at the body's top level.
	ExcludeFromCampaignBeside *bool `json:"-"`
}

// excludeFromCampaign is exclude_from_campaign as sent inside offer or
// beside it (nil when in neither). Sent in both places with two values it
// is refused: keeping either would store what one of them did not say.
func (f OfferFields) excludeFromCampaign(v *Validation) *bool {
	in, beside := f.ExcludeFromCampaign, f.ExcludeFromCampaignBeside
	if in != nil && beside != nil && *in != *beside {
		v.Add("exclude_from_campaign", "invalid", "differs from offer.exclude_from_campaign; send it once")
		return nil
	}
	if in != nil {
		return in
	}
	return beside
}

// PaymentConfigurationRequest is one item of payment_configurations.
type PaymentConfigurationRequest struct {
	PaymentType               *string   `json:"payment_type"`
	PaymentMethods            *[]string `json:"payment_methods"`
	ExpiresInHours            *int      `json:"expires_in_hours"`
	InterestRate              *Rate     `json:"interest_rate"`
	MaxInstallments           *int      `json:"max_installments"`
	FinancedType              *string   `json:"financed_type"`
	AllowedDownPaymentMethods *[]string `json:"allowed_down_payment_methods"`
	DownPaymentType           *string   `json:"down_payment_type"`
	DownPaymentValue          *Rate     `json:"down_payment_value"`
	MinInstallmentCents       *int64    `json:"min_installment_amount_cents"`
	RegistrationFee           *Rate     `json:"registration_fee"`
	// Refused when present: the take rate is the company's.
	TakeRateType  *string `json:"take_rate_type"`
	TakeRateValue *Rate   `json:"take_rate_value"`
}

// BuildOffer validates a create request against the company's limits and
// the product (nil when product_id named none of the company's), and returns
// the offer to store. Every violation is reported at once.
func BuildOffer(req OfferRequest, c *Company, product *Product, now time.Time) (*Offer, error) {
	var v Validation
	f := req.Offer
	f.ExcludeFromCampaignBeside = req.ExcludeFromCampaign
	o := &Offer{CompanyID: c.ID, Availability: "enabled", Product: product}
	if f.Name == nil || TrimText(*f.Name) == "" {
		v.Add("offer.name", "required", "is required")
	} else if o.Name = TrimText(*f.Name); TooLong(o.Name, 255) {
		v.Add("offer.name", "too_long", "must be at most 255 characters")
	} else {
		checkText(&v, "offer.name", o.Name, SingleLine)
	}
	if f.ProductID == nil || *f.ProductID == "" {
		v.Add("offer.product_id", "required", "is required")
	} else if product == nil {
		v.Add("offer.product_id", "not_found", "is not a product of this company and environment")
	} else {
		o.ProductID = product.ID
	}
	if f.AmountCents == nil {
		v.Add("offer.amount_cents", "required", "is required")
	} else if o.AmountCents = *f.AmountCents; !checkAmount(&v, "offer.amount_cents", o.AmountCents, 500) {
	} else if product != nil && o.AmountCents > product.FullAmountCents {
		v.Add("offer.amount_cents", "too_large", fmt.Sprintf("must not exceed the product's full_amount_cents (%d); raise the product's amount first", product.FullAmountCents))
	}
	f.ExpiresAt = toMillisecond(f.ExpiresAt)
	o.ExpiresAt, o.Seats = f.ExpiresAt, f.Seats
	if f.ExpiresAt != nil && !f.ExpiresAt.After(now) {
		v.Add("offer.expires_at", "in_past", "must be in the future")
	} else {
		checkInstant(&v, "offer.expires_at", f.ExpiresAt)
	}
	if f.Seats != nil && *f.Seats <= 0 {
		v.Add("offer.seats", "too_small", "must be greater than 0")
	} else {
		checkCount(&v, "offer.seats", f.Seats, 1, MaxSeats)
	}
	if x := f.excludeFromCampaign(&v); x != nil {
		o.ExcludeFromCampaign = *x
	}
	if f.PaymentConfigurations != nil {
		// Ignored there, they would leave the offer built from the
		// top-level ones, or refused as missing, without saying why.
		v.Add("offer.payment_configurations", "not_allowed", "goes beside offer, at the top level of the body, not inside it")
	}
	if f.Availability != nil && *f.Availability != "enabled" && *f.Availability != "disabled" {
		v.Add("offer.availability", "invalid", "must be enabled or disabled")
	} else if f.Availability != nil {
		o.Availability = *f.Availability
	}
	switch {
	case req.PaymentConfigurations == nil:
		v.Add("payment_configurations", "required", "is required")
	case len(*req.PaymentConfigurations) == 0:
		v.Add("payment_configurations", "too_small", "must have at least one payment configuration")
	case len(*req.PaymentConfigurations) > 10:
		v.Add("payment_configurations", "too_large", "must have at most 10 payment configurations")
	default:
		amountValid := !v.Has("offer.amount_cents") && f.AmountCents != nil
		for i, r := range *req.PaymentConfigurations {
			at := fmt.Sprintf("payment_configurations[%d].", i)
			before := v.Count()
			pc := buildPaymentConfiguration(&v, at, r, c, o.AmountCents)
			if amountValid && v.Count() == before {
				checkPlans(&v, at, pc, o.AmountCents)
				if r.MaxInstallments == nil {
					defaultedMaxInstallments(&v, at, c.MaxInstallments, before)
				}
			}
			pc.Position = i
			o.PaymentConfigurations = append(o.PaymentConfigurations, pc)
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	return o, nil
}

func buildPaymentConfiguration(v *Validation, at string, r PaymentConfigurationRequest, c *Company, amount int64) *PaymentConfiguration {
	pc := &PaymentConfiguration{
		Availability:              "enabled",
		ExpiresIn:                 c.PaymentExpiryHours,
		MinInstallmentCents:       c.MinInstallmentCents,
		RegistrationFee:           c.RegistrationFee,
		TakeRateType:              c.TakeRateType,
		TakeRateValue:             c.TakeRateValue,
		AllowedDownPaymentMethods: []string{},
	}
	if r.PaymentType == nil {
		v.Add(at+"payment_type", "required", "is required")
		return pc
	}
	pc.PaymentType = *r.PaymentType
	if r.ExpiresInHours != nil {
		if pc.ExpiresIn = *r.ExpiresInHours; pc.ExpiresIn < 1 || pc.ExpiresIn > 720 {
			v.Add(at+"expires_in_hours", "invalid", "must be between 1 and 720 hours")
		}
	}
	if r.MinInstallmentCents != nil {
		// A configuration may raise the company's floor, never lower it.
		pc.MinInstallmentCents = *r.MinInstallmentCents
		if pc.MinInstallmentCents < c.MinInstallmentCents {
			v.Add(at+"min_installment_amount_cents", "too_small", fmt.Sprintf("must be at least the company minimum of %d cents", c.MinInstallmentCents))
		} else {
			checkAmount(v, at+"min_installment_amount_cents", pc.MinInstallmentCents, 0)
		}
	}
	if r.RegistrationFee != nil {
		pc.RegistrationFee = *r.RegistrationFee
		checkRate(v, at+"registration_fee", pc.RegistrationFee, rateOne)
	}
	// The platform's fee is the operator's, set on the company: a seller
	// cannot name its own (the configuration takes the company's).
	if r.TakeRateType != nil {
		v.Add(at+"take_rate_type", "not_allowed", "is the platform's fee, set by the operator on the company; leave it out")
	}
	if r.TakeRateValue != nil {
		v.Add(at+"take_rate_value", "not_allowed", "is the platform's fee, set by the operator on the company; leave it out")
	}
	switch pc.PaymentType {
	case Upfront:
		buildUpfront(v, at, r, pc)
	case Financed:
		buildFinanced(v, at, r, pc, c, amount)
	default:
		v.Add(at+"payment_type", "invalid", "must be upfront or financed")
	}
	return pc
}

func methodList(v *Validation, field string, in []string) []string {
	if len(in) == 0 {
		v.Add(field, "too_small", "must name at least one of pix, boleto, credit_card")
		return []string{}
	}
	seen := map[string]bool{}
	for _, m := range in {
		if !slices.Contains(paymentMethods, m) {
			v.Add(field, "invalid", fmt.Sprintf("%q is not one of pix, boleto, credit_card", truncateText(m, 32)))
		} else if seen[m] {
			v.Add(field, "invalid", fmt.Sprintf("%q is listed twice", m))
		}
		seen[m] = true
	}
	return in
}

func buildUpfront(v *Validation, at string, r PaymentConfigurationRequest, pc *PaymentConfiguration) {
	pc.MaxInstallments = 1
	if r.PaymentMethods == nil {
		v.Add(at+"payment_methods", "required", "is required for upfront configurations")
	} else {
		pc.PaymentMethods = methodList(v, at+"payment_methods", *r.PaymentMethods)
	}
	for _, field := range []struct {
		name string
		set  bool
	}{
		{"financed_type", r.FinancedType != nil},
		{"allowed_down_payment_methods", r.AllowedDownPaymentMethods != nil && len(*r.AllowedDownPaymentMethods) > 0},
		{"down_payment_type", r.DownPaymentType != nil},
		{"down_payment_value", r.DownPaymentValue != nil},
		{"interest_rate", r.InterestRate != nil && !r.InterestRate.IsZero()},
	} {
		if field.set {
			v.Add(at+field.name, "not_allowed", "is only for financed configurations")
		}
	}
	if r.MaxInstallments != nil && *r.MaxInstallments != 1 {
		v.Add(at+"max_installments", "not_allowed", "must be 1 for upfront configurations")
	}
}

func buildFinanced(v *Validation, at string, r PaymentConfigurationRequest, pc *PaymentConfiguration, c *Company, amount int64) {
	one := 1
	pc.MaxDownPaymentInstallments = &one
	pc.PaymentMethods = []string{MethodBoleto}
	if r.PaymentMethods != nil {
		pc.PaymentMethods = methodList(v, at+"payment_methods", *r.PaymentMethods)
		if !slices.Contains(pc.PaymentMethods, MethodBoleto) {
			v.Add(at+"payment_methods", "invalid", "must include boleto: financed installments are boletos")
		}
	}
	ft := "bolepix"
	if r.FinancedType != nil {
		if ft = *r.FinancedType; ft != "bolepix" && ft != "boleto" {
			v.Add(at+"financed_type", "invalid", "must be bolepix or boleto")
		}
	}
	pc.FinancedType = &ft
	if r.AllowedDownPaymentMethods == nil {
		v.Add(at+"allowed_down_payment_methods", "required", "is required for financed configurations")
	} else {
		pc.AllowedDownPaymentMethods = methodList(v, at+"allowed_down_payment_methods", *r.AllowedDownPaymentMethods)
	}
	if r.InterestRate != nil {
		pc.InterestRate = *r.InterestRate
		if checkRate(v, at+"interest_rate", pc.InterestRate, rateOne) && pc.InterestRate.Cmp(c.MaxInterestRate) > 0 {
			v.Add(at+"interest_rate", "too_large", "must be at most the company maximum of "+c.MaxInterestRate.String())
		}
	}
	pc.MaxInstallments = c.MaxInstallments
	if r.MaxInstallments != nil {
		if pc.MaxInstallments = *r.MaxInstallments; pc.MaxInstallments < 2 {
			v.Add(at+"max_installments", "too_small", "must be at least 2 for financed configurations")
		} else if pc.MaxInstallments > c.MaxInstallments {
			v.Add(at+"max_installments", "too_large", fmt.Sprintf("must be at most the company maximum of %d", c.MaxInstallments))
		}
	}
	if c.MaxInstallments < 2 && r.MaxInstallments == nil {
		v.Add(at+"max_installments", "not_allowed", "the company does not allow financed plans")
	}
	if r.DownPaymentType == nil {
		v.Add(at+"down_payment_type", "required", "is required for financed configurations")
	} else if t := DownPaymentType(*r.DownPaymentType); t != DownPaymentPercentage && t != DownPaymentAbsolute {
		v.Add(at+"down_payment_type", "invalid", "must be percentage or absolute")
	} else {
		pc.DownPaymentType = &t
	}
	if r.DownPaymentValue == nil {
		v.Add(at+"down_payment_value", "required", "is required for financed configurations")
		return
	}
	pc.DownPaymentValue = *r.DownPaymentValue
	if pc.DownPaymentType != nil {
		downPaymentRules(v, at+"down_payment_value", *pc.DownPaymentType, pc.DownPaymentValue, c, amount)
	}
}

// downPaymentRules applies the company minimum, both as a rate of the
// amount and in cents, whichever way the value is given.
func downPaymentRules(v *Validation, field string, t DownPaymentType, value Rate, c *Company, amount int64) {
	var cents int64
	if t == DownPaymentPercentage {
		if !checkRate(v, field, value, rateOne) {
			return
		}
		if value.Cmp(rateOne) >= 0 {
			v.Add(field, "too_large", "must be a fraction below 1 (0.2 is 20%)")
			return
		}
		if value.Cmp(c.MinDownPaymentRate) < 0 {
			v.Add(field, "too_small", "must be at least the company minimum of "+c.MinDownPaymentRate.String())
			return
		}
		cents = value.MulCents(amount)
	} else {
		if !checkRateCents(v, field, value) {
			return
		}
		cents = value.Decimal().IntPart()
		if amount > 0 && cents >= amount {
			v.Add(field, "too_large", "must be less than the offer amount")
			return
		}
		if amount > 0 && RateFromInt(cents).Decimal().Cmp(c.MinDownPaymentRate.Decimal().Mul(RateFromInt(amount).Decimal())) < 0 {
			v.Add(field, "too_small", "must be at least the company minimum of "+c.MinDownPaymentRate.String()+" of the amount")
			return
		}
	}
	if cents < c.MinDownPaymentCents {
		v.Add(field, "too_small", fmt.Sprintf("must be at least the company minimum of %d cents", c.MinDownPaymentCents))
	}
}

// defaultedMaxInstallments tells, in an error on max_installments added
// since the before'th, that the request did not send it: the field took
// the company's maximum, and an error on a field the client never wrote
// read as a bug of the API.
func defaultedMaxInstallments(v *Validation, at string, companyMax, before int) {
	for i := min(before, len(v.Fields)); i < len(v.Fields); i++ {
		if f := &v.Fields[i]; f.Field == at+"max_installments" {
			f.Message += fmt.Sprintf(" (not sent, it is the company's maximum of %d: send a lower max_installments)", companyMax)
		}
	}
}
