package server_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"

	"parcela"
	"parcela/sqldb"
	"parcela/webhook"
)

// An order's answer lists every field at fault at once, as the error
// catalogue promises: its own fields beside its offer (unknown or not
// selling), its city (unknown) and its zipcode against the city's state.
// An invalid CPF hid a disabled offer, and the offer a zipcode of another
// state, each found only once the one before was fixed (an audit).
func TestOrderListsEveryFieldAtFaultAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, sqldb.SQLite)
	offer := b.offer()
	id := offer["id"].(string)
	b.call("PATCH", "/external_api/v1/offers/"+id, map[string]any{"offer": map[string]any{"availability": "disabled"}}).want(t, 200)
	with := func(offerID string, change func(order, address map[string]any)) map[string]any {
		body := orderBody(offerID)
		o := body["order"].(map[string]any)
		change(o, o["address"].(map[string]any))
		return body
	}
	for name, tc := range map[string]struct {
		body map[string]any
		want map[string]string
	}{
		"a bad CPF, a disabled offer and a zipcode of Rio for São Paulo": {
			with(id, func(o, a map[string]any) { o["customer_document"] = "111.111.111-12"; a["zipcode"] = "20040-002" }),
			map[string]string{"order.customer_document": "invalid", "order.offer_id": "not_sellable", "order.address.zipcode": "invalid"}},
		"a bad CPF, an unknown offer and an unknown city": {
			with("0190c7a2-0000-7000-8000-000000000000", func(o, a map[string]any) { o["customer_document"] = "111.111.111-12"; a["city_ibge_code"] = "9999999" }),
			map[string]string{"order.customer_document": "invalid", "order.offer_id": "not_found", "order.address.city_ibge_code": "not_found"}},
		"a missing name and a disabled offer, the address left out": {
			with(id, func(o, a map[string]any) { delete(o, "customer_name"); delete(o, "address") }),
			map[string]string{"order.customer_name": "required", "order.offer_id": "not_sellable", "order.address": "required"}},
	} {
		if got := fieldCodes(t, b.call("POST", "/external_api/v1/orders", tc.body)); !maps.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}

// A webhook's answer lists a refused address beside its other fields' errors,
// on creation and on a PATCH: a webhook with no name and a private address
// was refused for its name alone (an audit).
func TestWebhookListsItsAddressBesideOtherFields(t *testing.T) {
	t.Parallel()
	b := setup(t, sqldb.SQLite)
	b.refuseSpecialAddresses(t)
	want := map[string]string{"name": "required", "url": "invalid"}
	got := fieldCodes(t, b.call("POST", "/external_api/v1/webhooks", map[string]any{"name": "", "url": "http://10.0.0.1/x",
		"entity": "bill", "events": []string{"paid"}, "verb": "post"}))
	if !maps.Equal(got, want) {
		t.Errorf("create: %v, want %v", got, want)
	}
	hook := b.call("POST", "/external_api/v1/webhooks", map[string]any{"name": "ERP", "url": "https://hooks.example.com/x",
		"entity": "bill", "events": []string{"paid"}, "verb": "post"}).want(t, 201).JSON(t)
	got = fieldCodes(t, b.call("PATCH", "/external_api/v1/webhooks/"+hook["id"].(string), map[string]any{"name": "", "url": "http://10.0.0.1/x"}))
	if !maps.Equal(got, want) {
		t.Errorf("PATCH: %v, want %v", got, want)
	}
}

// A webhook refused for more fields than an answer lists keeps their
// count, its address among them: rebuilt from the answer's list, it listed
// one more than MaxFieldErrors and counted one fewer (a review).
func TestWebhookRefusalPastTheListKeepsItsCount(t *testing.T) {
	t.Parallel()
	b := setup(t, sqldb.SQLite)
	b.refuseSpecialAddresses(t)
	events := make([]string, 150)
	for i := range events {
		events[i] = fmt.Sprintf("nope%d", i)
	}
	r := b.call("POST", "/external_api/v1/webhooks", map[string]any{"name": "ERP", "url": "http://10.0.0.1/x",
		"entity": "bill", "events": events, "verb": "post"})
	r.want(t, 422)
	var p struct {
		Detail string
		Errors []parcela.FieldError
	}
	if err := json.Unmarshal(r.Body, &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Errors) != parcela.MaxFieldErrors || !strings.Contains(p.Detail, "and 150 more errors") {
		t.Errorf("%d errors listed (want %d); detail %q, want 151 errors counted", len(p.Errors), parcela.MaxFieldErrors, p.Detail)
	}
}

// refuseSpecialAddresses has b's webhooks refuse every special-purpose
// address, as a server allowing none does.
func (b *bundle) refuseSpecialAddresses(t *testing.T) {
	t.Helper()
	policy, err := webhook.NewAddressPolicy("")
	if err != nil {
		t.Fatal(err)
	}
	b.app.Webhooks.RefuseAddresses(policy)
}
