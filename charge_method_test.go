package parcela

import (
	"testing"
	"time"
)

// A method that is neither boleto nor pix is one error on the field,
// "invalid", not also "not_allowed" by the configuration it was never
// going to be.
func TestPlanChargeUnknownMethodOneError(t *testing.T) {
	t.Parallel()
	s := setupCharge(t, "1990-05-17")
	now := calSP(2026, time.March, 5, 10, 0, 0, 0)
	for _, tt := range []struct {
		configuration string
		installments  int
	}{{s.upfront, 1}, {s.financed, 4}} {
		for _, method := range []string{"PIX", "Boleto", "ted"} {
			_, err := PlanCharge(chargeRequest(tt.configuration, method, tt.installments, "203.0.113.7", "curl/8"), s.order, s.company, now, "")
			e, ok := err.(*Error)
			if !ok || e.Code != EINVALID {
				t.Fatalf("%s on %s: err = %v, want a validation error", method, tt.configuration, err)
			}
			var on []FieldError
			for _, f := range e.Fields {
				if f.Field == "payment.payment_method" {
					on = append(on, f)
				}
			}
			if len(on) != 1 || on[0].Code != "invalid" {
				t.Errorf("%s on %s: errors on payment.payment_method = %+v, want one invalid", method, tt.configuration, on)
			}
		}
	}
}
