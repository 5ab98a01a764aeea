package parcela

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// randomData returns n bytes of rng for formGen.
func randomData(rng *rand.Rand, n int) []byte {
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	return data
}

func TestOrderFormAppendJSONMatchesMarshal(t *testing.T) {
	sameAsMarshal(t, OrderForm{})
	sameAsMarshal(t, OrderForm{Address: &AddressForm{}, Billings: []BillingOrderForm{{Bills: []BillOrderForm{{Payments: []PaymentOrderForm{}}}}},
		Offer: OfferOrderForm{PaymentConfigurations: []PaymentConfigurationOrderForm{{AllowedDownPaymentMethods: []string{}}}}})
	rng := rand.New(rand.NewPCG(7, 8))
	complete := 0
	for range 2000 {
		f := genForm[OrderForm](t, randomData(rng, 16<<10))
		sameAsMarshal(t, f)
		if out, err := f.AppendJSON(nil); err == nil && bytes.Contains(out, []byte(`"payments":[{"id":`)) &&
			bytes.Contains(out, []byte(`"down_payment_type":"`)) && bytes.Contains(out, []byte(`"company":{`)) {
			complete++
		}
	}
	// The comparison is not vacuous: forms with every level filled render.
	if complete < 100 {
		t.Errorf("only %d generated orders rendered a billing's bill's payment", complete)
	}
}

func TestBillingOrderFormAppendJSONMatchesMarshal(t *testing.T) {
	sameAsMarshal(t, BillingOrderForm{})
	sameAsMarshal(t, BillingOrderForm{Bills: []BillOrderForm{}})
	rng := rand.New(rand.NewPCG(9, 10))
	for range 3000 {
		sameAsMarshal(t, genForm[BillingOrderForm](t, randomData(rng, 4096)))
	}
}

func FuzzOrderFormAppendJSON(f *testing.F) {
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{0xff, 0x00, 0x81, 0x40, 0x03}, 800))
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsMarshal(t, genForm[OrderForm](t, data))
	})
}

func FuzzBillingOrderFormAppendJSON(f *testing.F) {
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{0xff, 0x00, 0x81, 0x40, 0x03}, 400))
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsMarshal(t, genForm[BillingOrderForm](t, data))
	})
}
