package parcela

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"
)

// PaymentRefused is the status of a card attempt the acquirer declined. It
// stays on the bill, so the seller sees every attempt; the bill stays open.
const PaymentRefused = "refused"

// Why an acquirer refuses a card: the payment's refused_reason.
const (
	RefusedInsufficientFunds = "insufficient_funds"
	RefusedCardDeclined      = "card_declined"
	RefusedExpiredCard       = "expired_card"
	RefusedInvalidCVV        = "invalid_cvv"
	RefusedSuspectedFraud    = "suspected_fraud"
	RefusedProcessingError   = "processing_error"
)

// RefusedReasons describes each refusal for the payment's
// refused_reason_description.
var RefusedReasons = map[string]string{
	RefusedInsufficientFunds: "The card has insufficient funds or limit for this amount.",
	RefusedCardDeclined:      "The issuer declined the card without giving a reason.",
	RefusedExpiredCard:       "The issuer reports the card as expired.",
	RefusedInvalidCVV:        "The security code does not match the card.",
	RefusedSuspectedFraud:    "The issuer declined the payment as suspected fraud.",
	RefusedProcessingError:   "The acquirer could not process the card; try again.",
}

// MaxCardInstallments is the most installments ("parcelado no cartão") a
// card payment may be split into: what Brazilian acquirers offer at most.
const MaxCardInstallments = 12

// CardAcquirer authorizes card payments. The built-in acquirer is a
// simulated one with test cards; a real acquirer plugs in behind this
// interface, beside the PaymentProvider that issues boletos and Pix.
type CardAcquirer interface {
	// Authorize charges the card. A refusal is a decision, not an error; an
	// error means the acquirer could not be asked (nothing was charged).
	Authorize(ctx context.Context, req CardAuthorization) (CardDecision, error)
	// Void releases an approval that will not be kept (the bill was paid
	// another way meanwhile), so the card is not charged. Voiding a payment
	// never approved, or voided already, succeeds.
	Void(ctx context.Context, v CardVoid) error
}

// CardVoid names an approval to release: by the payment id it was asked
// under, and its authorization id when known (the intents' recovery knows
// only the payment id).
type CardVoid struct {
	PaymentID       string
	AuthorizationID string
}

// CardAuthorization is one charge of a card. Card is validated first with
// CardPayment.Check. PaymentID is the idempotency key: asking again under
// it returns the same decision, never a second charge.
type CardAuthorization struct {
	PaymentID    string
	AmountCents  int64
	Installments int
	Card         CardPayment
	MerchantName string
}

// CardDecision is the acquirer's answer.
type CardDecision struct {
	Approved        bool
	AuthorizationID string // set when approved
	RefusedReason   string // one of the Refused* codes when refused
}

// Apply records the decision on the card payment p at now: paid for the
// whole amount, or refused with the reason and its description.
func (d CardDecision) Apply(p *Payment, now time.Time) {
	p.Method = MethodCreditCard
	p.UpdatedAt = now
	if d.Approved {
		p.Status, p.PaidAt, p.PaidAmountCents = PaymentPaid, &now, p.AmountCents
		return
	}
	reason := d.RefusedReason
	if _, ok := RefusedReasons[reason]; !ok {
		reason = RefusedCardDeclined
	}
	desc := RefusedReasons[reason]
	p.Status, p.RefusedReason, p.RefusedReasonDescription = PaymentRefused, &reason, &desc
}

// CheckShown refuses a charge of owedCents when the payer was shown
// another amount (ShownCents, when set): the page is shown again with what
// the bill owes now, and nothing is charged.
func (c CardPayment) CheckShown(owedCents int64) error {
	if c.ShownCents == 0 || c.ShownCents == owedCents {
		return nil
	}
	return Errorf(EINVALIDSTATE, "the bill owes %d cents now, not the %d cents shown to the payer; the card was not charged", owedCents, c.ShownCents)
}

// GoString hides the card from %#v too.
func (CardPayment) GoString() string { return "parcela.CardPayment{…}" }

// LogValue hides the card from structured logs.
func (CardPayment) LogValue() slog.Value { return slog.StringValue("CardPayment{…}") }

// CardBrand is a card network.
type CardBrand string

