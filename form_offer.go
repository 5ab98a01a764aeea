package parcela

// PaymentConfigurationCreateForm is spec 2.5 create-response form.
type PaymentConfigurationCreateForm struct {
	ID                         string           `json:"id"`
	PaymentType                string           `json:"payment_type"`
	FinancedType               *string          `json:"financed_type"`
	PaymentMethods             []string         `json:"payment_methods"`
	AllowedDownPaymentMethods  []string         `json:"allowed_down_payment_methods"`
	Availability               string           `json:"availability"`
	ExpiresIn                  int              `json:"expires_in"`
	InterestRate               Rate             `json:"interest_rate"`
	MaxInstallments            int              `json:"max_installments"`
	MaxDownPaymentInstallments *int             `json:"max_down_payment_installments"`
	MinInstallmentAmountCents  int64            `json:"min_installment_amount_cents"`
	DownPaymentType            *DownPaymentType `json:"down_payment_type"`
	DownPaymentValue           Rate             `json:"down_payment_value"`
	RegistrationFee            Rate             `json:"registration_fee"`
	TakeRateType               string           `json:"take_rate_type"`
	TakeRateValue              Rate             `json:"take_rate_value"`
}

// NewPaymentConfigurationCreateForm renders a configuration in create-response form.
func NewPaymentConfigurationCreateForm(pc *PaymentConfiguration) PaymentConfigurationCreateForm {
	return PaymentConfigurationCreateForm{
		ID: pc.ID, PaymentType: pc.PaymentType, FinancedType: pc.FinancedType, PaymentMethods: nonNil(pc.PaymentMethods),
		AllowedDownPaymentMethods: nonNil(pc.AllowedDownPaymentMethods), Availability: pc.Availability, ExpiresIn: pc.ExpiresIn,
		InterestRate: pc.InterestRate, MaxInstallments: pc.MaxInstallments, MaxDownPaymentInstallments: pc.MaxDownPaymentInstallments,
		MinInstallmentAmountCents: pc.MinInstallmentCents, DownPaymentType: pc.DownPaymentType, DownPaymentValue: pc.DownPaymentValue,
		RegistrationFee: pc.RegistrationFee, TakeRateType: pc.TakeRateType, TakeRateValue: pc.TakeRateValue,
	}
}

// PaymentConfigurationOrderForm is spec 2.5 order form.
type PaymentConfigurationOrderForm struct {
	ID                         string          `json:"id"`
	PaymentMethod              string          `json:"payment_method"`
	PaymentType                string          `json:"payment_type"`
	CreatedAt                  Timestamp       `json:"created_at"`
	UpdatedAt                  Timestamp       `json:"updated_at"`
	MinInstallmentAmountCents  int64           `json:"min_installment_amount_cents"`
	MaxInstallments            int             `json:"max_installments"`
	AllowedDownPaymentMethods  []string        `json:"allowed_down_payment_methods"`
	MaxDownPaymentInstallments int             `json:"max_down_payment_installments"`
	DownPaymentType            DownPaymentType `json:"down_payment_type"`
	InterestRate               Rate            `json:"interest_rate"`
	RegistrationFee            Rate            `json:"registration_fee"`
	ExpiresIn                  int             `json:"expires_in"`
	DownPaymentValue           Rate            `json:"down_payment_value"`
	PaymentMethods             []string        `json:"payment_methods"`
	FinancedType               *string         `json:"financed_type"`
}

