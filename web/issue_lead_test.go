package web

import (
	"strings"
	"testing"
	"time"

	"parcela"
)

// The pages say when an installment's boleto comes from the company's own
// installment_issue_days, which the issue sweep reads, not a fixed ten.
func TestPagesSayTheCompanysIssueLead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		days int
		want string
	}{{10, "10 dias antes"}, {5, "5 dias antes"}, {1, "1 dia antes"}} {
		c := &parcela.Company{InstallmentIssueDays: tc.days}
		for _, m := range []string{parcela.MethodPix, parcela.MethodBoleto} {
			if got := downPaymentDetail(m, c); !strings.Contains(got, tc.want+" de cada vencimento") {
				t.Errorf("%d days, %s down payment: %q", tc.days, m, got)
			}
		}
		billing := &parcela.Billing{Status: parcela.BillingActive}
		v := newOrderPage(&parcela.Order{Status: parcela.OrderPending, Billings: []*parcela.Billing{billing}}, c, time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
		if !strings.Contains(v.Message, tc.want+" de cada vencimento") {
			t.Errorf("%d days, order page: %q", tc.days, v.Message)
		}
	}
}
