package parcela

import (
	"fmt"
	"strings"
	"time"

	"parcela/brcode"
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
	// BoletoGraceBusinessDays is how many business days after its last
	// payable day a boleto still waits for the bank's notice of payment
	// before it expires (BoletoExpiry).
	BoletoGraceBusinessDays int

	CreatedAt time.Time
	UpdatedAt time.Time
}

// MaxFineRate is the legal ceiling of a late fine in Brazil (2%, CDC art. 52).
var MaxFineRate = MustRate("0.02")

// MaxLateInterestRate is the ceiling of late interest: 1% a month, the
// moratory interest the Civil Code allows by default (art. 406 with CTN
// art. 161) and what consumers' courts accept.
var MaxLateInterestRate = MustRate("0.01")

// MaxBoletoGraceBusinessDays bounds the settlement grace of a boleto.
const MaxBoletoGraceBusinessDays = 5

// NewCompany returns a company with the product defaults.
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

		BoletoGraceBusinessDays: 1,
	}
}

// InIssueWindow tells whether an installment due at due is issued its
// payment at now: from the start of the São Paulo day InstallmentIssueDays
// calendar days before its due day (it is due at that day's end). Counted
// as InstallmentIssueDays × 24 h, the window was an hour short across the
// end of daylight saving (a 25-hour day), and the boleto promised 10 days
// ahead came 9 (an audit).
func (c *Company) InIssueWindow(due, now time.Time) bool {
	y, m, d := now.In(SaoPaulo).Date()
	return !due.After(EndOfDay(time.Date(y, m, d+c.InstallmentIssueDays, 12, 0, 0, 0, SaoPaulo)))
}

// IssueWindowSlack is how far past InstallmentIssueDays × 24 h the store
// selects installments to issue: portable SQL adds whole milliseconds, and
// a window holding the end of daylight saving is an hour longer. The
// issue itself checks the exact window (InIssueWindow).
const IssueWindowSlack = time.Hour

// Validate checks an operator-supplied company. The document is kept as
// its digits (and capital letters, for an alphanumeric CNPJ), the phone as
// its digits without the country code.
func (c *Company) Validate() error {
	var v Validation
	switch name := strings.TrimSpace(c.Name); {
	case name == "":
		v.Add("name", "required", "is required")
	case TooLong(name, 255):
		v.Add("name", "too_long", "must be at most 255 characters")
	case brcode.PixName(name) == "":
		// A Pix code carries the name in ASCII: without a letter or digit
		// that survives folding, every Pix charge would fail.
		v.Add("name", "invalid", "must contain a Latin letter or a digit (Pix codes carry the name in ASCII)")
	default:
		checkText(&v, "name", c.Name, SingleLine)
	}
	// An alphanumeric CNPJ's letters are capitals; one typed in lower
	// case is the same CNPJ (an audit).
	if doc := strings.ToUpper(brcode.NormalizeDigits(c.Document)); len(doc) == 11 && brcode.ValidCPF(doc) || len(doc) == 14 && brcode.ValidCNPJ(doc) {
		c.Document = doc
	} else {
		v.Add("document", "invalid", "must be a CNPJ (14 characters) or, for a sole seller, a CPF (11 digits), with correct check digits")
	}
	if !validSlug(c.Slug) {
		v.Add("slug", "invalid", "must be 1-64 lowercase letters, digits or hyphens")
	}
	if c.Email != nil && !validEmail(*c.Email) {
		v.Add("email", "invalid", "must be an email address like name@example.com")
	}
	if c.Phone != nil {
		if digits, msg := ParsePhone(*c.Phone); msg != "" {
			v.Add("phone", "invalid", msg)
		} else {
			c.Phone = &digits
		}
	}
	if c.Logo != "" {
		// https only: the pages show no image from an http address (a
		// browser blocks it on an https page), and a logo the operator was
		// told was taken showed the company's initial instead (an audit).
		if strings.HasPrefix(strings.ToLower(c.Logo), "http://") {
			v.Add("logo", "invalid", "must be an https:// URL: the pages show no image from an http address")
		} else {
			checkImageURL(&v, "logo", c.Logo)
		}
	}
	checkRate(&v, "max_interest_rate", c.MaxInterestRate, rateOne)
	checkRate(&v, "min_down_payment_rate", c.MinDownPaymentRate, rateOne)
	checkRate(&v, "registration_fee", c.RegistrationFee, rateOne)
	checkRate(&v, "fine_rate", c.FineRate, MaxFineRate)
	checkRate(&v, "monthly_interest_rate", c.MonthlyInterestRate, MaxLateInterestRate)
	switch c.TakeRateType {
	case "percentage":
		checkRate(&v, "take_rate_value", c.TakeRateValue, rateOne)
	case "absolute":
		checkRateCents(&v, "take_rate_value", c.TakeRateValue)
	default:
		v.Add("take_rate_type", "invalid", "must be percentage or absolute")
	}
	if c.MaxInstallments < 1 || c.MaxInstallments > MaxInstallments {
		v.Add("max_installments", "invalid", fmt.Sprintf("must be between 1 and %d", MaxInstallments))
	}
	checkAmount(&v, "min_down_payment_cents", c.MinDownPaymentCents, 0)
	checkAmount(&v, "min_installment_amount_cents", c.MinInstallmentCents, 0)
	if c.PaymentExpiryHours < 1 || c.PaymentExpiryHours > 720 {
		v.Add("payment_expiry_hours", "invalid", "must be between 1 and 720")
	}
	if c.BoletoGraceBusinessDays < 0 || c.BoletoGraceBusinessDays > MaxBoletoGraceBusinessDays {
		v.Add("boleto_grace_business_days", "invalid", fmt.Sprintf("must be between 0 and %d", MaxBoletoGraceBusinessDays))
	}
	return v.Err()
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
