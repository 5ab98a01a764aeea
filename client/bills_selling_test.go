package client_test

import (
	"context"
	"encoding/json"
	"testing"

	"parcela/client"
)

// chargeWithDueDay sells one more financed order in the sandbox, its
// installments due on dueDay.
func chargeWithDueDay(t *testing.T, c *client.Client, dueDay int) {
	t.Helper()
	ctx := context.Background()
	product, err := c.CreateProductWithResponse(ctx, nil, client.ProductCreateRequest{Product: client.ProductCreateInput{Name: "Curso", FullAmountCents: 150000}})
	if err != nil {
		t.Fatal(err)
	}
	offer, err := c.CreateOfferWithResponse(ctx, nil, client.OfferCreateRequest{
		Offer: client.OfferInput{Name: "Turma", ProductId: product.JSON201.Id, AmountCents: 120000},
		PaymentConfigurations: []client.PaymentConfigurationRequest{{
			PaymentType: client.PaymentTypeFinanced, AllowedDownPaymentMethods: &[]client.PaymentMethod{client.PaymentMethodPix},
			DownPaymentType: client.Ptr(client.DownPaymentTypePercentage), DownPaymentValue: client.Ptr(json.Number("0.2")),
			MaxInstallments: client.Ptr(12),
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	order, err := c.CreateOrderWithResponse(ctx, nil, client.OrderCreateRequest{Order: client.OrderInput{
		OfferId: offer.JSON201.Id, CustomerName: "Maria da Silva", CustomerBirthdate: "1990-05-17",
		CustomerDocument: "52998224725", Email: "maria@example.com", Phone: "11987654321",
		Address: client.AddressInput{Zipcode: "01310100", Street: "Avenida Paulista", Number: "1000", Neighborhood: "Bela Vista", CityIbgeCode: "3550308"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ChargeOrderWithResponse(ctx, order.JSON201.Id, nil, client.ChargeRequest{
		PaymentConfigurationId: offer.JSON201.PaymentConfigurations[0].Id, DueDay: dueDay, Installments: 4,
		Payment:   client.ChargePayment{PaymentMethod: client.ChargePaymentPaymentMethodPix},
		Signature: client.ChargeSignature{RemoteIp: "203.0.113.7", UserAgent: "audit"},
	}); err != nil {
		t.Fatal(err)
	}
}

// An integrator walks every bill (to reconcile, to export to the ERP)
// while sales go on. Bills are created only, none leaves the listing, yet
// the walk yielded one of them twice (an audit): GET /bills pages by OFFSET, and a
// new sale's installment due on the 1st sorts before the ones due on the
// 10th that the walk had passed.
func TestBillsWhileSelling(t *testing.T) {
	sandbox := startSandbox()
	defer sandbox.Close()
	c, err := client.New(sandbox.URL, sandbox.Token)
	if err != nil {
		t.Fatal(err)
	}
	chargeWithDueDay(t, c, 10)
	chargeWithDueDay(t, c, 10)
	before := map[string]bool{}
	for bill, err := range c.Bills(context.Background(), client.ListBillsParams{}) {
		if err != nil {
			t.Fatal(err)
		}
		before[bill.Id] = true
	}
	seen := map[string]int{}
	n := 0
	for bill, err := range c.Bills(context.Background(), client.ListBillsParams{PerPage: client.Ptr(2)}) {
		if err != nil {
			t.Fatal(err)
		}
		seen[bill.Id]++
		if seen[bill.Id] > 1 {
			t.Errorf("bill %s (%s due %s) yielded %d times", bill.Id, bill.BillType, bill.DueDate.Format("2006-01-02"), seen[bill.Id])
		}
		n++
		if n == 4 { // the walk is past the first installments; a sale happens
			chargeWithDueDay(t, c, 1)
		}
	}
	for id := range before {
		if seen[id] == 0 {
			t.Errorf("bill %s, there before the walk, never yielded", id)
		}
	}
	t.Logf("%d yielded, %d distinct, %d there before the walk", n, len(seen), len(before))
}
