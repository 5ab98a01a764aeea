package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	"parcela/client"
	"parcela/webhook"
)

// A sandbox sale from product to paid down payment. The examples run
// against an in-process sandbox (startSandbox, in server_test.go); against
// a running server use its address, for example
// client.New("http://127.0.0.1:8081", os.Getenv("PARCELA_TOKEN")).
func Example() {
	sandbox := startSandbox()
	defer sandbox.Close()
	ctx := context.Background()

	c, err := client.New(sandbox.URL, sandbox.Token)
	if err != nil {
		panic(err)
	}
	product, err := c.CreateProductWithResponse(ctx, nil, client.ProductCreateRequest{
		Product: client.ProductCreateInput{Name: "Curso de Confeitaria", FullAmountCents: 150000},
	})
	if err != nil {
		panic(err)
	}
	offer, err := c.CreateOfferWithResponse(ctx, nil, client.OfferCreateRequest{
		Offer: client.OfferInput{Name: "Turma de janeiro", ProductId: product.JSON201.Id, AmountCents: 120000},
		PaymentConfigurations: []client.PaymentConfigurationRequest{{
			PaymentType:               client.PaymentTypeFinanced,
			FinancedType:              client.Ptr(client.FinancedTypeBolepix),
			AllowedDownPaymentMethods: &[]client.PaymentMethod{client.PaymentMethodPix},
			DownPaymentType:           client.Ptr(client.DownPaymentTypePercentage),
			DownPaymentValue:          client.Ptr(json.Number("0.2")),
			InterestRate:              client.Ptr(json.Number("0.0299")),
			MaxInstallments:           client.Ptr(12),
		}},
	})
	if err != nil {
		panic(err)
	}
	order, err := c.CreateOrderWithResponse(ctx, nil, client.OrderCreateRequest{Order: client.OrderInput{
		OfferId: offer.JSON201.Id, CustomerName: "Maria da Silva", CustomerBirthdate: "1990-05-17",
		CustomerDocument: "52998224725", Email: "maria@example.com", Phone: "11987654321",
		Address: client.AddressInput{Zipcode: "01310100", Street: "Avenida Paulista", Number: "1000",
			Neighborhood: "Bela Vista", CityIbgeCode: "3550308"},
	}})
	if err != nil {
		panic(err)
	}
	charged, err := c.ChargeOrderWithResponse(ctx, order.JSON201.Id, nil, client.ChargeRequest{
		PaymentConfigurationId: offer.JSON201.PaymentConfigurations[0].Id,
		DueDay:                 10,
		Installments:           4,
		Payment:                client.ChargePayment{PaymentMethod: client.ChargePaymentPaymentMethodPix},
		Signature:              client.ChargeSignature{RemoteIp: "203.0.113.7", UserAgent: "my-shop/1.0"},
	})
	if err != nil {
		panic(err)
	}
	billing := charged.JSON200.Billings[0]
	fmt.Println("order", charged.JSON200.Status, "billing", billing.Status, "of", billing.AmountCents, "cents")
	for _, bill := range billing.Bills {
		fmt.Println(bill.BillType, bill.DueDate.Format("2006-01-02"), bill.AmountCents)
	}

	// The sandbox plays the bank: pay the Pix down payment.
	downPayment := billing.Bills[0].Payments[0]
	paid, err := c.SandboxPayPaymentWithResponse(ctx, downPayment.Id, nil, client.SandboxPayRequest{})
	if err != nil {
		panic(err)
	}
	fmt.Println("down payment", paid.JSON200.Status, "billing", paid.JSON200.Billing.Status)
	// Output:
	// order in_progress billing waiting_payment of 127817 cents
	// down_payment 2026-11-24 24000
	// installment 2027-01-10 34605
	// installment 2027-02-10 34605
	// installment 2027-03-10 34607
	// down payment paid billing active
}

// Bills walks every page of a listing: here the bills of one order, two a
// page.
func ExampleClient_Bills() {
	sandbox := startSandbox()
	defer sandbox.Close()
	orderID := sandbox.ChargedOrder() // financed in 4 bills (server_test.go)
	ctx := context.Background()
	c, err := client.New(sandbox.URL, sandbox.Token)
	if err != nil {
		panic(err)
	}

	var total int64
	for bill, err := range c.Bills(ctx, client.ListBillsParams{OrderId: &orderID, PerPage: client.Ptr(2)}) {
		if err != nil {
			panic(err)
		}
		fmt.Println(bill.BillType, bill.Status, bill.EffectiveDueDate.Format("2006-01-02"), bill.CurrentAmountCents)
		total += bill.OriginalAmountCents
	}
	fmt.Println("total", total)
	// Output:
	// down_payment pending 2026-11-24 24000
	// installment pending 2027-01-11 32000
	// installment pending 2027-02-10 32000
	// installment pending 2027-03-10 32000
	// total 120000
}

// Error answers are *client.Problem: branch on Code, show Fields to the
// person who filled the form.
func ExampleProblem() {
	sandbox := startSandbox()
	defer sandbox.Close()
	ctx := context.Background()
	c, err := client.New(sandbox.URL, sandbox.Token)
	if err != nil {
		panic(err)
	}

	_, err = c.CreateProductWithResponse(ctx, nil, client.ProductCreateRequest{
		Product: client.ProductCreateInput{Name: "Curso", FullAmountCents: 0},
	})
	var p *client.Problem
	if errors.As(err, &p) && p.Code == "validation_failed" {
		for _, f := range p.Fields() {
			fmt.Println(f.Field, f.Code, f.Message)
		}
	}
	_, err = c.GetBillWithResponse(ctx, "2820b938-17af-4b4b-b9c6-712749243145")
	fmt.Println(client.ProblemCode(err), strings.TrimPrefix(err.(*client.Problem).Type, sandbox.PublicURL()))
	// Output:
	// product.full_amount_cents too_small must be at least 1
	// not_found /docs/errors#not_found
}

// A webhook receiver checks every notification before trusting it.
func ExampleVerifyWebhook() {
	secret := "whsec_OO1zVQmP20MmB36sWRMLXLD9uuyUedM9ZPOg71U8jJo=" // from POST /webhooks
	receive := func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		if err := client.VerifyWebhook(secret, r.Header, body); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var event client.BillWebhookEvent
		if err := json.Unmarshal(body, &event); err != nil {
			http.Error(w, "not an event", http.StatusBadRequest)
			return
		}
		// Deduplicate on event.Id (the webhook-id header), queue the work,
		// and answer within 15 seconds.
		fmt.Println("verified", event.Entity, event.Event)
		w.WriteHeader(http.StatusNoContent)
	}

	// What parcela sends, signed with the secret; then the same body altered.
	body := `{"id": "01a1efd2-ca78-791c-9f4e-ca3dbdd87886", "entity": "bill", "event": "paid", "api_version": "v1", "created_at": "2026-11-18T15:02:11.448-03:00", "data": {}}`
	now := time.Now()
	sig, _ := webhook.Sign(secret, "01a1efd2-ca78-791c-9f4e-ca3dbdd87886", now, []byte(body))
	for _, sent := range []string{body, strings.Replace(body, "paid", "canceled", 1)} {
		req := httptest.NewRequest(http.MethodPost, "/webhooks/parcela", strings.NewReader(sent))
		req.Header.Set("webhook-id", "01a1efd2-ca78-791c-9f4e-ca3dbdd87886")
		req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
		req.Header.Set("webhook-signature", sig)
		rec := httptest.NewRecorder()
		receive(rec, req)
		fmt.Println(rec.Code)
	}
	// Output:
	// verified bill paid
	// 204
	// 401
}
