package parcela

import (
	"fmt"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"
	"unsafe"
)

func TestDetectBrand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		number string
		want   CardBrand
	}{
		{"4111111111111111", BrandVisa},
		{"4000000000000002", BrandVisa},
		{"5555555555554444", BrandMastercard},
		{"5105105105105100", BrandMastercard},
		{"2223000048410010", BrandMastercard}, // 2-series, first BIN
		{"2720990000000007", BrandMastercard}, // 2-series, last BIN
		{"2721000000000000", ""},              // just past the 2-series
		{"378282246310005", BrandAmex},
		{"371449635398431", BrandAmex},
		{"6362970000457013", BrandElo},
		{"4011780000000006", BrandElo}, // an Elo BIN inside Visa's 4
		{"5090000000000000", BrandElo},
		{"6500310000000005", BrandElo},
		{"6062825624254001", BrandHipercard},
		{"3841000000000007", BrandHipercard},
		{"6011111111111117", ""}, // Discover is not taken
		{"3530111333300000", ""}, // nor JCB
		{"41111", ""},
		{"abcdefabcdef", ""},
	}
	for _, tt := range tests {
		if got := DetectBrand(tt.number); got != tt.want {
			t.Errorf("DetectBrand(%s) = %q, want %q", tt.number, got, tt.want)
		}
	}
}

func TestLuhn(t *testing.T) {
	t.Parallel()
	for n, want := range map[string]bool{
		"4111111111111111": true, "4111111111111112": false, "378282246310005": true,
		"0": false, "": false, "79927398713": true, "79927398710": false, "4111-1111": false,
	} {
		if got := Luhn(n); got != want {
			t.Errorf("Luhn(%q) = %v, want %v", n, got, want)
		}
	}
}

