package bank

import (
	"context"
	"testing"
	"time"

	"parcela"
)

func TestSimulatedAcquirer(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 5, 10, 0, 0, 0, parcela.SaoPaulo)
	acq := SimulatedAcquirer{}
	for number, want := range TestCards {
		t.Run(number, func(t *testing.T) {
			t.Parallel()
			cvv := "123"
			if parcela.DetectBrand(number) == parcela.BrandAmex {
				cvv = "1234"
			}
			card := parcela.CardPayment{Number: number, HolderName: "MARIA", ExpiryMonth: 12, ExpiryYear: 2030, CVV: cvv, Installments: 1}
			// Every test card is a valid card of a brand the checkout takes.
			if _, err := card.Check(now, 1); err != nil {
				t.Fatalf("test card does not pass Check: %v", err)
			}
			d, err := acq.Authorize(context.Background(), parcela.CardAuthorization{PaymentID: "p1", AmountCents: 1000, Installments: 1, Card: card})
			if err != nil {
				t.Fatal(err)
			}
			if want == "" {
				if !d.Approved || d.AuthorizationID == "" || d.RefusedReason != "" {
					t.Fatalf("decision %+v, want approved", d)
				}
				return
			}
			if d.Approved || d.RefusedReason != want {
				t.Fatalf("decision %+v, want refused %s", d, want)
			}
			if _, ok := parcela.RefusedReasons[want]; !ok {
				t.Fatalf("%s is not a documented refusal", want)
			}
		})
	}
}

func TestSimulatedAcquirerOtherCards(t *testing.T) {
	t.Parallel()
	acq := SimulatedAcquirer{}
	d, err := acq.Authorize(context.Background(), parcela.CardAuthorization{PaymentID: "p", AmountCents: 100, Installments: 1,
		Card: parcela.CardPayment{Number: "4242 4242 4242 4242"}})
	if err != nil || d.Approved || d.RefusedReason != parcela.RefusedCardDeclined {
		t.Fatalf("unknown card: %+v, %v", d, err)
	}
	a1, _ := acq.Authorize(context.Background(), parcela.CardAuthorization{PaymentID: "p", AmountCents: 100, Installments: 1, Card: parcela.CardPayment{Number: "4111111111111111"}})
	a2, _ := acq.Authorize(context.Background(), parcela.CardAuthorization{PaymentID: "p", AmountCents: 100, Installments: 3, Card: parcela.CardPayment{Number: "4111-1111-1111-1111"}})
	if a1.AuthorizationID != a2.AuthorizationID {
		t.Fatalf("authorization ids of one payment differ: %s %s", a1.AuthorizationID, a2.AuthorizationID)
	}
	if _, err := acq.Authorize(context.Background(), parcela.CardAuthorization{PaymentID: "p", AmountCents: 0, Installments: 1}); err == nil {
		t.Fatal("a zero amount was authorized")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := acq.Authorize(ctx, parcela.CardAuthorization{PaymentID: "p", AmountCents: 1, Installments: 1}); err == nil {
		t.Fatal("a canceled context was authorized")
	}
}

// The simulated acquirer is a parcela.CardAcquirer.
var _ parcela.CardAcquirer = SimulatedAcquirer{}
