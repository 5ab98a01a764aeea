package parcela

import (
	"time"

	"github.com/shopspring/decimal"
)

// BillType tells the down-payment (or upfront) bill from the monthly installments.
type BillType string

const (
	BillTypeDownPayment BillType = "down_payment"
	BillTypeInstallment BillType = "installment"
)

// BillDetails breaks a bill's amount into its parts; they always sum to it.
// The down-payment bill carries down_payment and registration_fee, each
// installment carries amortization and interest.
type BillDetails struct {
	DownPaymentCents     int64 `json:"down_payment"`
	RegistrationFeeCents int64 `json:"registration_fee"`
	AmortizationCents    int64 `json:"amortization"`
	InterestCents        int64 `json:"interest"`
}

// DownPaymentType says how ScheduleInput.DownPaymentValue is read.
type DownPaymentType string

const (
	DownPaymentPercentage DownPaymentType = "percentage" // a fraction of the amount: 0.2 is 20%
	DownPaymentAbsolute   DownPaymentType = "absolute"   // whole cents
)

// ScheduleInput is everything a billing schedule depends on, the charge
// time included, so the same input always yields the same schedule.
type ScheduleInput struct {
	AmountCents      int64
	Upfront          bool
	DownPaymentType  DownPaymentType // financed only
	DownPaymentValue Rate            // fraction for percentage, cents for absolute
	RegistrationFee  Rate            // fraction of AmountCents, added to the first bill
	InterestRate     Rate            // monthly
	Installments     int             // N, every bill counted: 1 down payment + N-1 installments
	DueDay           int             // 1..31, financed only
	ChargedAt        time.Time
	ExpiresIn        time.Duration // first bill's due/expiry offset
}

// ScheduledBill is one bill of a schedule, before it is stored.
type ScheduledBill struct {
	Number      int // 0 for the first (down payment) bill, k for installment k
	Type        BillType
	AmountCents int64
	DueDate     time.Time // in SaoPaulo; not moved to a business day
	Details     BillDetails
}

// EffectiveDueDate is when the bill becomes late. The first bill is due
// when its payment expires, to the millisecond; installments move to the
// next business day.
func (b ScheduledBill) EffectiveDueDate() time.Time {
	if b.Number == 0 {
		return b.DueDate
	}
	return EffectiveDueDate(b.DueDate)
}

// Schedule is the full set of bills of a billing and its totals.
type Schedule struct {
	Bills                []ScheduledBill
	TotalCents           int64
	PrincipalCents       int64
	DownPaymentCents     int64
	RegistrationFeeCents int64
	InstallmentCents     int64 // the rounded PMT (0 for upfront)
}

// BuildSchedule splits a sale into bills. Upfront: one down_payment bill for
// the whole amount. Financed: a down-payment bill and N-1 installments by the
// Price table (French amortization), the last of which settles the balance
// exactly so that the amortizations sum to the principal. The registration
// fee always goes into the first bill. Invalid input returns an EINVALID *Error.
func BuildSchedule(in ScheduleInput) (Schedule, error) {
	if err := in.validate(); err != nil {
		return Schedule{}, err
	}
	fee := in.RegistrationFee.MulCents(in.AmountCents)
	firstDue := in.ChargedAt.Add(in.ExpiresIn).In(SaoPaulo)
	if in.Upfront {
		first := downPaymentBill(in.AmountCents, fee, firstDue)
		return Schedule{
			Bills:                []ScheduledBill{first},
			TotalCents:           first.AmountCents,
			DownPaymentCents:     in.AmountCents,
			RegistrationFeeCents: fee,
		}, nil
	}

	down, err := in.downPaymentCents()
	if err != nil {
		return Schedule{}, err
	}
	principal := in.AmountCents - down
	n := in.Installments - 1
	pmt := PriceInstallment(principal, in.InterestRate, n)

	s := Schedule{
		Bills:                make([]ScheduledBill, 0, in.Installments),
		PrincipalCents:       principal,
		DownPaymentCents:     down,
		RegistrationFeeCents: fee,
		InstallmentCents:     pmt,
	}
	s.Bills = append(s.Bills, downPaymentBill(down, fee, firstDue))
	balance := principal
	for k := 1; k <= n; k++ {
		interest := in.InterestRate.MulCents(balance)
		amortization := pmt - interest
		if k == n {
			amortization = balance // the last one absorbs every rounding leftover
		}
		if amortization < 0 || amortization > balance {
			// Only reachable when the principal is a few cents per installment:
			// the rounded PMT would repay more than was lent.
			return Schedule{}, Errorf(EINVALID, "principal of %d cents is too small for %d installments", principal, n)
		}
		balance -= amortization
		s.Bills = append(s.Bills, ScheduledBill{
			Number:      k,
			Type:        BillTypeInstallment,
			AmountCents: amortization + interest,
			DueDate:     InstallmentDueDate(in.ChargedAt, k, in.DueDay),
			Details:     BillDetails{AmortizationCents: amortization, InterestCents: interest},
		})
	}
	for _, b := range s.Bills {
		s.TotalCents += b.AmountCents
	}
	return s, nil
}

