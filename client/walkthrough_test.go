package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"parcela/client"
)

// sale creates a product, an offer with a financed (bolepix, Pix or boleto
// down payment) and an upfront configuration, and an order of it.
func sale(t *testing.T, ctx context.Context, c *client.Client) (offer *client.OfferCreate, order *client.Order) {
	t.Helper()
	product, err := c.CreateProductWithResponse(ctx, nil, client.ProductCreateRequest{Product: client.ProductCreateInput{
		Name: "Curso de Confeitaria", FullAmountCents: 150000, Kind: client.Ptr(client.ProductKindCourse),
	}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := c.CreateOfferWithResponse(ctx, nil, client.OfferCreateRequest{
		Offer: client.OfferInput{Name: "Turma de janeiro", ProductId: product.JSON201.Id, AmountCents: 120000},
		PaymentConfigurations: []client.PaymentConfigurationRequest{{
			PaymentType:               client.PaymentTypeFinanced,
			FinancedType:              client.Ptr(client.FinancedTypeBolepix),
			AllowedDownPaymentMethods: &[]client.PaymentMethod{client.PaymentMethodPix, client.PaymentMethodBoleto},
			DownPaymentType:           client.Ptr(client.DownPaymentTypePercentage),
			DownPaymentValue:          client.Ptr(json.Number("0.2")),
			InterestRate:              client.Ptr(json.Number("0.0299")),
			MaxInstallments:           client.Ptr(12),
		}, {
			PaymentType:    client.PaymentTypeUpfront,
			PaymentMethods: &[]client.PaymentMethod{client.PaymentMethodPix, client.PaymentMethodBoleto},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	created, err := c.CreateOrderWithResponse(ctx, nil, client.OrderCreateRequest{Order: client.OrderInput{
		OfferId: o.JSON201.Id, CustomerName: "Maria da Silva", CustomerBirthdate: "1990-05-17",
		CustomerDocument: "529.982.247-25", Email: "maria@example.com", Phone: "(11) 98765-4321",
		Address: client.AddressInput{Zipcode: "01310-100", Street: "Avenida Paulista", Number: "1000",
			Neighborhood: "Bela Vista", CityIbgeCode: "3550308"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return o.JSON201, created.JSON201
}

// receiver is a webhook endpoint that verifies what it gets with the
// client's VerifyWebhook.
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	secret string
	events []client.BillWebhookEvent
	ids    []string
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{t: t}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		if err := client.VerifyWebhook(r.secret, req.Header, body); err != nil {
			r.t.Errorf("a notification does not verify: %v", err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if err := client.VerifyWebhook("whsec_"+strings.Repeat("A", 44), req.Header, body); !errors.Is(err, client.ErrWebhookSignature) {
			r.t.Errorf("another secret verifies a notification: %v", err)
		}
		var ev client.BillWebhookEvent
		if err := json.Unmarshal(body, &ev); err != nil {
			r.t.Errorf("notification body: %v", err)
		}
		r.events = append(r.events, ev)
		r.ids = append(r.ids, req.Header.Get("webhook-id"))
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) received() ([]client.BillWebhookEvent, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events), slices.Clone(r.ids)
}

// The README's sandbox walk-through, through the client: product, offer,
// order, charge, pay, bills, and the bill's webhook, received and verified.
func TestSandboxWalkthrough(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		c, err := client.New(b.sandbox.URL, b.token)
		if err != nil {
			t.Fatal(err)
		}
		b.deliverWebhooks(t)
		rc := newReceiver(t)
		hook, err := c.CreateWebhookWithResponse(ctx, nil, client.WebhookCreateRequest{
			Name: "ERP", Url: rc.srv.URL + "/parcela", Entity: client.WebhookEntityBill,
			Events: []client.WebhookEventName{client.WebhookEventNamePaid}, Verb: client.WebhookVerbPost,
		})
		if err != nil {
			t.Fatal(err)
		}
		rc.mu.Lock()
		rc.secret = hook.JSON201.Secret
		rc.mu.Unlock()

		offer, order := sale(t, ctx, c)
		if order.Status != client.OrderStatusPending || len(order.Billings) != 0 {
			t.Fatalf("new order %s with %d billings", order.Status, len(order.Billings))
		}
		charged, err := c.ChargeOrderWithResponse(ctx, order.Id, nil, client.ChargeRequest{
			PaymentConfigurationId: offer.PaymentConfigurations[0].Id, DueDay: 10, Installments: 4,
			Payment:   client.ChargePayment{PaymentMethod: client.ChargePaymentPaymentMethodPix},
			Signature: client.ChargeSignature{RemoteIp: "203.0.113.7", UserAgent: "client test"},
		})
		if err != nil {
			t.Fatal(err)
		}
		billing := charged.JSON200.Billings[0]
		if charged.JSON200.Status != client.OrderStatusInProgress || billing.Status != client.BillingStatusWaitingPayment || len(billing.Bills) != 4 {
			t.Fatalf("charged: order %s, billing %s, %d bills", charged.JSON200.Status, billing.Status, len(billing.Bills))
		}
		// A Pix payment's code is its barcode; pix_code is for bolepix boletos.
		pix := billing.Bills[0].Payments[0]
		if pix.PaymentMethod != client.PaymentMethodPix || pix.Barcode == nil || !strings.HasPrefix(*pix.Barcode, "000201") || pix.PixCode != nil || pix.PixQrcodeUrl != nil {
			t.Errorf("Pix down payment %+v", pix)
		}
		// An answer that is not JSON: the image of the Pix, while it can be
		// paid (a paid one has none).
		if img, err := c.GetPaymentBarcodeWithResponse(ctx, pix.Id, nil); err != nil || !strings.HasPrefix(string(img.Body), "\x89PNG") {
			t.Errorf("the Pix image: %v", err)
		}

		paid, err := c.SandboxPayPaymentWithResponse(ctx, pix.Id, nil, client.SandboxPayRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if paid.JSON200.Status != client.BillStatusPaid || paid.JSON200.Billing.Status != client.BillingStatusActive {
			t.Fatalf("after paying: bill %s, billing %s", paid.JSON200.Status, paid.JSON200.Billing.Status)
		}
		// Paying it again answers 200 and changes nothing.
		again, err := c.SandboxPayPaymentWithResponse(ctx, pix.Id, nil, client.SandboxPayRequest{})
		if err != nil || again.StatusCode() != http.StatusOK || !again.JSON200.UpdatedAt.Equal(paid.JSON200.UpdatedAt) {
			t.Errorf("paying again: %v", err)
		}

		// The answers that are not JSON (the document) and those without a
		// body are answers too; the paid Pix has no image now.
		if img, err := c.GetPaymentBarcodeWithResponse(ctx, pix.Id, nil); err == nil || img != nil && img.StatusCode() != http.StatusNotFound {
			t.Errorf("the paid Pix's image: %v", err)
		}
		if doc, err := c.GetOpenAPIWithResponse(ctx); err != nil || !strings.HasPrefix(string(doc.Body), "openapi:") {
			t.Errorf("the OpenAPI document: %v", err)
		}
		if health, err := c.GetHealthzWithResponse(ctx); err != nil || health.JSON200 == nil {
			t.Errorf("healthz: %v", err)
		}
		defer func() {
			if gone, err := c.DeleteWebhookWithResponse(ctx, hook.JSON201.Id, nil); err != nil || gone.StatusCode() != http.StatusNoContent {
				t.Errorf("deleting the webhook: %v", err)
			}
		}()

		// Two bills a page: the iterator walks both pages.
		var bills []client.BillEndpoint
		var sum int64
		for bill, err := range c.Bills(ctx, client.ListBillsParams{OrderId: &order.Id, PerPage: client.Ptr(2)}) {
			if err != nil {
				t.Fatal(err)
			}
			bills = append(bills, bill)
			sum += bill.OriginalAmountCents
		}
		if len(bills) != 4 || bills[0].Status != client.BillStatusPaid || bills[1].Status != client.BillStatusPending || sum != billing.AmountCents {
			t.Fatalf("%d bills summing to %d of %d", len(bills), sum, billing.AmountCents)
		}

		deadline := time.Now().Add(15 * time.Second)
		for {
			events, ids := rc.received()
			if len(events) > 0 {
				ev := events[0]
				if len(events) != 1 || ev.Event != client.BillWebhookEventEventPaid || ev.Data.Id != bills[0].Id || ids[0] != ev.Id {
					t.Errorf("received %+v (ids %v)", events, ids)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the bill's paid notification did not arrive")
			}
			time.Sleep(25 * time.Millisecond)
		}
	})
}

// Error answers are *client.Problem, whose type is the absolute address of
// the code's entry in the listener's error catalogue.
func TestProblems(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		c, err := client.New(b.sandbox.URL, b.token)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.GetOrderWithResponse(ctx, "5d0f4a8e-4f0e-4d1a-9f65-2f4c8e0b9a31")
		var p *client.Problem
		if !errors.As(err, &p) || p.Status != 404 || p.Code != "not_found" || p.Type != sandboxPublicURL+"/docs/errors#not_found" || p.RequestId == "" {
			t.Fatalf("unknown order: %#v", err)
		}
		_, invalid := c.CreateProductWithResponse(ctx, nil, client.ProductCreateRequest{Product: client.ProductCreateInput{Name: "", FullAmountCents: 0}})
		if client.ProblemCode(invalid) != "validation_failed" || !errors.As(invalid, &p) || len(p.Fields()) != 2 {
			t.Fatalf("invalid product: %v", invalid)
		}
		if !strings.HasPrefix(invalid.Error(), "parcela: 422 validation_failed: ") {
			t.Errorf("Error() = %q", invalid.Error())
		}
		for _, f := range p.Fields() {
			if f.Field != "product.name" && f.Field != "product.full_amount_cents" {
				t.Errorf("field error %+v", f)
			}
		}
		prod, err := client.New(b.production.URL, b.token) // a sandbox token on production
		if err != nil {
			t.Fatal(err)
		}
		if _, err := prod.ListBillsWithResponse(ctx, nil); client.ProblemCode(err) != "unauthorized" {
			t.Errorf("sandbox token on production: %v", err)
		}
	})
}

// A key the caller sets is kept: the same request with the same key is
// answered from the server's store.
func TestCallerIdempotencyKey(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		c, err := client.New(b.sandbox.URL, b.token)
		if err != nil {
			t.Fatal(err)
		}
		params := &client.CreateProductParams{IdempotencyKey: client.Ptr("order-1234-product")}
		body := client.ProductCreateRequest{Product: client.ProductCreateInput{Name: "Curso", FullAmountCents: 50000}}
		first, err := c.CreateProductWithResponse(ctx, params, body)
		if err != nil {
			t.Fatal(err)
		}
		second, err := c.CreateProductWithResponse(ctx, params, body)
		if err != nil {
			t.Fatal(err)
		}
		if second.JSON201.Id != first.JSON201.Id || second.HTTPResponse.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay created %s after %s", second.JSON201.Id, first.JSON201.Id)
		}
		body.Product.Name = "Outro curso"
		if _, err := c.CreateProductWithResponse(ctx, params, body); client.ProblemCode(err) != "idempotency_key_reused" {
			t.Errorf("the key with another body: %v", err)
		}
	})
}

// Both listeners serve the docs site, and production's document has no
// sandbox-only operation.
func TestDocsOnBothListeners(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		for _, base := range []string{b.sandbox.URL, b.production.URL} {
			for _, path := range []string{"/docs", "/docs/errors", "/docs/guides/webhooks"} {
				resp, err := http.Get(base + path)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") == "" {
					t.Errorf("GET %s%s: %d", base, path, resp.StatusCode)
				}
			}
		}
		for base, sandbox := range map[string]bool{b.sandbox.URL: true, b.production.URL: false} {
			resp, err := http.Get(base + "/openapi.yaml")
			if err != nil {
				t.Fatal(err)
			}
			doc, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if has := strings.Contains(string(doc), "\n  /external_api/v1/sandbox/payments/{id}/pay:"); has != sandbox {
				t.Errorf("%s/openapi.yaml lists the sandbox operations: %v", base, has)
			}
		}
	})
}
