package parcela

import (
	"slices"
	"testing"
)

func TestCancelReason(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		reason *string
		want   string
		fault  bool
	}{
		{"none given is a customer dropout", nil, "customer_dropout", false},
		{"empty is a customer dropout", pointerTo(""), "customer_dropout", false},
		{"down payment not paid", pointerTo("down_payment_not_paid"), "down_payment_not_paid", false},
		{"refunded by the company", pointerTo("refunded_by_company"), "refunded_by_company", false},
		{"refunded by the customer", pointerTo("refunded_by_customer"), "refunded_by_customer", false},
		{"renegotiation", pointerTo("customer_renegotiation"), "customer_renegotiation", false},
		{"dropout", pointerTo("customer_dropout"), "customer_dropout", false},
		{"dropout with a fine", pointerTo("customer_dropout_with_fine"), "customer_dropout_with_fine", false},
		{"expired is the sweep's, not the company's", pointerTo(ReasonExpired), "", true},
		{"unknown", pointerTo("changed_mind"), "", true},
		{"capitals", pointerTo("CUSTOMER_DROPOUT"), "", true},
		{"padded", pointerTo(" customer_dropout"), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := CancelReason("reason", tt.reason)
			if !tt.fault {
				if err != nil || got != tt.want {
					t.Fatalf("CancelReason = %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if got != "" {
				t.Errorf("refused reason returned %q", got)
			}
			checkFaults(t, err, []fault{{"reason", "invalid", "must be one of down_payment_not_paid, refunded_by_company"}})
		})
	}
}

func TestBillingCancelReason(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		reason *string
		fault  bool
	}{
		{"none given", nil, true},
		{"empty", pointerTo(""), true},
		{"expired", pointerTo(ReasonExpired), true},
		{"unknown", pointerTo("fraud"), true},
	}
	for _, r := range CancelationReasons {
		tests = append(tests, struct {
			name   string
			reason *string
			fault  bool
		}{r, pointerTo(r), false})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := BillingCancelReason(tt.reason)
			if !tt.fault {
				if err != nil || got != *tt.reason {
					t.Fatalf("BillingCancelReason = %q, %v; want %q", got, err, *tt.reason)
				}
				return
			}
			if got != "" {
				t.Errorf("refused reason returned %q", got)
			}
			checkFaults(t, err, []fault{{"cancelation_reason", "invalid", "must be one of down_payment_not_paid, refunded_by_company, " +
				"refunded_by_customer, customer_renegotiation, customer_dropout, customer_dropout_with_fine"}})
		})
	}
	if len(CancelationReasons) != 6 || slices.Contains(CancelationReasons, ReasonExpired) {
		t.Errorf("reasons a company may give: %v", CancelationReasons)
	}
}
