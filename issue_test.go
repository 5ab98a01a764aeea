package parcela

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// intentLog is an IntentStore and a PaymentProvider that write down every
// step, in order.
type intentLog struct {
	steps    []string
	issueErr error
	startErr error
}

func (l *intentLog) NextNossoNumero(context.Context) (int64, error) { return 42, nil }

func (l *intentLog) RecordIntent(_ context.Context, in *PaymentIntent) error {
	l.steps = append(l.steps, "record "+in.State)
	return nil
}

func (l *intentLog) StartVoid(context.Context, string, time.Time) error {
	l.steps = append(l.steps, "start void")
	return l.startErr
}

func (l *intentLog) FinishVoid(context.Context, string, time.Time) error {
	l.steps = append(l.steps, "finish void")
	return nil
}

func (l *intentLog) Issue(_ context.Context, req IssueRequest) (IssuedPayment, error) {
	l.steps = append(l.steps, "issue "+string(req.Environment))
	code := "CODE"
	return IssuedPayment{Barcode: &code}, l.issueErr
}

func (l *intentLog) Cancel(_ context.Context, req CancelRequest) error {
	l.steps = append(l.steps, "cancel "+string(req.Environment))
	return nil
}

func TestIssueSteps(t *testing.T) {
	t.Parallel()
	_, c := chargedOrder(2)
	refused := errors.New("refused")
	tests := []struct {
		name      string
		provider  func(*intentLog) PaymentProvider
		env       Environment
		amount    int64
		issueErr  error
		startErr  error
		expired   bool // the payment would expire as it is issued
		wantCode  string
		wantSteps []string
	}{
		{"issued", func(l *intentLog) PaymentProvider { return l }, Sandbox, 100, nil, nil, false, "",
			[]string{"record issuing", "issue sandbox"}},
		{"a failed call is voided", func(l *intentLog) PaymentProvider { return l }, Sandbox, 100, refused, nil, false, EUNAVAILABLE,
			[]string{"record issuing", "issue sandbox", "start void", "cancel sandbox", "finish void"}},
		{"an intent stored meanwhile is not canceled", func(l *intentLog) PaymentProvider { return l }, Sandbox, 100, refused,
			&Conflict{Entity: "payment intent"}, false, EUNAVAILABLE, []string{"record issuing", "issue sandbox", "start void"}},
		{"nothing owed", func(l *intentLog) PaymentProvider { return l }, Sandbox, 0, nil, nil, false, EINVALIDSTATE, nil},
		{"expired as it is issued", func(l *intentLog) PaymentProvider { return l }, Sandbox, 100, nil, nil, true, EINVALIDSTATE, nil},
		{"no provider for production", func(l *intentLog) PaymentProvider { return ProvidersByEnvironment{Sandbox: l} }, Production, 100, nil, nil,
			false, EUNAVAILABLE, nil},
		{"each environment its provider", func(l *intentLog) PaymentProvider { return ProvidersByEnvironment{Production: l} }, Production, 100, nil, nil,
			false, "", []string{"record issuing", "issue production"}},
		{"no provider at all", func(*intentLog) PaymentProvider { return nil }, Sandbox, 100, nil, nil, false, EUNAVAILABLE, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &intentLog{issueErr: tt.issueErr, startErr: tt.startErr}
			s := &issuer{intents: l, provider: tt.provider(l), clock: NewTestClock(moveNow)}
			bill := &Bill{ID: "bill", CompanyID: c.ID, Environment: tt.env, AmountCents: tt.amount}
			// A payment expiring at the instant it is issued is one the
			// payer could never pay.
			expires := moveNow.Add(time.Millisecond)
			if tt.expired {
				expires = moveNow
			}
			p, err := s.issue(context.Background(), paymentOrder{company: c, bill: bill, method: MethodPix, amount: tt.amount, due: expires, expires: expires})
			if ErrorCode(err) != tt.wantCode {
				t.Fatalf("err %v, want %q", err, tt.wantCode)
			}
			if tt.issueErr != nil && !errors.Is(err, tt.issueErr) {
				t.Fatalf("the provider's error is lost: %v", err)
			}
			if !slices.Equal(l.steps, tt.wantSteps) {
				t.Fatalf("steps %v, want %v", l.steps, tt.wantSteps)
			}
			if err == nil && (p.Barcode == nil || p.Status != PaymentUnpaid || p.AmountCents != tt.amount || p.Environment != tt.env) {
				t.Fatalf("payment %+v", p)
			}
		})
	}
}
