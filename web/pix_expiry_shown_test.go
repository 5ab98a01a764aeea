package web

import (
	"html"
	"strings"
	"testing"
	"time"

	"parcela"
)

// A Pix payable through the end of a day expires the millisecond after
// (parcela.ExpiryAfter, 00:00 of the next): its box names that day's 23:59,
// where it named the next day's 00:00, one more day to pay to a payer
// reading the date. A payment expiring at another instant names it.
func TestPayBoxNamesTheLastPayableMinute(t *testing.T) {
	t.Parallel()
	code := "00020126"
	now := time.Date(2027, time.March, 10, 9, 0, 0, 0, parcela.SaoPaulo)
	for expires, want := range map[time.Time]string{
		parcela.ExpiryAfter(time.Date(2027, time.March, 10, 23, 59, 59, 999e6, parcela.SaoPaulo)): "(10/03/2027 às 23:59)",
		time.Date(2027, time.March, 12, 10, 0, 0, 0, parcela.SaoPaulo):                            "(12/03/2027 às 10:00)",
	} {
		pix := &parcela.Payment{ID: "p", Method: parcela.MethodPix, Barcode: &code, AmountCents: 1000, CreatedAt: now, ExpiresAt: expires}
		if body := html.UnescapeString(string(payBox(newPayView(nil, pix, nil, now)))); !strings.Contains(body, want) {
			t.Errorf("a Pix expiring %v: its box lacks %q:\n%s", expires, want, body)
		}
	}
}
