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
	TotalCents           int64 // the total payable: every bill, down payment and fee included
	PrincipalCents       int64 // the amount financed: amount − down payment
	DownPaymentCents     int64
	RegistrationFeeCents int64
	InstallmentCents     int64 // the rounded PMT (0 for upfront)
	FirstPeriodDays      int64 // calendar days from the charge to installment 1 (0 for upfront)
	TotalInterestCents   int64
	CETAnnualRate        *Rate // the effective annual cost (CostOf); nil when nothing is financed
}

// BuildSchedule splits a sale into bills. Upfront: one down_payment bill for
// the whole amount. Financed: a down-payment bill and N-1 installments by the
// Price table (French amortization), the last of which settles the balance
// exactly so that the amortizations sum to the principal. The registration
// fee always goes into the first bill.
//
// Installment 1 falls due FirstPeriodDays (d) after the charge, which is
// rarely one month, so its interest is pro rata: the Price table runs on
// P·(1+i)^(d/30 − 1), the principal carried to one month before installment
// 1, and installment 1's interest is P·((1+i)^(d/30) − 1); each later one is
// the balance × i.
//
// Invalid input, a bill of 0 cents or one above MaxAmountCents returns an
// EINVALID *Error.
func BuildSchedule(in ScheduleInput) (Schedule, error) {
	s, err := buildBills(in)
	if err != nil || in.Upfront {
		return s, err
	}
	cost, err := CostOf(in.ChargedAt, s.Bills)
	if err != nil {
		return Schedule{}, err
	}
	s.TotalInterestCents, s.CETAnnualRate = cost.TotalInterestCents, cost.CETAnnualRate
	return s, nil
}

// buildBills is BuildSchedule without the cost disclosure.
func buildBills(in ScheduleInput) (Schedule, error) {
	if err := in.validate(); err != nil {
		return Schedule{}, err
	}
	fee := in.RegistrationFee.MulCents(in.AmountCents) // ≤ AmountCents: the rate is at most 1
	firstDue := in.ChargedAt.Add(in.ExpiresIn).In(SaoPaulo)
	if in.Upfront {
		first := downPaymentBill(in.AmountCents, fee, firstDue)
		s := Schedule{
			Bills:                []ScheduledBill{first},
			TotalCents:           first.AmountCents,
			DownPaymentCents:     in.AmountCents,
			RegistrationFeeCents: fee,
		}
		return s, s.checkBills()
	}

	down, err := in.downPaymentCents()
	if err != nil {
		return Schedule{}, err
	}
	principal := in.AmountCents - down
	n := in.Installments - 1
	dues := make([]time.Time, n+1)
	for k := 1; k <= n; k++ {
		dues[k] = InstallmentDueDate(firstDue, k, in.DueDay)
	}
	days := calendarDaysBetween(in.ChargedAt, dues[1])
	amounts, err := priceTable(principal, in.InterestRate, n, days)
	if err != nil {
		return Schedule{}, err
	}

	s := Schedule{
		Bills:                make([]ScheduledBill, 0, in.Installments),
		PrincipalCents:       principal,
		DownPaymentCents:     down,
		RegistrationFeeCents: fee,
		InstallmentCents:     amounts.pmt,
		FirstPeriodDays:      days,
	}
	s.Bills = append(s.Bills, downPaymentBill(down, fee, firstDue))
	for k := 1; k <= n; k++ {
		p := amounts.parts[k-1]
		s.Bills = append(s.Bills, ScheduledBill{
			Number:      k,
			Type:        BillTypeInstallment,
			AmountCents: p.AmortizationCents + p.InterestCents,
			DueDate:     dues[k],
			Details:     p,
		})
	}
	if err := s.checkBills(); err != nil {
		return Schedule{}, err
	}
	return s, nil
}

// checkBills refuses bills no boleto or Pix code can carry (0 cents, or
// above MaxAmountCents) and sums the total.
func (s *Schedule) checkBills() error {
	amounts := make([]int64, 0, len(s.Bills))
	for _, b := range s.Bills {
		switch {
		case b.AmountCents < 1 && b.Number == 0:
			return Errorf(EINVALID, "the plan's first bill would be of 0 cents: it needs a down payment or a registration fee")
		case b.AmountCents < 1:
			return Errorf(EINVALID, "installment %d would be of %d cents", b.Number, b.AmountCents)
		case b.AmountCents > MaxAmountCents:
			return Errorf(EINVALID, "a bill of %d cents is more than a boleto or Pix code can carry (%d)", b.AmountCents, int64(MaxAmountCents))
		}
		amounts = append(amounts, b.AmountCents)
	}
	total, err := sumCents(amounts...)
	s.TotalCents = total
	return err
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
	var v Validation // its messages become one error: the first field at fault
	switch {
	case in.AmountCents <= 0:
		return Errorf(EINVALID, "amount must be positive")
	case in.AmountCents > MaxAmountCents:
		return Errorf(EINVALID, "amount must be at most %d cents", int64(MaxAmountCents))
	case !checkRate(&v, "registration fee", in.RegistrationFee, rateOne):
		return Errorf(EINVALID, "%s %s", v.Fields[0].Field, v.Fields[0].Message)
	case in.ExpiresIn < 0:
		return Errorf(EINVALID, "expiry can not be negative")
	case in.Installments < 1:
		return Errorf(EINVALID, "installments must be at least 1")
	case in.Installments > MaxInstallments:
		return Errorf(EINVALID, "installments must be at most %d", MaxInstallments)
	case in.Upfront && in.Installments != 1:
		return Errorf(EINVALID, "an upfront payment has exactly 1 installment")
	case in.Upfront:
		return nil // the remaining fields only shape financed plans
	case in.Installments < 2:
		return Errorf(EINVALID, "a financed plan needs at least 2 installments")
	case in.DueDay < 1 || in.DueDay > 31:
		return Errorf(EINVALID, "due day must be between 1 and 31")
	case !checkRate(&v, "interest rate", in.InterestRate, rateOne):
		return Errorf(EINVALID, "%s %s", v.Fields[0].Field, v.Fields[0].Message)
	case in.DownPaymentValue.IsNegative():
		return Errorf(EINVALID, "down payment can not be negative")
	}
	return nil
}

// MaxInstallments is the most bills a plan may have (a down payment and ten
// years of monthly installments).
const MaxInstallments = 120

// downPaymentCents reads the down payment of a financed plan in cents.
func (in ScheduleInput) downPaymentCents() (int64, error) {
	var v Validation
	switch in.DownPaymentType {
	case DownPaymentPercentage:
		if !checkRate(&v, "down payment", in.DownPaymentValue, rateOne) {
			return 0, Errorf(EINVALID, "%s %s", v.Fields[0].Field, v.Fields[0].Message)
		}
		return in.DownPaymentValue.MulCents(in.AmountCents), nil
	case DownPaymentAbsolute:
		if !checkRateCents(&v, "down payment", in.DownPaymentValue) {
			return 0, Errorf(EINVALID, "an absolute down payment must be whole cents between 0 and the amount")
		}
		if in.DownPaymentValue.Decimal().GreaterThan(decimal.NewFromInt(in.AmountCents)) {
			return 0, Errorf(EINVALID, "down payment can not exceed the amount")
		}
		return in.DownPaymentValue.Decimal().IntPart(), nil
	}
	return 0, Errorf(EINVALID, "down payment type must be percentage or absolute, not %q", in.DownPaymentType)
}
