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
		OfferID           *string `json:"offer_id"`
		CustomerName      *string `json:"customer_name"`
		CustomerBirthdate *string `json:"customer_birthdate"`
		CustomerDocument  *string `json:"customer_document"`
		Email             *string `json:"email"`
		Phone             *string `json:"phone"`
		Address           *struct {
			Zipcode      *string `json:"zipcode"`
			Street       *string `json:"street"`
			Number       *string `json:"number"`
			Complement   *string `json:"complement"`
			Neighborhood *string `json:"neighborhood"`
			CityIBGECode *string `json:"city_ibge_code"`
		} `json:"address"`
	} `json:"order"`
}

// BuildOrder validates the customer data of a request and returns the order
// to store: document, phone and zipcode as digits. The offer and the city
// are checked by the caller, which knows the company's rows; the caller also
// checks the zipcode against the city's state (CheckZipcodeState).
func BuildOrder(req OrderRequest, now time.Time) (*Order, error) {
	var v Validation
	in := req.Order
	o := &Order{Status: OrderPending}
	str := func(field string, p *string, max int) string {
		if p == nil || TrimText(*p) == "" {
			v.Add(field, "required", "is required")
			return ""
		}
		s := TrimText(*p)
		if TooLong(s, max) {
			v.Add(field, "too_long", fmt.Sprintf("must be at most %d characters", max))
		} else if !checkText(&v, field, s, SingleLine) {
			return ""
		}
		return s
	}
	if o.OfferID = str("order.offer_id", in.OfferID, 64); o.OfferID != "" && !IsUUID(o.OfferID) {
		v.Add("order.offer_id", "not_found", "is not an offer of this company and environment")
	}
	o.CustomerName = str("order.customer_name", in.CustomerName, 255)
	if b := str("order.customer_birthdate", in.CustomerBirthdate, 10); b != "" {
		t, err := time.ParseInLocation(time.DateOnly, b, SaoPaulo)
		switch {
		case err != nil:
			v.Add("order.customer_birthdate", "invalid", "must be a date as YYYY-MM-DD")
		case !t.Before(SaoPauloDate(now)):
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
		return nil, v.Err()
	}
	a := in.Address
	if z := str("order.address.zipcode", a.Zipcode, 10); z != "" {
		o.Address.Zipcode = brcode.NormalizeDigits(z)
		if !isDigits(o.Address.Zipcode) || len(o.Address.Zipcode) != 8 {
			v.Add("order.address.zipcode", "invalid", "must be 8 digits")
		} else if !validZipcode(o.Address.Zipcode) {
			v.Add("order.address.zipcode", "invalid", "is not a zipcode of any state")
		}
	}
	o.Address.Street = str("order.address.street", a.Street, 255)
	o.Address.Number = str("order.address.number", a.Number, 32)
	o.Address.Neighborhood = str("order.address.neighborhood", a.Neighborhood, 255)
	if a.Complement != nil && TrimText(*a.Complement) != "" {
		if c := str("order.address.complement", a.Complement, 255); c != "" {
			o.Address.Complement = &c
		}
	}
	if c := str("order.address.city_ibge_code", a.CityIBGECode, 7); c != "" {
		if !isDigits(c) || len(c) != 7 {
			v.Add("order.address.city_ibge_code", "invalid", "must be the 7-digit IBGE code of a municipality")
		}
		o.Address.City.IBGECode = c
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	return o, nil
}

// CancelReason validates the optional reason given to cancel an order.
func CancelReason(reason *string) (string, error) {
	if reason == nil || *reason == "" {
		return "customer_dropout", nil
	}
	return validReason("reason", *reason)
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