// The brands the checkout accepts.
const (
	BrandVisa       CardBrand = "visa"
	BrandMastercard CardBrand = "mastercard"
	BrandElo        CardBrand = "elo"
	BrandAmex       CardBrand = "amex"
	BrandHipercard  CardBrand = "hipercard"
)

// CardSummary is all of a card that may be kept or shown.
type CardSummary struct {
	Brand    CardBrand
	LastFour string
}

// Check validates the card the payer typed, at now, for at most
// maxInstallments, and returns its brand and last four digits. Errors name
// card.number, card.holder_name, card.expiry, card.cvv and card.installments;
// no message repeats what was typed.
func (c CardPayment) Check(now time.Time, maxInstallments int) (CardSummary, error) {
	var v Validation
	var s CardSummary
	number := CardDigits(c.Number)
	switch {
	case strings.TrimSpace(c.Number) == "":
		v.Add("card.number", "required", "is required")
	case !isDigits(number) || len(number) < 12 || len(number) > 19:
		v.Add("card.number", "invalid", "must be 12 to 19 digits")
	case !Luhn(number):
		v.Add("card.number", "invalid", "is not a valid card number (check digit)")
	default:
		// A copy: a slice of number would keep the whole card number
		// reachable for as long as the summary (and the payment made of it)
		// lives.
		s.LastFour = strings.Clone(number[len(number)-4:])
		if s.Brand = DetectBrand(number); s.Brand == "" {
			v.Add("card.number", "unsupported_brand", "must be a Visa, Mastercard, Elo, American Express or Hipercard card")
		} else if !slices.Contains(brandLengths[s.Brand], len(number)) {
			v.Add("card.number", "invalid", fmt.Sprintf("has the wrong length for a %s card", s.Brand))
		}
	}
	name := TrimText(c.HolderName)
	switch {
	case name == "":
		v.Add("card.holder_name", "required", "is required")
	case TooLong(name, 64):
		v.Add("card.holder_name", "too_long", "must be at most 64 characters")
	case !ValidText(name, SingleLine):
		v.Add("card.holder_name", "invalid", "must be UTF-8 text without control characters, line separators or direction overrides")
	}
	c.checkExpiry(&v, now)
	cvvLen := 3
	if s.Brand == BrandAmex {
		cvvLen = 4
	}
	switch {
	case c.CVV == "":
		v.Add("card.cvv", "required", "is required")
	case !isDigits(c.CVV) || len(c.CVV) != cvvLen:
		v.Add("card.cvv", "invalid", fmt.Sprintf("must be %d digits", cvvLen))
	}
	if c.Installments < 1 || c.Installments > maxInstallments {
		v.Add("card.installments", boundCode(c.Installments < 1), fmt.Sprintf("must be between 1 and %d", max(1, maxInstallments)))
	}
	if err := v.Err(); err != nil {
		return CardSummary{}, err
	}
	return s, nil
}

// checkExpiry accepts a card through the last instant of its expiry month,
// São Paulo time, and not more than 20 years ahead.
func (c CardPayment) checkExpiry(v *Validation, now time.Time) {
	year := c.ExpiryYear
	if year >= 0 && year < 100 {
		// Two digits are a year of now's century, or of the next when that
		// one lies more than 50 years back: in 2095, 01 is 2101, not 2001.
		thisYear := now.In(SaoPaulo).Year()
		if year += thisYear - thisYear%100; year+50 < thisYear {
			year += 100
		}
	}
	if c.ExpiryMonth < 1 || c.ExpiryMonth > 12 || year < 2000 {
		v.Add("card.expiry", "invalid", "must be a month (1-12) and a year")
		return
	}
	// Compared as years first: time.Date wraps a year past what it
	// computes (a typed 2^40) around to the past, which read as expired.
	if year > now.Year()+21 {
		v.Add("card.expiry", "invalid", "is too far in the future")
		return
	}
	end := time.Date(year, time.Month(c.ExpiryMonth)+1, 1, 0, 0, 0, 0, SaoPaulo)
	switch {
	case !now.Before(end):
		v.Add("card.expiry", "expired", "the card has expired")
	case end.After(now.AddDate(20, 1, 0)):
		v.Add("card.expiry", "invalid", "is too far in the future")
	}
}

// CardDigits strips the spaces and dashes people type between groups.
func CardDigits(number string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' || r == '.' {
			return -1
		}
		return r
	}, number)
}

