package server_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"parcela"

	"parcela/sqldb/sqldbtest"
)

// The document's examples of a financed charge tell one story: an order
// charged on 18 November 2026 at 14:32:05.123, financed in 4 bills with a
// boleto down payment. Played on the server at the same moments, every
// amount, date and status of those examples must be what it answers; only
// what the server draws at random (ids, codes, addresses) may differ.

// exampleMoment parses a São Paulo timestamp as the examples write them.
func exampleMoment(t *testing.T, s string) time.Time {
	t.Helper()
	ts, err := time.Parse("2006-01-02T15:04:05.000Z07:00", s)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// exampleStory is the charged order of the examples, on a bundle of its own.
type exampleStory struct {
	b              *bundle
	order, billing string
	bills          []string
	charged        map[string]any
	offerURL       string
	productID      string
	financedConfig string
	// cardRefused is the answer to a charge of the order by card.
	cardRefused map[string]any
}

// exampleCharge is how and when an example's order was made and charged.
type exampleCharge struct {
	ordered, charged     string
	financed             bool
	method               string
	installments, dueDay int
}

var (
	financedExample = exampleCharge{"2026-11-18T14:25:41.870-03:00", "2026-11-18T14:32:05.123-03:00", true, "boleto", 4, 10}
	upfrontExample  = exampleCharge{"2026-11-18T14:38:50.271-03:00", "2026-11-18T14:40:12.004-03:00", false, "pix", 1, 18}
)

func newExampleStory(t *testing.T, b *bundle, how exampleCharge) *exampleStory {
	t.Helper()
	b.clock.Set(exampleMoment(t, "2026-10-01T10:15:30.512-03:00"))
	product := b.call("POST", "/external_api/v1/products", map[string]any{"product": map[string]any{
		"name": "Formação em Análise de Dados", "full_amount_cents": 249700,
		"description": "Curso online com 120 horas de aulas gravadas e mentorias ao vivo.",
		"kind":        "course", "shift": "online", "access_period": "lifetime", "duration_in_hours": 120,
		"banner_url": "https://cdn.escolaalfa.com.br/banners/analise-de-dados.png", "metadata": map[string]any{"turma": "2027.1"},
	}}).want(t, 201).JSON(t)
	wantExample(t, "ProductCreated", b.example(t, "ProductCreated"), product)
	b.clock.Set(exampleMoment(t, "2026-10-02T11:20:07.338-03:00"))
	offer := b.call("POST", "/external_api/v1/offers", map[string]any{
		"offer": map[string]any{"name": "Black Friday 2026", "product_id": product["id"], "amount_cents": 199700,
			"expires_at": "2026-12-20T23:59:59.999-03:00", "seats": 200},
		"payment_configurations": []any{
			map[string]any{"payment_type": "financed", "financed_type": "bolepix", "payment_methods": []string{"boleto"},
				"allowed_down_payment_methods": []string{"boleto", "pix"}, "down_payment_type": "percentage",
				"down_payment_value": json.Number("0.2"), "interest_rate": json.Number("0.0299"), "max_installments": 12,
				"registration_fee": json.Number("0.01"), "expires_in_hours": 72},
			map[string]any{"payment_type": "upfront", "payment_methods": []string{"pix", "boleto", "credit_card"}, "expires_in_hours": 24},
		},
	}).want(t, 201).JSON(t)
	wantExample(t, "OfferCreated", b.example(t, "OfferCreated"), offer)
	config, fin := configs(offer)
	if how.financed {
		config = fin
	}
	b.clock.Set(exampleMoment(t, how.ordered))
	create := b.requestExample(t, "POST", "/external_api/v1/orders")
	create["order"].(map[string]any)["offer_id"] = offer["id"]
	order := b.call("POST", "/external_api/v1/orders", create).want(t, 201).JSON(t)
	if how.financed {
		wantExample(t, "OrderPending", withoutCompany(b.example(t, "OrderPending")), order)
	}
	b.clock.Set(exampleMoment(t, how.charged))
	s := &exampleStory{b: b, order: order["id"].(string), offerURL: offer["url"].(string), productID: product["id"].(string), financedConfig: fin}
	s.cardRefused = b.call("POST", "/external_api/v1/orders/"+s.order+"/charge", chargeBody(config, "credit_card", how.installments)).want(t, 422).JSON(t)
	body := chargeBody(config, how.method, how.installments)
	body["due_day"] = how.dueDay
	s.charged = b.call("POST", "/external_api/v1/orders/"+s.order+"/charge", body).want(t, 200).JSON(t)
	s.billing = s.charged["billings"].([]any)[0].(map[string]any)["id"].(string)
	s.bills = billIDs(s.charged)
	return s
}

func (s *exampleStory) at(t *testing.T, moment string) {
	t.Helper()
	s.b.clock.Set(exampleMoment(t, moment))
	s.b.sweep(t)
}

func (s *exampleStory) getBilling(t *testing.T) map[string]any {
	t.Helper()
	return s.b.call("GET", "/external_api/v1/billings/"+s.billing, nil).want(t, 200).JSON(t)
}

// withoutCompany is an order example without its product's company: the
// example shows a seller set up by an operator, a test's company is
// another.
func withoutCompany(order map[string]any) map[string]any {
	delete(order["offer"].(map[string]any)["product"].(map[string]any), "company")
	return order
}

// example is a named example of the document as JSON values; at picks a
// member of it (a webhook event's data).
func (b *bundle) example(t *testing.T, name string, at ...string) map[string]any {
	t.Helper()
	ex := b.contract.Doc().Components.Examples[name]
	if ex == nil || ex.Value == nil {
		t.Fatalf("the document has no example %s", name)
	}
	raw, err := json.Marshal(ex.Value.Value)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range at {
		v = v[k].(map[string]any)
	}
	return v
}

// drawn are the members whose values the server draws or derives from its
// address: an example shows one such value, the server another. Only
// whether they are null must agree.
var drawn = map[string]bool{
	"id": true, "company_id": true, "order_id": true, "bill_id": true, "url": true, "checkout_url": true, "authentication_code": true,
	"barcode": true, "barcode_image_url": true, "pix_code": true, "pix_qrcode_url": true,
}

// sameAsExample reports where got differs from the example, member by
// member (only the members the example shows).
func sameAsExample(path string, example, got any) []string {
	switch ex := example.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: example %v, server %v", path, example, got)}
		}
		var diffs []string
		for k, v := range ex {
			gv, present := g[k]
			switch {
			case !present:
				diffs = append(diffs, fmt.Sprintf("%s.%s: not in the server's answer", path, k))
			case drawn[k]:
				if (v == nil) != (gv == nil) {
					diffs = append(diffs, fmt.Sprintf("%s.%s: example %v, server %v", path, k, v, gv))
				}
			default:
				diffs = append(diffs, sameAsExample(path+"."+k, v, gv)...)
			}
		}
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(ex) {
			return []string{fmt.Sprintf("%s: example %v, server %v", path, example, got)}
		}
		var diffs []string
		for i := range ex {
			diffs = append(diffs, sameAsExample(fmt.Sprintf("%s[%d]", path, i), ex[i], g[i])...)
		}
		return diffs
	}
	if !reflect.DeepEqual(example, got) {
		return []string{fmt.Sprintf("%s: example %v, server %v", path, example, got)}
	}
	return nil
}

