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
	return withCost(in.ChargedAt, s)
}

// withCost fills a financed schedule's cost disclosure (CostOf).
func withCost(chargedAt time.Time, s Schedule) (Schedule, error) {
	cost, err := CostOf(chargedAt, s.Bills)
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
	if in.Upfront {
		fee := in.RegistrationFee.MulCents(in.AmountCents) // ≤ AmountCents: the rate is at most 1
		first := downPaymentBill(in.AmountCents, fee, in.ChargedAt.Add(in.ExpiresIn).In(SaoPaulo))
		s := Schedule{
			Bills:                []ScheduledBill{first},
			TotalCents:           first.AmountCents,
			DownPaymentCents:     in.AmountCents,
			RegistrationFeeCents: fee,
		}
		return s, s.checkBills()
	}
	b, err := newFinancedBasis(in)
	if err != nil {
		return Schedule{}, err
	}
	return b.bills(in.Installments)
}

// financedBasis is what a financed schedule takes that does not depend on
// its number of installments: the offer page plans every number (see
// PlanCounts), the same way as a charge plans one.
type financedBasis struct {
	fee, down, principal int64
	rate                 Rate
	rateText             string // the rate's decimal text, a price table's key
	chargedAt, firstDue  time.Time
	dueDay               int
	dues                 []time.Time // dues[k] is installment k's due date, k ≥ 1, as far as asked
	daysTo               []int64     // daysTo[k]: calendar days from the charge to bill k's due date
	days                 int64       // calendar days from the charge to installment 1
}

// newFinancedBasis checks in, which must be financed, as validate does.
func newFinancedBasis(in ScheduleInput) (*financedBasis, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	b := &financedBasis{fee: in.RegistrationFee.MulCents(in.AmountCents), rate: in.InterestRate, chargedAt: in.ChargedAt,
		firstDue: in.ChargedAt.Add(in.ExpiresIn).In(SaoPaulo), dueDay: in.DueDay}
	var err error
	if b.down, err = in.downPaymentCents(); err != nil {
		return nil, err
	}
	b.principal = in.AmountCents - b.down
	b.rateText = b.rate.Decimal().String()
	b.dues, b.daysTo = []time.Time{{}}, []int64{calendarDaysBetween(in.ChargedAt, b.firstDue)}
	b.growDues(1)
	b.days = b.daysTo[1]
	return b, nil
}

// growDues counts the due dates up to installment n.
func (b *financedBasis) growDues(n int) {
	for k := len(b.dues); k <= n; k++ {
		due := InstallmentDueDate(b.firstDue, k, b.dueDay)
		b.dues, b.daysTo = append(b.dues, due), append(b.daysTo, calendarDaysBetween(b.chargedAt, due))
	}
}

// withCost is withCost for a schedule of b's, with its due dates' days
// counted once for every number of installments.
func (b *financedBasis) withCost(s Schedule) (Schedule, error) {
	cost, err := costOf(s.Bills, func(i int) int64 { return b.daysTo[s.Bills[i].Number] })
	if err != nil {
		return Schedule{}, err
	}
	s.TotalInterestCents, s.CETAnnualRate = cost.TotalInterestCents, cost.CETAnnualRate
	return s, nil
}

// checkCost is withCost's error alone (the package's checkCost), for a schedule whose
// disclosure nobody reads.
func (b *financedBasis) checkCost(s Schedule) error {
	return checkCost(s.Bills, func(i int) int64 { return b.daysTo[s.Bills[i].Number] })
}

// bills is the schedule of installments bills (the down payment's
// included), without the cost disclosure.
func (b *financedBasis) bills(installments int) (Schedule, error) {
	n := installments - 1
	b.growDues(n)
	amounts, err := priceTableOf(b.principal, b.rate, b.rateText, n, b.days)
	if err != nil {
		return Schedule{}, err
	}
	s := Schedule{
		Bills:                make([]ScheduledBill, 0, installments),
		PrincipalCents:       b.principal,
		DownPaymentCents:     b.down,
		RegistrationFeeCents: b.fee,
		InstallmentCents:     amounts.pmt,
		FirstPeriodDays:      b.days,
	}
	s.Bills = append(s.Bills, downPaymentBill(b.down, b.fee, b.firstDue))
	for k := 1; k <= n; k++ {
		p := amounts.parts[k-1]
		s.Bills = append(s.Bills, ScheduledBill{
			Number:      k,
			Type:        BillTypeInstallment,
			AmountCents: p.AmortizationCents + p.InterestCents,
			DueDate:     b.dues[k],
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
