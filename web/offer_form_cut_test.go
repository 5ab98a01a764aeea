package web

import (
	"html"
	"net/http"
	"strings"
	"testing"
)

// An input longer than the form keeps is refused as too long, next to its
// field and kept as cut: cut and trimmed by the domain, "Maria", 300
// spaces and "Silva" was stored as "Maria", and a CPF followed by blanks
// and more as that CPF (an audit); the API refuses the same name.
func TestOfferFormRefusesAnInputItCut(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for input, typed := range map[string]string{
		"name": "Maria" + strings.Repeat(" ", 300) + "Silva",
		"cpf":  "529.982.247-25" + strings.Repeat(" ", 300) + "999",
	} {
		page := b.get(t, b.offerPath())
		res := b.post(t, b.offerPath(), buyForm(t, page.body, testUpfront+":pix", map[string][]string{input: {typed}}))
		if res.status != http.StatusUnprocessableEntity || !strings.Contains(html.UnescapeString(res.body), "Texto longo demais") {
			t.Fatalf("%s of %d characters: status %d", input, len(typed), res.status)
		}
	}
	if n := len(b.store.orderList()); n != 0 {
		t.Fatalf("%d orders made of inputs cut", n)
	}
	if got := fieldOfInput("name"); got != "order.customer_name" {
		t.Fatalf("the name input's field: %s", got)
	}
}