func downPaymentBill(down, fee int64, due time.Time) ScheduledBill {
	return ScheduledBill{
		Number:      0,
		Type:        BillTypeDownPayment,
		AmountCents: down + fee,
		DueDate:     due,
		Details:     BillDetails{DownPaymentCents: down, RegistrationFeeCents: fee},
	}
}

func (in ScheduleInput) validate() error {
	switch {
	case in.AmountCents <= 0:
		return Errorf(EINVALID, "amount must be positive")
	case in.RegistrationFee.IsNegative():
		return Errorf(EINVALID, "registration fee can not be negative")
	case in.ExpiresIn < 0:
		return Errorf(EINVALID, "expiry can not be negative")
	case in.Installments < 1:
		return Errorf(EINVALID, "installments must be at least 1")
	case in.Upfront && in.Installments != 1:
		return Errorf(EINVALID, "an upfront payment has exactly 1 installment")
	case in.Upfront:
		return nil // the remaining fields only shape financed plans
	case in.Installments < 2:
		return Errorf(EINVALID, "a financed plan needs at least 2 installments")
	case in.DueDay < 1 || in.DueDay > 31:
		return Errorf(EINVALID, "due day must be between 1 and 31")
	case in.InterestRate.IsNegative():
		return Errorf(EINVALID, "interest rate can not be negative")
	case in.DownPaymentValue.IsNegative():
		return Errorf(EINVALID, "down payment can not be negative")
	}
	return nil
}

// downPaymentCents reads the down payment of a financed plan in cents.
func (in ScheduleInput) downPaymentCents() (int64, error) {
	v := in.DownPaymentValue.Decimal()
	var down int64
	switch in.DownPaymentType {
	case DownPaymentPercentage:
		if v.GreaterThan(decimal.NewFromInt(1)) {
			return 0, Errorf(EINVALID, "down payment can not exceed the amount")
		}
		down = in.DownPaymentValue.MulCents(in.AmountCents)
	case DownPaymentAbsolute:
		if !v.IsInteger() {
			return 0, Errorf(EINVALID, "an absolute down payment must be whole cents")
		}
		if v.GreaterThan(decimal.NewFromInt(in.AmountCents)) { // checked before IntPart can overflow
			return 0, Errorf(EINVALID, "down payment can not exceed the amount")
		}
		down = v.IntPart()
	default:
		return 0, Errorf(EINVALID, "down payment type must be percentage or absolute, not %q", in.DownPaymentType)
	}
	return down, nil
}

// powPrecision bounds the decimal places kept while raising (1+i) to n; 60
// keeps the PMT exact to far below a cent for any realistic amount.
const powPrecision = 60

// PriceInstallment returns the Price-table installment PMT = P·i / (1 − (1+i)^−n),
// or P/n when i is 0, rounded half-up to the cent. It is 0 when n < 1.
func PriceInstallment(principalCents int64, monthlyRate Rate, n int) int64 {
	if n < 1 {
		return 0
	}
	p := decimal.NewFromInt(principalCents)
	i := monthlyRate.Decimal()
	if i.IsZero() {
		return p.DivRound(decimal.NewFromInt(int64(n)), 0).IntPart()
	}
	// P·i/(1 − f^−1) = P·i·f/(f − 1) with f = (1+i)^n, which avoids a
	// second inexact division.
	f := powTruncated(decimal.NewFromInt(1).Add(i), n)
	return p.Mul(i).Mul(f).DivRound(f.Sub(decimal.NewFromInt(1)), 0).IntPart()
}

// powTruncated computes x^n by repeated squaring, truncating each product
// to powPrecision places so the digits stay bounded for long plans.
func powTruncated(x decimal.Decimal, n int) decimal.Decimal {
	result := decimal.NewFromInt(1)
	for ; n > 0; n >>= 1 {
		if n&1 == 1 {
			result = result.Mul(x).Truncate(powPrecision)
		}
		x = x.Mul(x).Truncate(powPrecision)
	}
	return result
}