func TestCardPaymentCheck(t *testing.T) {
	t.Parallel()
	// 2026-03-31 23:59 in São Paulo: the last minute of March.
	now := time.Date(2026, time.March, 31, 23, 59, 0, 0, SaoPaulo)
	valid := CardPayment{Number: "4111 1111 1111 1111", HolderName: "MARIA DA SILVA", ExpiryMonth: 3, ExpiryYear: 2026, CVV: "123", Installments: 1}
	tests := []struct {
		name   string
		edit   func(c *CardPayment)
		now    time.Time
		fields map[string]string // field → code
	}{
		{"valid through the end of its month", func(c *CardPayment) {}, now, nil},
		{"two-digit year", func(c *CardPayment) { c.ExpiryYear = 26 }, now, nil},
		// Two digits are the year nearest ahead: in 2095, 01 is 2101 and
		// 94 is 2094, not 2001 (expired) and 2094.
		{"two-digit year past 2099, in 2095", func(c *CardPayment) { c.ExpiryYear = 1 }, now.AddDate(69, 0, 0), nil},
		{"two-digit year of 2099, in 2095", func(c *CardPayment) { c.ExpiryYear = 99 }, now.AddDate(69, 0, 0), nil},
		{"two-digit year gone by, in 2095", func(c *CardPayment) { c.ExpiryYear = 94 }, now.AddDate(69, 0, 0), map[string]string{"card.expiry": "expired"}},
		{"two-digit year, 2100", func(c *CardPayment) { c.ExpiryYear = 0 }, now.AddDate(74, 0, 0), nil},
		{"expired at the turn of the month", func(c *CardPayment) {}, now.Add(time.Minute), map[string]string{"card.expiry": "expired"}},
		{"month out of range", func(c *CardPayment) { c.ExpiryMonth = 13 }, now, map[string]string{"card.expiry": "invalid"}},
		{"too far ahead", func(c *CardPayment) { c.ExpiryYear = 2050 }, now, map[string]string{"card.expiry": "invalid"}},
		// Years past what time.Date computes in wrapped round to the past,
		// and read as expired.
		{"a year past int32", func(c *CardPayment) { c.ExpiryYear = 1 << 40 }, now, map[string]string{"card.expiry": "invalid"}},
		{"the largest year", func(c *CardPayment) { c.ExpiryYear = math.MaxInt }, now, map[string]string{"card.expiry": "invalid"}},
		{"bad check digit", func(c *CardPayment) { c.Number = "4111111111111112" }, now, map[string]string{"card.number": "invalid"}},
		{"letters", func(c *CardPayment) { c.Number = "4111 1111 1111 111a" }, now, map[string]string{"card.number": "invalid"}},
		{"missing everything", func(c *CardPayment) { *c = CardPayment{} }, now, map[string]string{
			"card.number": "required", "card.holder_name": "required", "card.expiry": "invalid", "card.cvv": "required", "card.installments": "too_small"}},
		{"unsupported brand", func(c *CardPayment) { c.Number = "6011111111111117" }, now, map[string]string{"card.number": "unsupported_brand"}},
		{"amex takes four cvv digits", func(c *CardPayment) { c.Number = "378282246310005" }, now, map[string]string{"card.cvv": "invalid"}},
		{"amex with four", func(c *CardPayment) { c.Number, c.CVV = "378282246310005", "1234" }, now, nil},
		{"visa with four", func(c *CardPayment) { c.CVV = "1234" }, now, map[string]string{"card.cvv": "invalid"}},
		{"too many installments", func(c *CardPayment) { c.Installments = 4 }, now, map[string]string{"card.installments": "too_large"}},
		{"control character in name", func(c *CardPayment) { c.HolderName = "MARIA\x00" }, now, map[string]string{"card.holder_name": "invalid"}},
		// Checked as the domain's other single-line texts are: a byte that
		// is not UTF-8, or a direction override, went to the acquirer as typed.
		{"name not UTF-8", func(c *CardPayment) { c.HolderName = "MARIA \xff" }, now, map[string]string{"card.holder_name": "invalid"}},
		{"direction override in name", func(c *CardPayment) { c.HolderName = "\u202eMARIA" }, now, map[string]string{"card.holder_name": "invalid"}},
		{"wrong length for the brand", func(c *CardPayment) { c.Number = "555555555555444400" }, now, map[string]string{"card.number": "invalid"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := valid
			tt.edit(&c)
			s, err := c.Check(tt.now, 3)
			if tt.fields == nil {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				if s.LastFour != CardDigits(c.Number)[len(CardDigits(c.Number))-4:] || s.Brand == "" {
					t.Fatalf("summary = %+v", s)
				}
				return
			}
			e, ok := err.(*Error)
			if !ok || e.Code != EINVALID {
				t.Fatalf("Check error = %v, want validation_failed", err)
			}
			got := map[string]string{}
			for _, f := range e.Fields {
				got[f.Field] = f.Code
				// No message may repeat what was typed.
				if digits := CardDigits(c.Number); len(digits) > 4 && strings.Contains(f.Message, digits) || c.CVV != "" && strings.Contains(f.Message, c.CVV) {
					t.Errorf("message %q echoes the card", f.Message)
				}
			}
			for field, code := range tt.fields {
				if got[field] != code {
					t.Errorf("field %s: code %q, want %q (all: %v)", field, got[field], code, got)
				}
			}
			if len(got) != len(tt.fields) {
				t.Errorf("fields = %v, want %v", got, tt.fields)
			}
		})
	}
}

func TestCardPaymentNeverPrints(t *testing.T) {
	t.Parallel()
	c := CardPayment{Number: "4111111111111111", CVV: "123"}
	var log strings.Builder
	slog.New(slog.NewJSONHandler(&log, nil)).Info("card", "card", c)
	if !strings.Contains(log.String(), `"card":"CardPayment{…}"`) {
		t.Errorf("logged card: %s", log.String())
	}
	for _, s := range []string{c.String(), fmt.Sprint(c), fmt.Sprintf("%+v", &c), fmt.Sprintf("%#v", c)} {
		if strings.Contains(s, "4111") || strings.Contains(s, "123") {
			t.Errorf("printed card: %q", s)
		}
	}
}

