package parcela

import (
	"strings"
	"time"
)

// Environment separates sandbox from production data. Every
// environment-owned row carries one, and each listener serves exactly one.
type Environment string

const (
	Sandbox    Environment = "sandbox"
	Production Environment = "production"
)

// ParseEnvironment accepts "sandbox" or "production".
func ParseEnvironment(s string) (Environment, error) {
	switch Environment(s) {
	case Sandbox, Production:
		return Environment(s), nil
	}
	return "", Errorf(EINVALID, "environment must be sandbox or production, not %q", s)
}

// Company is a seller. Companies are global (both environments) and created
// by operators; they hold the limits and defaults applied to offers and charges.
type Company struct {
	ID       string
	Name     string
	Document string
	Slug     string
	Email    *string
	Phone    *string
	Logo     string
	Dark     bool
	Palette  string
	Address  *Address

	MaxInterestRate      Rate
	MaxInstallments      int
	MinDownPaymentRate   Rate
	MinDownPaymentCents  int64
	RegistrationFee      Rate
	TakeRateType         string
	TakeRateValue        Rate
	FineRate             Rate // never above MaxFineRate
	MonthlyInterestRate  Rate
	MinInstallmentCents  int64
	PaymentExpiryHours   int
	InstallmentIssueDays int // installment payments are issued this many days before due

	CreatedAt time.Time
	UpdatedAt time.Time
}

// MaxFineRate is the legal ceiling of a late fine in Brazil (2%, CDC art. 52).
var MaxFineRate = MustRate("0.02")

// NewCompany returns a company with the product defaults of DESIGN §1.
func NewCompany(name, document, slug string) Company {
	return Company{
		Name:                 name,
		Document:             document,
		Slug:                 slug,
		Palette:              "default",
		MaxInterestRate:      MustRate("0.0499"),
		MaxInstallments:      24,
		MinDownPaymentRate:   MustRate("0.1"),
		MinDownPaymentCents:  0,
		RegistrationFee:      MustRate("0"),
		TakeRateType:         "percentage",
		TakeRateValue:        MustRate("0.0499"),
		FineRate:             MustRate("0.02"),
		MonthlyInterestRate:  MustRate("0.01"),
		MinInstallmentCents:  5000,
		PaymentExpiryHours:   72,
		InstallmentIssueDays: 10,
	}
}

// Validate checks an operator-supplied company.
func (c *Company) Validate() error {
	var v Validation
	if strings.TrimSpace(c.Name) == "" {
		v.Add("name", "required", "is required")
	}
	if !isDigits(c.Document) || (len(c.Document) != 11 && len(c.Document) != 14) {
		v.Add("document", "invalid", "must be a CPF (11 digits) or CNPJ (14 digits)")
	}
	if !validSlug(c.Slug) {
		v.Add("slug", "invalid", "must be 1-64 lowercase letters, digits or hyphens")
	}
	rateIn(&v, "max_interest_rate", c.MaxInterestRate, MustRate("1"))
	rateIn(&v, "min_down_payment_rate", c.MinDownPaymentRate, MustRate("1"))
	rateIn(&v, "registration_fee", c.RegistrationFee, MustRate("1"))
	rateIn(&v, "fine_rate", c.FineRate, MaxFineRate)
	rateIn(&v, "monthly_interest_rate", c.MonthlyInterestRate, MustRate("1"))
	if c.MaxInstallments < 1 || c.MaxInstallments > 120 {
		v.Add("max_installments", "invalid", "must be between 1 and 120")
	}
	if c.MinDownPaymentCents < 0 {
		v.Add("min_down_payment_cents", "too_small", "must not be negative")
	}
	if c.MinInstallmentCents < 0 {
		v.Add("min_installment_amount_cents", "too_small", "must not be negative")
	}
	if c.PaymentExpiryHours < 1 || c.PaymentExpiryHours > 720 {
		v.Add("payment_expiry_hours", "invalid", "must be between 1 and 720")
	}
	return v.Err()
}

func rateIn(v *Validation, field string, r, max Rate) {
	if r.IsNegative() {
		v.Add(field, "too_small", "must not be negative")
	} else if r.Cmp(max) > 0 {
		v.Add(field, "too_large", "must be at most "+max.String())
	}
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func validSlug(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// Token is an API access token. Only its SHA-256 hash is stored; the secret
// is shown once, at creation.
type Token struct {
	ID          string
	CompanyID   string
	Environment Environment
	Prefix      string // first characters, to recognise a token in a list
	Hash        string // hex SHA-256 of the whole token
	CreatedAt   time.Time
	RevokedAt   *time.Time
	LastUsedAt  *time.Time
}

// Auth is who a request acts as: one company in one environment.
type Auth struct {
	CompanyID   string
	Environment Environment
	TokenID     string
}
