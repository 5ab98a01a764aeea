package web

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// The form shown again by the "update" button (browsers without
// JavaScript, to load a state's cities) kept an input over 300 characters
// cut, silently, and posted to buy, the cut value passed, the domain
// trimming it: "Maria", 300 spaces and "Silva" was ordered as "Maria" (a
// review). The cut value now ends with "…", which the buy refuses.
func TestOfferFormUpdateKeepsNoCutInputToBuyWith(t *testing.T) {
	t.Parallel()
	b := setup(t)
	typed := "Maria" + strings.Repeat(" ", 300) + "Silva"
	page := b.get(t, b.offerPath())
	upd := b.post(t, b.offerPath(), buyForm(t, page.body, testUpfront+":pix", url.Values{"name": {typed}, "intent": {"update"}}))
	if upd.status != http.StatusOK {
		t.Fatalf("update: status %d", upd.status)
	}
	m := regexp.MustCompile(`name="name"[^>]*value="([^"]*)"|value="([^"]*)"[^>]*name="name"`).FindStringSubmatch(upd.body)
	if m == nil {
		t.Fatalf("no name input on the updated form")
	}
	shown := html.UnescapeString(m[1] + m[2])
	res := b.post(t, b.offerPath(), buyForm(t, upd.body, testUpfront+":pix", url.Values{"name": {shown}}))
	if res.status == http.StatusSeeOther {
		orders := b.store.orderList()
		t.Fatalf("the update showed %q (%d characters, no error) and the buy made an order for %q, not %q",
			shown, len(shown), orders[0].CustomerName, typed)
	}
}
