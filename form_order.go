package parcela

import "time"

// PaymentOrderForm is spec 2.8 inside an order.
type PaymentOrderForm struct {
	ID                  string     `json:"id"`
	CreatedAt           Timestamp  `json:"created_at"`
	AmountCents         int64      `json:"amount_cents"`
	PaidAmountCents     int64      `json:"paid_amount_cents"`
	RefundedAmountCents int64      `json:"refunded_amount_cents"`
	PaidAt              *Timestamp `json:"paid_at"`
	RefundedAt          *Timestamp `json:"refunded_at"`
	Status              string     `json:"status"`
	PaymentMethod       string     `json:"payment_method"`
	URL                 string     `json:"url"`
	Barcode             *string    `json:"barcode"`
	ExpiresAt           Timestamp  `json:"expires_at"`
	Installments        int        `json:"installments"`
	PixCode             *string    `json:"pix_code"`
	PixQRCodeURL        *string    `json:"pix_qrcode_url"`
	CardBrand           *string    `json:"card_brand"`
	CardLastDigits      *string    `json:"card_last_digits"`
}

// NewPaymentOrderForm renders a payment as it appears inside an order.
func NewPaymentOrderForm(p *Payment, l Links) PaymentOrderForm {
	f := PaymentOrderForm{
		ID: p.ID, CreatedAt: ts(p.CreatedAt), AmountCents: p.AmountCents, PaidAmountCents: p.PaidAmountCents,
		RefundedAmountCents: p.RefundedAmountCents, PaidAt: tsPtr(p.PaidAt), RefundedAt: tsPtr(p.RefundedAt), Status: p.Status,
		PaymentMethod: p.Method, URL: l.PaymentURL(p.ID), Barcode: p.Barcode, ExpiresAt: ts(p.ExpiresAt),
		Installments: p.Installments, PixCode: p.PixCode,
	}
	if p.Card != nil {
		brand, last := string(p.Card.Brand), p.Card.LastFour
		f.CardBrand, f.CardLastDigits = &brand, &last
	}
	if p.PixCode != nil {
		u := l.PublicURL + "/external_api/v1/payments/" + p.ID + "/pix.png"
		f.PixQRCodeURL = &u
	}
	return f
}

// PaymentBillForm is spec 2.8 on the bill endpoints.
type PaymentBillForm struct {
	PaymentOrderForm
	BarcodeImageURL          *string `json:"barcode_image_url"`
	BillID                   string  `json:"bill_id"`
	RefusedReason            *string `json:"refused_reason"`
	RefusedReasonDescription *string `json:"refused_reason_description"`
}

// NewPaymentBillForm renders a payment for the bill endpoints.
func NewPaymentBillForm(p *Payment, l Links) PaymentBillForm {
	f := PaymentBillForm{PaymentOrderForm: NewPaymentOrderForm(p, l), BillID: p.BillID,
		RefusedReason: p.RefusedReason, RefusedReasonDescription: p.RefusedReasonDescription}
	if p.Barcode != nil {
		u := l.PublicURL + "/external_api/v1/payments/" + p.ID + "/barcode.png"
		f.BarcodeImageURL = &u
	}
	return f
}

// billBase is what both bill forms share.
type billBase struct {
	ID          string      `json:"id"`
	AmountCents int64       `json:"amount_cents"`
	CreatedAt   Timestamp   `json:"created_at"`
	UpdatedAt   Timestamp   `json:"updated_at"`
	Status      string      `json:"status"`
	DueDate     Timestamp   `json:"due_date"`
	BillType    BillType    `json:"bill_type"`
	BillDetails BillDetails `json:"bill_details"`
}

func newBillBase(b *Bill) billBase {
	return billBase{ID: b.ID, AmountCents: b.AmountCents, CreatedAt: ts(b.CreatedAt), UpdatedAt: ts(b.UpdatedAt), Status: b.Status,
		DueDate: ts(b.DueDate), BillType: b.Type, BillDetails: b.Details}
}

// BillOrderForm is spec 2.7 inside an order, with the bill_details extension.
type BillOrderForm struct {
	billBase
	Payments []PaymentOrderForm `json:"payments"`
}

// NewBillOrderForm renders a bill as it appears inside an order.
func NewBillOrderForm(b *Bill, l Links) BillOrderForm {
	f := BillOrderForm{billBase: newBillBase(b), Payments: make([]PaymentOrderForm, 0, len(b.Payments))}
	for _, p := range b.Payments {
		f.Payments = append(f.Payments, NewPaymentOrderForm(p, l))
	}
	return f
}

// billingBase is what every billing form shares.
type billingBase struct {
	ID                string     `json:"id"`
	AmountCents       int64      `json:"amount_cents"`
	AmountCurrency    string     `json:"amount_currency"`
	CreatedAt         Timestamp  `json:"created_at"`
	UpdatedAt         Timestamp  `json:"updated_at"`
	DueDay            int        `json:"due_day"`
	Installments      int        `json:"installments"`
	Status            string     `json:"status"`
	CancelationReason *string    `json:"cancelation_reason"`
	FinishedAt        *Timestamp `json:"finished_at"`
}

func newBillingBase(b *Billing) billingBase {
	return billingBase{ID: b.ID, AmountCents: b.AmountCents, AmountCurrency: "BRL", CreatedAt: ts(b.CreatedAt), UpdatedAt: ts(b.UpdatedAt),
		DueDay: b.DueDay, Installments: b.Installments, Status: b.Status, CancelationReason: b.CancelationReason, FinishedAt: tsPtr(b.FinishedAt)}
}

