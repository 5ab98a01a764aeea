package server

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"parcela"
)

func pageBills() []parcela.BillEndpointForm {
	paid := parcela.Timestamp(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))
	code := "<&>\u2028\xff"
	return []parcela.BillEndpointForm{
		{},
		{Payments: []parcela.PaymentBillForm{{BillID: "b", RefusedReason: &code}}, PaidAt: &paid, CheckoutURL: "https://x/checkout?a=1&b=2"},
		{AuthenticationCode: code, CurrentAmountCents: math.MinInt64, OriginalAmountCents: math.MaxInt64},
	}
}

// The bill page writes what json.Marshal writes of a Page, whatever its
// fields: each is set by reflection, so a field added to Page fails here
// until billPage.AppendJSON writes it.
func TestBillPageMatchesMarshal(t *testing.T) {
	for _, results := range [][]parcela.BillEndpointForm{nil, {}, pageBills()} {
		for _, n := range []int64{0, 1, math.MaxInt64, math.MinInt64} {
			var p Page[parcela.BillEndpointForm]
			v := reflect.ValueOf(&p).Elem()
			for i := range v.NumField() {
				switch f := v.Field(i); f.Kind() {
				case reflect.Slice:
					f.Set(reflect.ValueOf(results))
				case reflect.Int:
					f.SetInt(n + int64(i))
				default:
					t.Fatalf("Page.%s (%s) is not set by this test nor written by billPage.AppendJSON", v.Type().Field(i).Name, f.Kind())
				}
			}
			want, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := marshal(billPage(p))
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("billPage wrote %s (%v), json.Marshal %s", got, err, want)
			}
		}
	}
}

func TestMarshalWritesBillsAsJSONMarshal(t *testing.T) {
	for _, b := range pageBills() {
		want, _ := json.Marshal(b)
		if got, err := marshal(b); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("marshal wrote %s (%v), json.Marshal %s", got, err, want)
		}
	}
	// The order and billing forms too, as they are answered.
	at := parcela.Timestamp(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))
	code := "<&>\u2028\xff"
	billing := parcela.BillingOrderForm{TotalPayableCents: 10, Bills: []parcela.BillOrderForm{{}, {Payments: []parcela.PaymentOrderForm{{PixCode: &code, CreatedAt: at}}}}}
	for _, f := range []any{billing, parcela.BillingOrderForm{}, parcela.OrderForm{}, parcela.OrderForm{Email: code, CreatedAt: at,
		Address: &parcela.AddressForm{Complement: &code}, Billings: []parcela.BillingOrderForm{billing, {}}}} {
		want, _ := json.Marshal(f)
		if got, err := marshal(f); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("marshal wrote %s (%v), json.Marshal %s", got, err, want)
		}
	}
	// Anything else is json.Marshal's.
	other := map[string]any{"a": []int{1}, "b": "<"}
	want, _ := json.Marshal(other)
	if got, err := marshal(other); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("marshal wrote %s (%v), json.Marshal %s", got, err, want)
	}
}

// A page's body, once released, may carry the next page: what is left of
// the longer one never shows.
func TestBillPageReusesReleasedBodies(t *testing.T) {
	var long []parcela.BillEndpointForm
	for range 20 {
		long = append(long, pageBills()...)
	}
	for _, results := range [][]parcela.BillEndpointForm{long, long[:17], long[:60], long[:16]} {
		p := newPage(results, 1000, 100)
		want, _ := json.Marshal(p)
		got, err := marshal(billPage(p))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("billPage of %d wrote %d bytes (%v), json.Marshal %d", len(results), len(got), err, len(want))
		}
		releaseBody(got)
	}
}
