package server

import (
	"encoding/json"
	"strconv"
	"sync"

	"parcela"
)

// marshal is json.Marshal but for the bill and order forms, the hottest
// responses, which write themselves without reflection, byte for byte as
// json.Marshal would (parcela/form_json.go), into a buffer sized once.
func marshal(v any) ([]byte, error) {
	switch v := v.(type) {
	case parcela.BillEndpointForm:
		return v.AppendJSON(make([]byte, 0, billJSONSize))
	case parcela.OrderForm:
		n := orderJSONSize
		for i := range v.Billings {
			n += billingJSONSize + len(v.Billings[i].Bills)*billOrderJSONSize
		}
		return v.AppendJSON(make([]byte, 0, n))
	case parcela.BillingOrderForm:
		return v.AppendJSON(make([]byte, 0, billingJSONSize+len(v.Bills)*billOrderJSONSize))
	case billPage:
		n := 64 + len(v.Results)*billJSONSize
		if p, ok := pageBodies.Get().(*[]byte); ok && cap(*p) >= n {
			return v.AppendJSON((*p)[:0])
		}
		return v.AppendJSON(make([]byte, 0, n))
	}
	return json.Marshal(v)
}

// pageBodies keeps large bodies once written, for the next page of bills:
// a new 200 KB buffer a page, zeroed, was a fifth of rendering the listing.
var pageBodies sync.Pool

// releaseBody hands a body net/http is done with (its Write copies) back
// for reuse; a small one is left to the collector.
func releaseBody(b []byte) {
	if cap(b) >= 32<<10 && cap(b) <= 4<<20 {
		pageBodies.Put(&b)
	}
}

// About the size of a bill with a payment or two; of an order without its
// billings; of a billing without its bills; of a bill inside an order (an
// order charged in 12 bills is about 8.5 KB).
const (
	billJSONSize      = 2048
	orderJSONSize     = 3072
	billingJSONSize   = 1024
	billOrderJSONSize = 512
)

// billPage is the bill listing's page, rendered without reflection.
type billPage Page[parcela.BillEndpointForm]

// AppendJSON appends p exactly as json.Marshal(Page(p)) writes it.
func (p billPage) AppendJSON(dst []byte) ([]byte, error) {
	dst, err := parcela.AppendJSONArrayOf(append(dst, `{"results":`...), p.Results, (*parcela.BillEndpointForm).AppendJSON)
	if err != nil {
		return nil, err
	}
	dst = strconv.AppendInt(append(dst, `,"total_items":`...), int64(p.TotalItems), 10)
	dst = strconv.AppendInt(append(dst, `,"total_pages":`...), int64(p.TotalPages), 10)
	return append(dst, '}'), nil
}