// BillingOrderForm is spec 2.6 inside an order (and GET /billings/{id}),
// with the cost disclosure extension: total payable, total interest and
// the CET (0 when nothing is financed: no credit, no cost).
type BillingOrderForm struct {
	billingBase
	TotalPayableCents    int64                         `json:"total_payable_cents"`
	TotalInterestCents   int64                         `json:"total_interest_cents"`
	CETAnnualRate        Rate                          `json:"cet_annual_rate"`
	PaymentConfiguration PaymentConfigurationOrderForm `json:"payment_configuration"`
	Bills                []BillOrderForm               `json:"bills"`
}

// NewBillingOrderForm renders a billing with its configuration, bills and cost.
func NewBillingOrderForm(b *Billing, l Links) BillingOrderForm {
	cost := b.Cost()
	f := BillingOrderForm{billingBase: newBillingBase(b), PaymentConfiguration: NewPaymentConfigurationOrderForm(b.PaymentConfiguration),
		TotalPayableCents: cost.TotalPayableCents, TotalInterestCents: cost.TotalInterestCents, Bills: make([]BillOrderForm, 0, len(b.Bills))}
	if cost.CETAnnualRate != nil {
		f.CETAnnualRate = *cost.CETAnnualRate
	}
	for _, bill := range b.Bills {
		f.Bills = append(f.Bills, NewBillOrderForm(bill, l))
	}
	return f
}

// BillingSummaryForm is spec 2.6 as the summary inside a bill: without its
// bills, and without the cost disclosure, which the billing's own form
// carries (a bill's reads would derive it from bills they do not read).
type BillingSummaryForm struct {
	billingBase
	OrderID         string  `json:"order_id"`
	OriginBillingID *string `json:"origin_billing_id"`
}

func newBillingSummaryForm(b *Billing) BillingSummaryForm {
	return BillingSummaryForm{billingBase: newBillingBase(b), OrderID: b.OrderID, OriginBillingID: b.OriginBillingID}
}

// BillEndpointForm is spec 2.7 on the bill endpoints.
type BillEndpointForm struct {
	billBase
	Payments              []PaymentBillForm  `json:"payments"`
	AuthenticationCode    string             `json:"authentication_code"`
	Billing               BillingSummaryForm `json:"billing"`
	CheckoutURL           string             `json:"checkout_url"`
	CurrentAmountCents    int64              `json:"current_amount_cents"`
	ReceivedAmountCents   int64              `json:"received_amount_cents"`
	OriginalAmountCents   int64              `json:"original_amount_cents"`
	DisablePenaltiesUntil *Timestamp         `json:"disable_penalties_until"`
	EffectiveDueDate      Timestamp          `json:"effective_due_date"`
	PaidAt                *Timestamp         `json:"paid_at"`
}

// NewBillEndpointForm renders a bill (with b.Billing loaded) at time now,
// its current amount carrying the company's late penalties.
func NewBillEndpointForm(b *Bill, c *Company, now time.Time, l Links) BillEndpointForm {
	f := BillEndpointForm{
		billBase: newBillBase(b), Payments: make([]PaymentBillForm, 0, len(b.Payments)),
		AuthenticationCode: b.AuthenticationCode,
		Billing:            newBillingSummaryForm(b.Billing),
		CheckoutURL:        l.PublicURL + "/checkout/bills/" + b.ID + "?code=" + b.AuthenticationCode,
		CurrentAmountCents: b.CurrentAmount(now, c), ReceivedAmountCents: b.ReceivedInAll(), OriginalAmountCents: b.AmountCents,
		DisablePenaltiesUntil: tsPtr(b.DisablePenaltiesUntil), EffectiveDueDate: ts(b.EffectiveDueDate), PaidAt: tsPtr(b.PaidAt),
	}
	for _, p := range b.Payments {
		f.Payments = append(f.Payments, NewPaymentBillForm(p, l))
	}
	return f
}

// OrderForm is spec 2.1.
type OrderForm struct {
	ID                string             `json:"id"`
	CreatedAt         Timestamp          `json:"created_at"`
	UpdatedAt         Timestamp          `json:"updated_at"`
	Status            string             `json:"status"`
	CustomerName      string             `json:"customer_name"`
	CustomerBirthdate string             `json:"customer_birthdate"`
	CustomerDocument  string             `json:"customer_document"`
	Email             string             `json:"email"`
	Phone             string             `json:"phone"`
	Address           *AddressForm       `json:"address"`
	Offer             OfferOrderForm     `json:"offer"`
	Billings          []BillingOrderForm `json:"billings"`
	CancelationReason *string            `json:"cancelation_reason"`
	URL               string             `json:"url"`
}

// NewOrderForm renders an order with its offer, billings, bills and payments.
func NewOrderForm(o *Order, l Links) OrderForm {
	f := OrderForm{
		ID: o.ID, CreatedAt: ts(o.CreatedAt), UpdatedAt: ts(o.UpdatedAt), Status: o.Status, CustomerName: o.CustomerName,
		CustomerBirthdate: o.CustomerBirthdate, CustomerDocument: o.CustomerDocument, Email: o.Email, Phone: o.Phone,
		Address: NewAddressForm(&o.Address), Offer: NewOfferOrderForm(o.Offer), Billings: make([]BillingOrderForm, 0, len(o.Billings)),
		CancelationReason: o.CancelationReason, URL: l.OrderURL(o.ID, o.AccessCode),
	}
	for _, b := range o.Billings {
		f.Billings = append(f.Billings, NewBillingOrderForm(b, l))
	}
	return f
}
