package web

import (
	"net/http"
	"net/http/httptest"
	"strings"

	"parcela"
	"testing"
)

// The harness (cmd/parcela-bench, scenarios offer-page and checkout-page)
// measures the pages against a real store; these isolate the rendering,
// over the fake store, for profiling: go test -bench Page -cpuprofile.

func BenchmarkOfferPage(b *testing.B) {
	bb := setup(b)
	// The harness's offer: a registration fee makes the CET's search work.
	for _, pc := range bb.offer.PaymentConfigurations {
		if pc.PaymentType == parcela.Financed {
			pc.InterestRate, pc.RegistrationFee = parcela.MustRate("0.0299"), parcela.MustRate("0.05")
		}
	}
	benchmarkPage(b, bb, bb.offerPath())
}

func BenchmarkCheckoutPage(b *testing.B) {
	bb := setup(b)
	checkout, _, _ := strings.Cut(bb.buy(b, testUpfront+":credit_card"), "#")
	benchmarkPage(b, bb, checkout)
}

// An installment's checkout, its down payment paid and its boleto (with a
// Pix code) issued: boleto only, no card form, the harness's checkout page
// (its sample is of pending and overdue installments, issued inside the
// company's window).
func BenchmarkCheckoutPageInstallment(b *testing.B) {
	bb := setup(b)
	second, _ := bb.firstInstallmentBoleto(b)
	benchmarkPage(b, bb, parcela.Links{}.CheckoutURL(second.ID, second.AuthenticationCode))
}

func benchmarkPage(b *testing.B, bb *bundle, path string) {
	benchmarkCheck(b, bb, path, "", http.StatusOK)
}

// benchmarkCheck is benchmarkPage with If-None-Match tag, answered want.
func benchmarkCheck(b *testing.B, bb *bundle, path, tag string, want int) {
	b.ReportAllocs()
	var bytes int
	for b.Loop() {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("User-Agent", "bench") // the signature of a purchase needs one
		if tag != "" {
			req.Header.Set("If-None-Match", tag)
		}
		rec := httptest.NewRecorder()
		bb.handler.ServeHTTP(rec, req)
		if rec.Code != want {
			b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
		bytes = rec.Body.Len()
	}
	b.ReportMetric(float64(bytes), "body-bytes/op")
}

// A financed order's page right after its purchase by Pix: the down
// payment's box and the twelve bills' table. A buyer waiting on it has
// its script fetch it again every few seconds until the Pix is paid.
func BenchmarkOrderPage(b *testing.B) {
	bb := setup(b)
	benchmarkPage(b, bb, bb.buy(b, testFinanced+":pix"))
}

// The same order's page as its waiting script checks it, unchanged: 304
// without the page (TestWaitingPageCheckIsNotModifiedUntilItsStateChanges).
func BenchmarkOrderPageCheck(b *testing.B) {
	bb := setup(b)
	path := bb.buy(b, testFinanced+":pix")
	res := bb.get(b, path)
	benchmarkCheck(b, bb, path, res.header.Get("ETag"), http.StatusNotModified)
}
