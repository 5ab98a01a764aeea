package parcela

import (
	"reflect"
	"strconv"
)

// A charge renders its order and its billing, with every bill, into the
// events it writes, and the order again as its answer: by encoding/json,
// a tenth of the charge's CPU and much of its garbage. These write the
// order forms as form_json.go writes the bill's, byte for byte as
// json.Marshal does (form_order_json_test.go compares them over every
// field).

// AppendJSON appends f exactly as json.Marshal(f) writes it, failing where
// it does (a Rate out of range).
func (f *OrderForm) AppendJSON(dst []byte) ([]byte, error) {
	dst = appendJSONString(append(dst, `{"id":`...), f.ID)
	dst = appendJSONTimestamp(append(dst, `,"created_at":`...), f.CreatedAt)
	dst = appendJSONTimestamp(append(dst, `,"updated_at":`...), f.UpdatedAt)
	dst = appendJSONString(append(dst, `,"status":`...), f.Status)
	dst = appendJSONString(append(dst, `,"customer_name":`...), f.CustomerName)
	dst = appendJSONString(append(dst, `,"customer_birthdate":`...), f.CustomerBirthdate)
	dst = appendJSONString(append(dst, `,"customer_document":`...), f.CustomerDocument)
	dst = appendJSONString(append(dst, `,"email":`...), f.Email)
	dst = appendJSONString(append(dst, `,"phone":`...), f.Phone)
	dst = f.Address.appendJSON(append(dst, `,"address":`...))
	dst, err := f.Offer.appendJSON(append(dst, `,"offer":`...))
	if err != nil {
		return nil, err
	}
	if dst, err = AppendJSONArrayOf(append(dst, `,"billings":`...), f.Billings, (*BillingOrderForm).AppendJSON); err != nil {
		return nil, err
	}
	dst = appendJSONStringPtr(append(dst, `,"cancelation_reason":`...), f.CancelationReason)
	dst = appendJSONString(append(dst, `,"url":`...), f.URL)
	return append(dst, '}'), nil
}

func (a *AddressForm) appendJSON(dst []byte) []byte {
	if a == nil {
		return append(dst, "null"...)
	}
	dst = appendJSONString(append(dst, `{"id":`...), a.ID)
	dst = appendJSONString(append(dst, `,"zipcode":`...), a.Zipcode)
	dst = appendJSONString(append(dst, `,"neighborhood":`...), a.Neighborhood)
	dst = appendJSONString(append(dst, `,"street":`...), a.Street)
	dst = appendJSONString(append(dst, `,"number":`...), a.Number)
	dst = appendJSONStringPtr(append(dst, `,"complement":`...), a.Complement)
	dst = appendJSONTimestamp(append(dst, `,"created_at":`...), a.CreatedAt)
	dst = appendJSONTimestamp(append(dst, `,"updated_at":`...), a.UpdatedAt)
	c := &a.City
	dst = appendJSONString(append(dst, `,"city":{"id":`...), c.ID)
	dst = appendJSONString(append(dst, `,"name":`...), c.Name)
	dst = appendJSONString(append(dst, `,"ibge_code":`...), c.IBGECode)
	dst = appendJSONTimestamp(append(dst, `,"created_at":`...), c.CreatedAt)
	dst = appendJSONTimestamp(append(dst, `,"updated_at":`...), c.UpdatedAt)
	s := &c.State
	dst = appendJSONString(append(dst, `,"state":{"id":`...), s.ID)
	dst = appendJSONString(append(dst, `,"name":`...), s.Name)
	dst = appendJSONString(append(dst, `,"acronym":`...), s.Acronym)
	dst = appendJSONTimestamp(append(dst, `,"created_at":`...), s.CreatedAt)
	dst = appendJSONTimestamp(append(dst, `,"updated_at":`...), s.UpdatedAt)
	return append(dst, '}', '}', '}')
}