func wantExample(t *testing.T, name string, example, got any) {
	t.Helper()
	for _, d := range sameAsExample(name, example, got) {
		t.Error(d)
	}
	exampleCodes(t, example)
}

// exampleCodes checks that every boleto and Pix code an example shows is
// one a bank would read, for the payment's amount: the server draws its
// own, so only their validity can be compared.
func exampleCodes(t *testing.T, example any) {
	t.Helper()
	switch ex := example.(type) {
	case map[string]any:
		if code, ok := ex["barcode"].(string); ok {
			amount := int64(ex["amount_cents"].(float64))
			checkCode(t, ex["payment_method"].(string), code, amount)
			if pix, ok := ex["pix_code"].(string); ok {
				checkCode(t, "pix", pix, amount)
			}
		}
		for _, v := range ex {
			exampleCodes(t, v)
		}
	case []any:
		for _, v := range ex {
			exampleCodes(t, v)
		}
	}
}

func TestChargeExamplesAreWhatTheServerAnswers(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			t.Run("charged, waived, expired", func(t *testing.T) {
				t.Parallel()
				b := setup(t, e)
				s := newExampleStory(t, b, financedExample)
				wantExample(t, "OrderCharged", withoutCompany(b.example(t, "OrderCharged")), s.charged)
				// The card's refusal names the offer's page, where the customer
				// can buy by card.
				card := b.contract.Doc().Components.Responses["ChargeUnprocessable"].Value.Content["application/problem+json"].Examples["credit_card_not_supported"].Value.Value.(map[string]any)
				offerURL := b.example(t, "OfferCreated")["url"].(string)
				if got := strings.ReplaceAll(s.cardRefused["detail"].(string), s.offerURL, offerURL); got != card["detail"] {
					t.Errorf("credit_card_not_supported: the example's detail is\n%s\nthe server's, at the example's offer,\n%s", card["detail"], got)
				}
				event := b.example(t, "WebhookOrderInProgress")
				wantExample(t, "WebhookOrderInProgress.created_at", event["created_at"], s.charged["updated_at"])
				wantExample(t, "WebhookOrderInProgress.data.billings", event["data"].(map[string]any)["billings"], s.charged["billings"])

				billing := s.getBilling(t)
				wantExample(t, "BillingWaitingPayment", b.example(t, "BillingWaitingPayment"), billing)
				wantExample(t, "WebhookBillingWaitingPayment.data", b.example(t, "WebhookBillingWaitingPayment", "data"), billing)
				pending := b.bill(t, s.bills[0])
				wantExample(t, "BillPendingBoleto", b.example(t, "BillPendingBoleto"), pending)
				wantExample(t, "WebhookBillPending.data", b.example(t, "WebhookBillPending", "data"), pending)

				b.clock.Set(exampleMoment(t, "2026-11-22T09:15:40.219-03:00"))
				waiver := b.example(t, "BillPenaltiesWaived")
				waived := b.call("PATCH", "/external_api/v1/bills/"+s.bills[0], map[string]any{"bill": map[string]any{
					"disable_penalties_until": waiver["disable_penalties_until"]}}).want(t, 200).JSON(t)
				wantExample(t, "BillPenaltiesWaived", waiver, waived)
				b.call("PATCH", "/external_api/v1/bills/"+s.bills[0], map[string]any{"bill": map[string]any{"disable_penalties_until": nil}}).want(t, 200)

				expired := b.example(t, "BillDownPaymentExpired")
				s.at(t, expired["updated_at"].(string))
				got := b.bill(t, s.bills[0])
				wantExample(t, "BillDownPaymentExpired", expired, got)
				event = b.example(t, "WebhookBillCanceled")
				wantExample(t, "WebhookBillCanceled.created_at", event["created_at"], got["updated_at"])
				wantExample(t, "WebhookBillCanceled.data", event["data"], got)
			})
			t.Run("canceled", func(t *testing.T) {
				t.Parallel()
				b := setup(t, e)
				s := newExampleStory(t, b, financedExample)
				want := b.example(t, "BillingCanceled")
				b.clock.Set(exampleMoment(t, want["updated_at"].(string)))
				got := b.call("POST", "/external_api/v1/billings/"+s.billing+"/cancel", map[string]any{"cancelation_reason": want["cancelation_reason"]}).want(t, 200).JSON(t)
				wantExample(t, "BillingCanceled", want, got)
				event := b.example(t, "WebhookBillingCanceled")
				wantExample(t, "WebhookBillingCanceled.created_at", event["created_at"], got["updated_at"])
				wantExample(t, "WebhookBillingCanceled.data", event["data"], got)
			})
			t.Run("upfront Pix paid", func(t *testing.T) {
				t.Parallel()
				b := setup(t, e)
				s := newExampleStory(t, b, upfrontExample)
				paid := b.example(t, "BillPaidPix")
				b.clock.Set(exampleMoment(t, paid["paid_at"].(string)))
				b.pay(t, openPayment(t, b.bill(t, s.bills[0]))["id"].(string))
				got := b.bill(t, s.bills[0])
				wantExample(t, "BillPaidPix", paid, got)
				wantExample(t, "WebhookBillPaid.data", b.example(t, "WebhookBillPaid", "data"), got)
				wantExample(t, "BillPage.results[0]", b.example(t, "BillPage")["results"].([]any)[0], got)
				wantExample(t, "WebhookBillingFinished.data", b.example(t, "WebhookBillingFinished", "data"), s.getBilling(t))
				order := b.call("GET", "/external_api/v1/orders/"+s.order, nil).want(t, 200).JSON(t)
				finished := b.example(t, "WebhookOrderFinished", "data")
				for _, k := range []string{"status", "created_at", "updated_at", "billings", "cancelation_reason"} {
					wantExample(t, "WebhookOrderFinished.data."+k, finished[k], order[k])
				}
			})
			t.Run("active, overdue", func(t *testing.T) {
				t.Parallel()
				b := setup(t, e)
				s := newExampleStory(t, b, financedExample)
				event := b.example(t, "WebhookBillingActive")
				b.clock.Set(exampleMoment(t, event["created_at"].(string)))
				b.pay(t, openPayment(t, b.bill(t, s.bills[0]))["id"].(string))
				wantExample(t, "WebhookBillingActive.data", event["data"], s.getBilling(t))

				overdue := b.example(t, "WebhookBillOverdue", "data")
				s.at(t, overdue["payments"].([]any)[0].(map[string]any)["created_at"].(string))
				s.at(t, overdue["updated_at"].(string))
				wantExample(t, "WebhookBillOverdue.data", overdue, b.bill(t, s.bills[1]))
			})
		})
	}
}