func TestCardInstallmentAmounts(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		total int64
		n     int
		want  []int64
	}{
		{100000, 1, []int64{100000}},
		{100000, 3, []int64{33333, 33333, 33334}},
		{199000, 12, []int64{16583, 16583, 16583, 16583, 16583, 16583, 16583, 16583, 16583, 16583, 16583, 16587}},
		{5, 3, []int64{1, 1, 3}},
	} {
		got := CardInstallmentAmounts(tt.total, tt.n)
		var sum int64
		for _, a := range got {
			sum += a
		}
		if sum != tt.total || len(got) != len(tt.want) {
			t.Fatalf("CardInstallmentAmounts(%d, %d) = %v", tt.total, tt.n, got)
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("CardInstallmentAmounts(%d, %d) = %v, want %v", tt.total, tt.n, got, tt.want)
				break
			}
		}
	}
	if CardInstallmentAmounts(100, 0) != nil {
		t.Error("0 installments must give nothing")
	}
}

func TestCardInstallmentLimit(t *testing.T) {
	t.Parallel()
	one, six := 1, 6
	c := &Company{MaxInstallments: 24}
	upfront := &PaymentConfiguration{PaymentType: Upfront, MaxInstallments: 1}
	financed := &PaymentConfiguration{PaymentType: Financed, MaxInstallments: 10, MaxDownPaymentInstallments: &one}
	down := &Bill{Type: BillTypeDownPayment}
	for _, tt := range []struct {
		name   string
		b      *Bill
		pc     *PaymentConfiguration
		c      *Company
		amount int64
		want   int
	}{
		{"upfront: the company's limit, capped at 12", down, upfront, c, 100_000, MaxCardInstallments},
		{"upfront, company allows 3", down, upfront, &Company{MaxInstallments: 3}, 100_000, 3},
		{"financed down payment: max_down_payment_installments", down, financed, c, 100_000, 1},
		{"down payment allowed 6", down, &PaymentConfiguration{PaymentType: Financed, MaxDownPaymentInstallments: &six}, c, 100_000, 6},
		{"monthly installment: one", &Bill{Type: BillTypeInstallment}, upfront, c, 100_000, 1},
		{"no configuration", down, nil, c, 100_000, 1},
		// Never an installment of R$ 0,00.
		{"upfront owing 3 cents", down, upfront, c, 3, 3},
		{"upfront owing a cent", down, upfront, c, 1, 1},
	} {
		if got := CardInstallmentLimit(tt.b, tt.pc, tt.c, tt.amount); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestCardDecisionApply(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, SaoPaulo)
	p := &Payment{AmountCents: 1000, Status: PaymentUnpaid}
	CardDecision{Approved: true, AuthorizationID: "A1"}.Apply(p, now)
	if p.Status != PaymentPaid || p.PaidAmountCents != 1000 || p.PaidAt == nil || p.Method != MethodCreditCard {
		t.Fatalf("approved: %+v", p)
	}
	r := &Payment{AmountCents: 1000, Status: PaymentUnpaid}
	CardDecision{RefusedReason: RefusedInvalidCVV}.Apply(r, now)
	if r.Status != PaymentRefused || *r.RefusedReason != RefusedInvalidCVV || *r.RefusedReasonDescription != RefusedReasons[RefusedInvalidCVV] || r.PaidAt != nil {
		t.Fatalf("refused: %+v", r)
	}
	u := &Payment{}
	CardDecision{RefusedReason: "made_up"}.Apply(u, now)
	if *u.RefusedReason != RefusedCardDeclined {
		t.Fatalf("unknown reason kept: %q", *u.RefusedReason)
	}
}

// The last four digits are a copy: a piece of the number (which the card
// form's or the request's body holds whole) would keep it reachable for as
// long as the payment made of the summary lives.
func TestCardSummaryKeepsNoPieceOfTheNumber(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, time.March, 31, 12, 0, 0, 0, SaoPaulo)
	number := "4111111111111111"
	s, err := CardPayment{Number: number, HolderName: "MARIA DA SILVA", ExpiryMonth: 3, ExpiryYear: 2026, CVV: "123", Installments: 1}.Check(now, 1)
	if err != nil || s.LastFour != "1111" {
		t.Fatalf("summary %+v, %v", s, err)
	}
	p, start := uintptr(unsafe.Pointer(unsafe.StringData(s.LastFour))), uintptr(unsafe.Pointer(unsafe.StringData(number)))
	if p >= start && p < start+uintptr(len(number)) {
		t.Fatal("the last four digits are a piece of the card number")
	}
}