func (o *OfferOrderForm) appendJSON(dst []byte) ([]byte, error) {
	dst = appendJSONString(append(dst, `{"id":`...), o.ID)
	dst = strconv.AppendInt(append(dst, `,"amount_cents":`...), o.AmountCents, 10)
	dst = strconv.AppendBool(append(dst, `,"enabled":`...), o.Enabled)
	dst = appendJSONTimestamp(append(dst, `,"created_at":`...), o.CreatedAt)
	dst = appendJSONTimestamp(append(dst, `,"updated_at":`...), o.UpdatedAt)
	dst = o.Product.appendJSON(append(dst, `,"product":`...))
	dst, err := AppendJSONArrayOf(append(dst, `,"payment_configurations":`...), o.PaymentConfigurations, (*PaymentConfigurationOrderForm).appendJSON)
	if err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

func (p *ProductOrderForm) appendJSON(dst []byte) []byte {
	dst = appendJSONString(append(dst, `{"id":`...), p.ID)
	dst = appendJSONString(append(dst, `,"name":`...), p.Name)
	dst = strconv.AppendInt(append(dst, `,"full_amount_cents":`...), p.FullAmountCents, 10)
	dst = appendJSONTimestamp(append(dst, `,"created_at":`...), p.CreatedAt)
	dst = appendJSONTimestamp(append(dst, `,"updated_at":`...), p.UpdatedAt)
	dst = appendJSONStringPtr(append(dst, `,"description":`...), p.Description)
	dst = appendJSONIntPtr(append(dst, `,"duration_in_hours":`...), p.DurationInHours)
	dst = appendJSONString(append(dst, `,"access_period":`...), p.AccessPeriod)
	dst = appendJSONIntPtr(append(dst, `,"duration_in_days":`...), p.DurationInDays)
	dst = appendJSONStringPtr(append(dst, `,"start_date":`...), p.StartDate)
	dst = appendJSONStringPtr(append(dst, `,"end_date":`...), p.EndDate)
	dst = appendJSONString(append(dst, `,"formatted_access_period":`...), p.FormattedAccessPeriod)
	c := &p.Company
	dst = appendJSONString(append(dst, `,"company":{"id":`...), c.ID)
	dst = appendJSONString(append(dst, `,"document":`...), c.Document)
	dst = appendJSONString(append(dst, `,"name":`...), c.Name)
	dst = appendJSONString(append(dst, `,"slug":`...), c.Slug)
	dst = appendJSONTimestamp(append(dst, `,"created_at":`...), c.CreatedAt)
	dst = appendJSONTimestamp(append(dst, `,"updated_at":`...), c.UpdatedAt)
	dst = strconv.AppendBool(append(dst, `,"theme_customizations":{"dark":`...), c.ThemeCustomizations.Dark)
	dst = appendJSONString(append(dst, `,"palette":`...), c.ThemeCustomizations.Palette)
	dst = appendJSONString(append(dst, `},"logo":`...), c.Logo)
	dst = appendJSONStringPtr(append(dst, `,"email":`...), c.Email)
	dst = appendJSONStringPtr(append(dst, `,"phone":`...), c.Phone)
	dst = c.Address.appendJSON(append(dst, `,"address":`...))
	k := &p.Kind
	dst = appendJSONString(append(dst, `},"kind":{"id":`...), k.ID)
	dst = appendJSONString(append(dst, `,"name":`...), k.Name)
	dst = appendJSONTimestamp(append(dst, `,"created_at":`...), k.CreatedAt)
	dst = appendJSONTimestamp(append(dst, `,"updated_at":`...), k.UpdatedAt)
	return append(dst, '}', '}')
}

func (p *PaymentConfigurationOrderForm) appendJSON(dst []byte) ([]byte, error) {
	dst = appendJSONString(append(dst, `{"id":`...), p.ID)
	dst = appendJSONString(append(dst, `,"payment_method":`...), p.PaymentMethod)
	dst = appendJSONString(append(dst, `,"payment_type":`...), p.PaymentType)
	dst = appendJSONTimestamp(append(dst, `,"created_at":`...), p.CreatedAt)
	dst = appendJSONTimestamp(append(dst, `,"updated_at":`...), p.UpdatedAt)
	dst = strconv.AppendInt(append(dst, `,"min_installment_amount_cents":`...), p.MinInstallmentAmountCents, 10)
	dst = strconv.AppendInt(append(dst, `,"max_installments":`...), int64(p.MaxInstallments), 10)
	dst = appendJSONStrings(append(dst, `,"allowed_down_payment_methods":`...), p.AllowedDownPaymentMethods)
	dst = strconv.AppendInt(append(dst, `,"max_down_payment_installments":`...), int64(p.MaxDownPaymentInstallments), 10)
	dst = appendJSONString(append(dst, `,"down_payment_type":`...), string(p.DownPaymentType))
	var err error
	if dst, err = appendJSONRate(append(dst, `,"interest_rate":`...), p.InterestRate, rateType); err != nil {
		return nil, err
	}
	if dst, err = appendJSONRate(append(dst, `,"registration_fee":`...), p.RegistrationFee, rateType); err != nil {
		return nil, err
	}
	dst = strconv.AppendInt(append(dst, `,"expires_in":`...), int64(p.ExpiresIn), 10)
	if dst, err = appendJSONRate(append(dst, `,"down_payment_value":`...), p.DownPaymentValue, rateType); err != nil {
		return nil, err
	}
	dst = appendJSONStrings(append(dst, `,"payment_methods":`...), p.PaymentMethods)
	dst = appendJSONStringPtr(append(dst, `,"financed_type":`...), p.FinancedType)
	return append(dst, '}'), nil
}

// AppendJSON appends f exactly as json.Marshal(f) writes it, failing where
// it does (a Rate out of range).
func (f *BillingOrderForm) AppendJSON(dst []byte) ([]byte, error) {
	dst = f.billingBase.appendFields(append(dst, '{'))
	dst = strconv.AppendInt(append(dst, `,"total_payable_cents":`...), f.TotalPayableCents, 10)
	dst = strconv.AppendInt(append(dst, `,"total_interest_cents":`...), f.TotalInterestCents, 10)
	dst, err := appendJSONRate(append(dst, `,"cet_annual_rate":`...), f.CETAnnualRate, rateType)
	if err != nil {
		return nil, err
	}
	if dst, err = f.PaymentConfiguration.appendJSON(append(dst, `,"payment_configuration":`...)); err != nil {
		return nil, err
	}
	dst = appendJSONArray(append(dst, `,"bills":`...), f.Bills, (*BillOrderForm).appendJSON)
	return append(dst, '}'), nil
}

func (b *BillOrderForm) appendJSON(dst []byte) []byte {
	dst = b.billBase.appendFields(append(dst, '{'))
	dst = appendJSONArray(append(dst, `,"payments":`...), b.Payments, func(p *PaymentOrderForm, dst []byte) []byte {
		return append(p.appendFields(append(dst, '{')), '}')
	})
	return append(dst, '}')
}

// appendFields writes billingBase's members without braces (it is embedded).
func (g *billingBase) appendFields(dst []byte) []byte {
	dst = appendJSONString(append(dst, `"id":`...), g.ID)
	dst = strconv.AppendInt(append(dst, `,"amount_cents":`...), g.AmountCents, 10)
	dst = appendJSONString(append(dst, `,"amount_currency":`...), g.AmountCurrency)
	dst = appendJSONTimestamp(append(dst, `,"created_at":`...), g.CreatedAt)
	dst = appendJSONTimestamp(append(dst, `,"updated_at":`...), g.UpdatedAt)
	dst = strconv.AppendInt(append(dst, `,"due_day":`...), int64(g.DueDay), 10)
	dst = strconv.AppendInt(append(dst, `,"installments":`...), int64(g.Installments), 10)
	dst = appendJSONString(append(dst, `,"status":`...), g.Status)
	dst = appendJSONStringPtr(append(dst, `,"cancelation_reason":`...), g.CancelationReason)
	return appendJSONTimestampPtr(append(dst, `,"finished_at":`...), g.FinishedAt)
}

// rateType is the type json.Marshal's error names for a Rate field.
var rateType = reflect.TypeFor[Rate]()

func appendJSONIntPtr(dst []byte, n *int) []byte {
	if n == nil {
		return append(dst, "null"...)
	}
	return strconv.AppendInt(dst, int64(*n), 10)
}

func appendJSONStrings(dst []byte, s []string) []byte {
	return appendJSONArray(dst, s, func(v *string, dst []byte) []byte { return appendJSONString(dst, *v) })
}
