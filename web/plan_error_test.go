package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"parcela"
)

// An offer financed two ways: an installment count refused on the one
// chosen is shown beside that one's control alone. It was shown, and its
// control marked invalid, beside every financed configuration's, the
// one the payer did not choose among them.
func TestPlanErrorBesideTheChosenConfigurationOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const second = "cfg-financed-2"
	b.store.mu.Lock()
	pc := *b.store.offers[testOfferID].PaymentConfigurations[1]
	pc.ID, pc.Position, pc.MaxInstallments, pc.InterestRate = second, 2, 6, parcela.MustRate("0.01")
	b.store.offers[testOfferID].PaymentConfigurations = append(b.store.offers[testOfferID].PaymentConfigurations, &pc)
	b.store.mu.Unlock()
	page := b.get(t, b.offerPath())
	res := b.post(t, b.offerPath(), buyForm(t, page.body, second+":pix", url.Values{"installments." + second: {"9"},
		"plan_digest." + second: {hiddenValue(page.body, "plan_digest."+second)}}))
	if res.status != http.StatusUnprocessableEntity || !strings.Contains(res.body, `id="installments-`+second+`-error"`) {
		t.Fatalf("status %d, error beside the chosen plan: %v", res.status, strings.Contains(res.body, `id="installments-`+second+`-error"`))
	}
	if strings.Contains(res.body, `id="installments-`+testFinanced+`-error"`) || strings.Count(res.body, `aria-invalid="true"`) != 1 {
		t.Errorf("the error is shown beside the configuration not chosen too (%d controls marked invalid)", strings.Count(res.body, `aria-invalid="true"`))
	}
}
