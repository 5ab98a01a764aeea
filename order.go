package parcela

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"parcela/brcode"
)

// Order statuses.
const (
	OrderPending    = "pending"
	OrderInProgress = "in_progress"
	OrderFinished   = "finished"
	OrderCanceled   = "canceled"
)

// Cancelation reasons; orders may also be "expired".
var CancelationReasons = []string{
	"down_payment_not_paid", "refunded_by_company", "refunded_by_customer",
	"customer_renegotiation", "customer_dropout", "customer_dropout_with_fine",
}

// ReasonExpired cancels an order whose down payment was never paid.
const ReasonExpired = "expired"

// Order is a customer's purchase of an offer; charging it creates a billing.
type Order struct {
	ID                string
	CompanyID         string
	Environment       Environment
	OfferID           string
	Status            string
	CustomerName      string
	CustomerBirthdate string // YYYY-MM-DD
	CustomerDocument  string // CPF digits
	Email             string
	Phone             string
	Address           Address
	CancelationReason *string
	AccessCode        string // opens the order's page for its customer
	// FormKey names the payer's form that created the order on its offer
	// page (CreateFormOrder), "" for the API's: a form sent again answers
	// this order rather than create another.
	FormKey   string
	CreatedAt time.Time
	UpdatedAt time.Time
	Offer     *Offer
	Billings  []*Billing
}

// OrderRequest is the body of POST /orders.
type OrderRequest struct {
	Order struct {
		OfferID           *string       `json:"offer_id"`
		CustomerName      *string       `json:"customer_name"`
		CustomerBirthdate *string       `json:"customer_birthdate"`
		CustomerDocument  *string       `json:"customer_document"`
		Email             *string       `json:"email"`
		Phone             *string       `json:"phone"`
		Address           *AddressInput `json:"address"`
	} `json:"order"`
}

// AddressInput is an address as a request (or the operator's command)
// gives it.
type AddressInput struct {
	Zipcode      *string `json:"zipcode"`
	Street       *string `json:"street"`
	Number       *string `json:"number"`
	Complement   *string `json:"complement"`
	Neighborhood *string `json:"neighborhood"`
	CityIBGECode *string `json:"city_ibge_code"`
}

// BuildOrder validates the customer data of a request and returns the order
// to store: document, phone and zipcode as digits. The offer and the city
// are checked by the caller, which knows the company's rows; the caller also
// checks the zipcode against the city's state (CheckZipcodeState).
func BuildOrder(req OrderRequest, now time.Time) (*Order, error) {
	var v Validation
	o := buildOrder(&v, req, now)
	if err := v.Err(); err != nil {
		return nil, err
	}
	return o, nil
}

// buildOrder is BuildOrder's order, its errors added to v: as far as it
// could be read, so that the caller checks its offer and city beside them.
func buildOrder(v *Validation, req OrderRequest, now time.Time) *Order {
	in := req.Order
	o := &Order{Status: OrderPending}
	str := func(field string, p *string, max int) string { return requiredText(v, field, p, max) }
	if o.OfferID = LowerUUID(str("order.offer_id", in.OfferID, 64)); o.OfferID != "" && !IsUUID(o.OfferID) {
		v.Add("order.offer_id", "not_found", "is not an offer of this company and environment")
	}
	o.CustomerName = str("order.customer_name", in.CustomerName, 255)
	if b := str("order.customer_birthdate", in.CustomerBirthdate, 10); b != "" {
		t, err := time.ParseInLocation(time.DateOnly, b, SaoPaulo)
		switch {
		case err != nil:
			v.Add("order.customer_birthdate", "invalid", "must be a date as YYYY-MM-DD")
		case b >= now.In(SaoPaulo).Format(time.DateOnly): // dates, not midnights: one daylight saving skipped is 23:00 the day before
			v.Add("order.customer_birthdate", "invalid", "must be in the past")
		case t.Year() < 1900:
			v.Add("order.customer_birthdate", "invalid", "must be in 1900 or later")
		}
		o.CustomerBirthdate = b
	}
	if d := str("order.customer_document", in.CustomerDocument, 20); d != "" {
		o.CustomerDocument = brcode.NormalizeDigits(d)
		if !brcode.ValidCPF(o.CustomerDocument) {
			v.Add("order.customer_document", "invalid", "must be a valid CPF (11 digits with correct check digits)")
		}
	}
	if e := str("order.email", in.Email, 254); e != "" {
		if !validEmail(e) {
			v.Add("order.email", "invalid", "must be an email address like name@example.com, with at most 64 bytes before the @ and a top-level domain of two letters or more")
		}
		o.Email = e
	}
	if p := str("order.phone", in.Phone, 20); p != "" {
		digits, msg := ParsePhone(p)
		if msg != "" {
			v.Add("order.phone", "invalid", msg)
		}
		o.Phone = digits
	}
	if in.Address == nil {
		v.Add("order.address", "required", "is required")
		return o
	}
	o.Address = buildAddress(v, "order.address.", in.Address)
	return o
}