// Luhn reports whether a string of digits ends in a valid mod-10 check digit.
func Luhn(digits string) bool {
	if len(digits) < 2 || !isDigits(digits) {
		return false
	}
	sum := 0
	for i := 0; i < len(digits); i++ {
		d := int(digits[len(digits)-1-i] - '0')
		if i%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

// brandLengths are the card number lengths each brand issues.
var brandLengths = map[CardBrand][]int{
	BrandVisa:       {13, 16, 19},
	BrandMastercard: {16},
	BrandElo:        {16},
	BrandAmex:       {15},
	BrandHipercard:  {13, 16, 19},
}

// eloRanges are Elo's six-digit BIN ranges. Some sit inside Visa's 4 and
// Discover's 65, so Elo is detected first.
var eloRanges = [][2]int{
	{401178, 401179}, {431274, 431274}, {438935, 438935}, {451416, 451416},
	{457393, 457393}, {457631, 457632}, {504175, 504175}, {506699, 506778},
	{509000, 509999}, {627780, 627780}, {636297, 636297}, {636368, 636368},
	{650031, 650033}, {650035, 650051}, {650405, 650439}, {650485, 650538},
	{650541, 650598}, {650700, 650718}, {650720, 650727}, {650901, 650978},
	{651652, 651679}, {655000, 655019}, {655021, 655058},
}

// hipercardBINs are Hipercard's (and its Hiper sibling's) BINs.
var hipercardBINs = []int{606282, 384100, 384140, 384160, 637095, 637568, 637599, 637609, 637612}

// DetectBrand names the brand of a card number by its leading digits, or
// returns "" for a brand the checkout does not take.
func DetectBrand(digits string) CardBrand {
	if len(digits) < 6 || !isDigits(digits) {
		return ""
	}
	bin, _ := strconv.Atoi(digits[:6])
	for _, r := range eloRanges {
		if bin >= r[0] && bin <= r[1] {
			return BrandElo
		}
	}
	if slices.Contains(hipercardBINs, bin) {
		return BrandHipercard
	}
	two, four := bin/10000, bin/100
	switch {
	case two == 34 || two == 37:
		return BrandAmex
	case two >= 51 && two <= 55, four >= 2221 && four <= 2720:
		return BrandMastercard
	case digits[0] == '4':
		return BrandVisa
	}
	return ""
}

// CardInstallmentAmounts splits a card charge into n interest-free
// installments ("parcelado sem juros"): equal cents, the leftover cents on
// the last one, so they always sum to the total.
func CardInstallmentAmounts(totalCents int64, n int) []int64 {
	if n < 1 || totalCents < 0 {
		return nil
	}
	each := totalCents / int64(n)
	out := make([]int64, n)
	for i := range out {
		out[i] = each
	}
	out[n-1] += totalCents - each*int64(n)
	return out
}

// CardInstallmentLimit is how many card installments bill b, charged
// amount cents, may be split into under its configuration pc and company
// c. Monthly installments are paid in one; a down payment up to the
// configuration's max_down_payment_installments; an upfront bill, whose
// max_installments counts bills and is always 1, up to the company's
// max_installments. Never more than MaxCardInstallments, nor than amount's
// cents: a bill left owing a few cents would be split into installments
// of R$ 0,00.
func CardInstallmentLimit(b *Bill, pc *PaymentConfiguration, c *Company, amount int64) int {
	limit := MaxCardInstallments
	switch {
	case b.Type == BillTypeInstallment || pc == nil:
		return 1
	case pc.MaxDownPaymentInstallments != nil:
		limit = min(*pc.MaxDownPaymentInstallments, limit)
	case pc.PaymentType == Upfront && c != nil:
		limit = min(c.MaxInstallments, limit)
	default:
		limit = min(pc.MaxInstallments, limit)
	}
	return int(max(1, min(int64(limit), amount)))
}

// AcceptsCardFirst tells whether the configuration lets the customer pay
// its first bill by card: an upfront one with credit_card among its
// methods, a financed one with credit_card among its down payment methods.
func (pc *PaymentConfiguration) AcceptsCardFirst() bool {
	if pc.PaymentType == Upfront {
		return slices.Contains(pc.PaymentMethods, MethodCreditCard)
	}
	return slices.Contains(pc.AllowedDownPaymentMethods, MethodCreditCard)
}