// NewPaymentConfigurationOrderForm renders a configuration in order form.
// The contract types this form's down_payment_type a string, where the
// create-response form's may be null: an upfront configuration, which
// takes no down payment, shows `percentage` beside its down_payment_value
// of 0.
func NewPaymentConfigurationOrderForm(pc *PaymentConfiguration) PaymentConfigurationOrderForm {
	downType := DownPaymentPercentage
	if pc.DownPaymentType != nil {
		downType = *pc.DownPaymentType
	}
	return PaymentConfigurationOrderForm{
		ID: pc.ID, PaymentMethod: pc.PaymentMethod(), PaymentType: pc.PaymentType, CreatedAt: ts(pc.CreatedAt), UpdatedAt: ts(pc.UpdatedAt),
		MinInstallmentAmountCents: pc.MinInstallmentCents, MaxInstallments: pc.MaxInstallments,
		AllowedDownPaymentMethods: nonNil(pc.AllowedDownPaymentMethods), MaxDownPaymentInstallments: 1, DownPaymentType: downType,
		InterestRate: pc.InterestRate, RegistrationFee: pc.RegistrationFee, ExpiresIn: pc.ExpiresIn, DownPaymentValue: pc.DownPaymentValue,
		PaymentMethods: nonNil(pc.PaymentMethods), FinancedType: pc.FinancedType,
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// OfferCreateForm is spec 2.3 create-response form.
type OfferCreateForm struct {
	ID                    string                           `json:"id"`
	Name                  string                           `json:"name"`
	AmountCents           int64                            `json:"amount_cents"`
	AmountCurrency        string                           `json:"amount_currency"`
	Availability          string                           `json:"availability"`
	CreatedAt             Timestamp                        `json:"created_at"`
	UpdatedAt             Timestamp                        `json:"updated_at"`
	ExpiresAt             *Timestamp                       `json:"expires_at"`
	Seats                 *int                             `json:"seats"`
	PaymentConfigurations []PaymentConfigurationCreateForm `json:"payment_configurations"`
	Product               ProductCreateForm                `json:"product"`
	URL                   string                           `json:"url"`
	SeatsTaken            int                              `json:"seats_taken"`
	ExcludeFromCampaign   bool                             `json:"exclude_from_campaign"`
}

// NewOfferCreateForm renders an offer (with product and configurations) in
// create-response form; slug is the company's.
func NewOfferCreateForm(o *Offer, slug string, l Links) OfferCreateForm {
	f := OfferCreateForm{
		ID: o.ID, Name: o.Name, AmountCents: o.AmountCents, AmountCurrency: "BRL", Availability: o.Availability,
		CreatedAt: ts(o.CreatedAt), UpdatedAt: ts(o.UpdatedAt), ExpiresAt: tsPtr(o.ExpiresAt), Seats: o.Seats,
		PaymentConfigurations: make([]PaymentConfigurationCreateForm, 0, len(o.PaymentConfigurations)),
		Product:               NewProductCreateForm(o.Product),
		URL:                   l.PublicURL + "/pay/" + slug + "/offers/" + o.ID,
		SeatsTaken:            o.SeatsTaken, ExcludeFromCampaign: o.ExcludeFromCampaign,
	}
	for _, pc := range o.PaymentConfigurations {
		f.PaymentConfigurations = append(f.PaymentConfigurations, NewPaymentConfigurationCreateForm(pc))
	}
	return f
}

// OfferOrderForm is spec 2.3 order form.
type OfferOrderForm struct {
	ID                    string                          `json:"id"`
	AmountCents           int64                           `json:"amount_cents"`
	Enabled               bool                            `json:"enabled"`
	CreatedAt             Timestamp                       `json:"created_at"`
	UpdatedAt             Timestamp                       `json:"updated_at"`
	Product               ProductOrderForm                `json:"product"`
	PaymentConfigurations []PaymentConfigurationOrderForm `json:"payment_configurations"`
}

// NewOfferOrderForm renders an offer in order form. It is enabled while
// it and its product both are: a disabled product's offer sells nothing,
// and the order form shows no availability of the product.
func NewOfferOrderForm(o *Offer) OfferOrderForm {
	enabled := o.Availability == "enabled" && (o.Product == nil || o.Product.Availability == "enabled")
	f := OfferOrderForm{
		ID: o.ID, AmountCents: o.AmountCents, Enabled: enabled, CreatedAt: ts(o.CreatedAt), UpdatedAt: ts(o.UpdatedAt),
		Product:               NewProductOrderForm(o.Product),
		PaymentConfigurations: make([]PaymentConfigurationOrderForm, 0, len(o.PaymentConfigurations)),
	}
	for _, pc := range o.PaymentConfigurations {
		f.PaymentConfigurations = append(f.PaymentConfigurations, NewPaymentConfigurationOrderForm(pc))
	}
	return f
}