// requiredText is the text *p holds, trimmed (TrimText), or "" with a
// validation error on field when it is missing, blank, longer than max
// characters or not single-line text.
func requiredText(v *Validation, field string, p *string, max int) string {
	if p == nil || TrimText(*p) == "" {
		v.Add(field, "required", "is required")
		return ""
	}
	s := TrimText(*p)
	if TooLong(s, max) {
		v.Add(field, "too_long", fmt.Sprintf("must be at most %d characters", max))
	} else if !checkText(v, field, s, SingleLine) {
		return ""
	}
	return s
}

// buildAddress is the address a holds, its fields checked as prefix plus
// their names (order.address.zipcode), the zipcode kept as its digits.
// The city is named by its IBGE code only: the caller resolves it, and
// checks the zipcode against its state (CheckZipcodeState).
func buildAddress(v *Validation, prefix string, a *AddressInput) Address {
	var out Address
	if z := requiredText(v, prefix+"zipcode", a.Zipcode, 10); z != "" {
		out.Zipcode = brcode.NormalizeDigits(z)
		if !isDigits(out.Zipcode) || len(out.Zipcode) != 8 {
			v.Add(prefix+"zipcode", "invalid", "must be 8 digits")
		} else if !validZipcode(out.Zipcode) {
			v.Add(prefix+"zipcode", "invalid", "is not a zipcode of any state")
		}
	}
	out.Street = requiredText(v, prefix+"street", a.Street, 255)
	out.Number = requiredText(v, prefix+"number", a.Number, 32)
	out.Neighborhood = requiredText(v, prefix+"neighborhood", a.Neighborhood, 255)
	if a.Complement != nil && TrimText(*a.Complement) != "" {
		if c := requiredText(v, prefix+"complement", a.Complement, 255); c != "" {
			out.Complement = &c
		}
	}
	if c := requiredText(v, prefix+"city_ibge_code", a.CityIBGECode, 7); c != "" {
		if !isDigits(c) || len(c) != 7 {
			v.Add(prefix+"city_ibge_code", "invalid", "must be the 7-digit IBGE code of a municipality")
		}
		out.City.IBGECode = c
	}
	return out
}

// BuildAddress is the address in holds, checked as an order's is, its
// fields named prefix plus their names ("address." for a company's).
func BuildAddress(prefix string, in AddressInput) (*Address, error) {
	var v Validation
	a := buildAddress(&v, prefix, &in)
	if err := v.Err(); err != nil {
		return nil, err
	}
	return &a, nil
}

// CancelReason validates the optional reason given to cancel an order,
// sent as field (reason, or cancelation_reason): a value refused is
// refused on the field that carried it.
func CancelReason(field string, reason *string) (string, error) {
	if reason == nil || *reason == "" {
		return "customer_dropout", nil
	}
	return validReason(field, *reason)
}

// BillingCancelReason validates the required reason to cancel a billing.
func BillingCancelReason(reason *string) (string, error) {
	if reason == nil {
		return validReason("cancelation_reason", "")
	}
	return validReason("cancelation_reason", *reason)
}

func validReason(field, reason string) (string, error) {
	if !slices.Contains(CancelationReasons, reason) {
		msg := "must be one of " + strings.Join(CancelationReasons, ", ")
		return "", &Error{Code: EINVALID, Message: field + " " + msg, Fields: []FieldError{{Field: field, Code: "invalid", Message: msg}}}
	}
	return reason, nil
}