// requestExample is the example body of an operation's request.
func (b *bundle) requestExample(t *testing.T, method, path string) map[string]any {
	t.Helper()
	op := b.contract.Doc().Paths.Value(path).GetOperation(method)
	raw, err := json.Marshal(op.RequestBody.Value.Content["application/json"].Example)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// The webhook examples are the answers to the requests the document
// shows, at the examples' moments.
func TestWebhookExamplesAreWhatTheServerAnswers(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		drawnSecret := func(m map[string]any) map[string]any {
			if s, ok := m["secret"].(string); ok && strings.HasPrefix(s, "whsec_") {
				m["secret"] = "drawn"
			}
			return m
		}
		created := b.example(t, "WebhookCreated")
		b.clock.Set(exampleMoment(t, created["created_at"].(string)))
		create := b.requestExample(t, "POST", "/external_api/v1/webhooks")
		first := b.call("POST", "/external_api/v1/webhooks", create).want(t, 201).JSON(t)
		second := b.call("POST", "/external_api/v1/webhooks", create).want(t, 201).JSON(t)
		wantExample(t, "WebhookCreated", drawnSecret(created), drawnSecret(first))
		list := b.call("GET", "/external_api/v1/webhooks", nil).want(t, 200).Body
		var hooks []any
		if err := json.Unmarshal(list, &hooks); err != nil || len(hooks) != 2 {
			t.Fatalf("webhooks: %s", list)
		}
		wantExample(t, "Webhook", b.example(t, "Webhook"), hooks[0])

		updated := b.example(t, "WebhookUpdated")
		b.clock.Set(exampleMoment(t, updated["updated_at"].(string)))
		got := b.call("PATCH", "/external_api/v1/webhooks/"+second["id"].(string), b.requestExample(t, "PATCH", "/external_api/v1/webhooks/{id}")).want(t, 200).JSON(t)
		wantExample(t, "WebhookUpdated", updated, got)

		rotated := b.example(t, "WebhookRotated")
		b.clock.Set(exampleMoment(t, rotated["updated_at"].(string)))
		got = b.call("POST", "/external_api/v1/webhooks/"+first["id"].(string)+"/rotate_secret", nil).want(t, 200).JSON(t)
		wantExample(t, "WebhookRotated", drawnSecret(rotated), drawnSecret(got))
	})
}

