package parcela

import (
	"context"
	"time"
)

// PaymentProvider issues payments (boletos and Pix charges) and voids them.
// The built-in provider is a simulated bank; a real PSP adapter plugs in
// behind this interface. Settlement arrives through PaymentService (the
// sandbox pay action, or a PSP's notification).
//
// The provider is never called inside a store transaction: each payment is
// first recorded as a PaymentIntent, so that a crash between the call and
// the change that stores the payment leaves a trace to void.
type PaymentProvider interface {
	// Issue issues the payment req describes. req.PaymentID is the
	// idempotency key: issuing the same request again returns the same
	// payment, not a second one.
	Issue(ctx context.Context, req IssueRequest) (IssuedPayment, error)
	// Cancel voids whatever was issued under a payment id, so it can no
	// longer be paid. Canceling an id never issued, or already canceled,
	// succeeds.
	Cancel(ctx context.Context, req CancelRequest) error
}

// IssueRequest describes a payment to issue.
type IssueRequest struct {
	PaymentID    string
	Environment  Environment
	Method       string // boleto or pix
	AmountCents  int64
	DueDate      time.Time // the boleto's due date; the Pix charge's expiry
	NossoNumero  int64     // unique per boleto
	WithPix      bool      // bolepix: the boleto also carries a Pix code
	MerchantName string
	MerchantCity string
	MerchantKey  string // the company's Pix key at the bank
}

// IssuedPayment is what the bank returns: the codes a customer pays with.
type IssuedPayment struct {
	Barcode       *string // linha digitável (boleto) or BR Code (pix)
	BarcodeDigits *string // the 44-digit boleto barcode
	PixCode       *string // bolepix: the boleto's Pix code
	NossoNumero   *string
}

// CancelRequest names a payment to void at the provider.
type CancelRequest struct {
	PaymentID   string
	Environment Environment
}

// ProvidersByEnvironment is a PaymentProvider that sends each request to
// its environment's provider. An environment without one cannot issue: its
// charges and payments fail with EUNAVAILABLE, so production never hands a
// customer a code that no bank would pay.
type ProvidersByEnvironment map[Environment]PaymentProvider

// Serves tells whether env has a provider.
func (p ProvidersByEnvironment) Serves(env Environment) bool { return p[env] != nil }

// Issue issues through req.Environment's provider.
func (p ProvidersByEnvironment) Issue(ctx context.Context, req IssueRequest) (IssuedPayment, error) {
	if !p.Serves(req.Environment) {
		return IssuedPayment{}, noProvider(req.Environment)
	}
	return p[req.Environment].Issue(ctx, req)
}

// Cancel voids through req.Environment's provider; an environment without
// one never issued anything, so there is nothing to void.
func (p ProvidersByEnvironment) Cancel(ctx context.Context, req CancelRequest) error {
	if !p.Serves(req.Environment) {
		return nil
	}
	return p[req.Environment].Cancel(ctx, req)
}

func noProvider(env Environment) error {
	return Errorf(EUNAVAILABLE, "no payment provider is configured for %s: payments cannot be issued here until the operator configures one", env)
}

// providerServes tells whether provider can issue payments of env: a
// provider that says which environments it serves is asked.
func providerServes(provider PaymentProvider, env Environment) error {
	if provider == nil {
		return noProvider(env)
	}
	if p, ok := provider.(interface{ Serves(Environment) bool }); ok && !p.Serves(env) {
		return noProvider(env)
	}
	return nil
}
