package server_test

import (
	"testing"

	"parcela/sqldb"
)

// A charge's number past one of its bounds is too_small or too_large, as
// the field codes' catalogue names them: more installments than the
// configuration allows answered invalid (an audit).
func TestChargeNumbersPastTheirBounds(t *testing.T) {
	t.Parallel()
	b := setup(t, sqldb.SQLite)
	offer, order := b.order()
	up, fin := configs(offer)
	path := "/external_api/v1/orders/" + order["id"].(string) + "/charge"
	for _, tc := range []struct {
		config, field string
		value         int
		want          string
	}{
		{fin, "installments", 40, "too_large"},
		{fin, "installments", 1, "too_small"},
		{fin, "due_day", 32, "too_large"},
		{fin, "due_day", 0, "too_small"},
		{up, "installments", 3, "too_large"}, // an upfront configuration's is 1 (a review)
		{up, "installments", 0, "too_small"},
	} {
		body := chargeBody(tc.config, "pix", 3)
		body[tc.field] = tc.value
		if got := fieldCodes(t, b.call("POST", path, body))[tc.field]; got != tc.want {
			t.Errorf("%s %d: code %q, want %q", tc.field, tc.value, got, tc.want)
		}
	}
}