// problemExample is an example of a problem response of the document: the
// one named, or the response's only one.
func (b *bundle) problemExample(t *testing.T, response, name string) map[string]any {
	t.Helper()
	media := b.contract.Doc().Components.Responses[response].Value.Content["application/problem+json"]
	v := media.Example
	if name != "" {
		v = media.Examples[name].Value.Value
	}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// wantProblem compares a problem the server answered with the document's
// example of it; ids the server drew are put back as the example's.
func wantProblem(t *testing.T, name string, example map[string]any, r resp, ids map[string]string) {
	t.Helper()
	got := r.JSON(t)
	for drawnID, exampleID := range ids {
		got["detail"] = strings.ReplaceAll(got["detail"].(string), drawnID, exampleID)
	}
	if !strings.HasSuffix(example["type"].(string), "/docs/errors#"+example["code"].(string)) {
		t.Errorf("%s: type %v does not name its code", name, example["type"])
	}
	got["type"], got["request_id"] = example["type"], example["request_id"]
	if _, ok := example["errors"]; !ok {
		delete(got, "errors")
	}
	wantExample(t, name, example, got)
	if len(got) != len(example) {
		t.Errorf("%s: the server answers %v", name, got)
	}
}

// The document's problems are what the server says, word for word, for
// the requests that cause them.
func TestProblemExamplesAreWhatTheServerAnswers(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		s := newExampleStory(t, b, financedExample)
		exampleOrder := b.example(t, "OrderCharged")["id"].(string)
		exampleOffer := b.example(t, "OfferCreated")
		offerID := s.charged["offer"].(map[string]any)["id"].(string)
		ids := map[string]string{s.order: exampleOrder, offerID: exampleOffer["id"].(string)}

		wantProblem(t, "MalformedRequest", b.problemExample(t, "MalformedRequest", ""),
			b.call("POST", "/external_api/v1/offers", `{"offer": `).want(t, 400), ids)
		wantProblem(t, "Unauthorized", b.problemExample(t, "Unauthorized", ""),
			b.send(b.sandbox.URL, "", "GET", "/external_api/v1/orders/"+s.order, nil, nil).want(t, 401), ids)
		wantProblem(t, "NotFound", b.problemExample(t, "NotFound", ""),
			b.call("GET", "/external_api/v1/orders/"+parcela.NewID(), nil).want(t, 404), ids)
		wantProblem(t, "MethodNotAllowed", b.problemExample(t, "MethodNotAllowed", ""),
			b.call("DELETE", "/external_api/v1/offers/"+offerID, nil).want(t, 405), ids)
		charge := "/external_api/v1/orders/" + s.order + "/charge"
		wantProblem(t, "Conflict invalid_state", b.problemExample(t, "Conflict", "invalid_state"),
			b.call("POST", charge, chargeBody(s.financedConfig, "boleto", 4)).want(t, 409), ids)
		big := `{"offer": {"name": "` + strings.Repeat("x", 1<<20) + `"}}`
		wantProblem(t, "PayloadTooLarge", b.problemExample(t, "PayloadTooLarge", ""),
			b.call("POST", "/external_api/v1/offers", big).want(t, 413), ids)
		wantProblem(t, "UnsupportedMediaType", b.problemExample(t, "UnsupportedMediaType", ""),
			b.send(b.sandbox.URL, b.token, "POST", "/external_api/v1/offers", "offer=x", map[string]string{"Content-Type": "text/plain"}).want(t, 415), ids)

		offer := map[string]any{
			"offer": map[string]any{"name": "Black Friday 2026", "product_id": s.productID, "amount_cents": 499},
			"payment_configurations": []any{
				map[string]any{"payment_type": "upfront", "payment_methods": []string{"pix"}, "expires_in_hours": 24},
				map[string]any{"payment_type": "financed", "financed_type": "bolepix", "payment_methods": []string{"boleto"},
					"allowed_down_payment_methods": []string{"boleto", "pix"}, "down_payment_type": "percentage",
					"down_payment_value": json.Number("0.2"), "interest_rate": json.Number("0.0599"), "max_installments": 12, "expires_in_hours": 72},
			},
		}
		wantProblem(t, "ValidationFailed validation_failed", b.problemExample(t, "ValidationFailed", "validation_failed"),
			b.call("POST", "/external_api/v1/offers", offer).want(t, 422), ids)
		reused := b.problemExample(t, "ValidationFailed", "idempotency_key_reused")
		key := map[string]string{"Idempotency-Key": "2330fcf1-562a-44b8-8866-8d77e827062c"}
		hook := b.requestExample(t, "POST", "/external_api/v1/webhooks")
		b.send(b.sandbox.URL, b.token, "POST", "/external_api/v1/webhooks", hook, key).want(t, 201)
		hook["name"] = "ERP"
		wantProblem(t, "ValidationFailed idempotency_key_reused", reused,
			b.send(b.sandbox.URL, b.token, "POST", "/external_api/v1/webhooks", hook, key).want(t, 422), ids)

		// A second order of the offer, once its seats are all taken; and
		// in more installments than its configuration allows.
		other := b.call("POST", "/external_api/v1/orders", orderBody(offerID)).want(t, 201).JSON(t)["id"].(string)
		b.call("PATCH", "/external_api/v1/offers/"+offerID, map[string]any{"offer": map[string]any{"seats": 1}}).want(t, 200)
		wantProblem(t, "ChargeUnprocessable offer_unavailable", b.problemExample(t, "ChargeUnprocessable", "offer_unavailable"),
			b.call("POST", "/external_api/v1/orders/"+other+"/charge", chargeBody(s.financedConfig, "boleto", 4)).want(t, 422), ids)
		b.call("PATCH", "/external_api/v1/offers/"+offerID, map[string]any{"offer": map[string]any{"seats": nil}}).want(t, 200)
		wantProblem(t, "ChargeUnprocessable installments", b.problemExample(t, "ChargeUnprocessable", "installments"),
			b.call("POST", "/external_api/v1/orders/"+other+"/charge", chargeBody(s.financedConfig, "boleto", 13)).want(t, 422), ids)
		// And while its product is disabled.
		b.call("PATCH", "/external_api/v1/products/"+s.productID, map[string]any{"product": map[string]any{"availability": "disabled"}}).want(t, 200)
		wantProblem(t, "ChargeUnprocessable product_disabled", b.problemExample(t, "ChargeUnprocessable", "product_disabled"),
			b.call("POST", "/external_api/v1/orders/"+other+"/charge", chargeBody(s.financedConfig, "boleto", 4)).want(t, 422), ids)
		b.call("PATCH", "/external_api/v1/products/"+s.productID, map[string]any{"product": map[string]any{"availability": "enabled"}}).want(t, 200)
	})
}
