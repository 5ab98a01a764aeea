package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"parcela"
)

// A waiting page's check, sent with its state as the tag, is answered 304
// without the page while the state is the same, and with the whole page
// once it changed: the script fetched the whole page every few seconds to
// compare one attribute. A page that no longer checks carries no tag.
func TestWaitingPageCheckIsNotModifiedUntilItsStateChanges(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, boleto := b.firstInstallmentBoleto(t)
	o := b.onlyOrder(t)
	orderPath := parcela.Links{}.OrderURL(o.ID, o.AccessCode)
	before := b.get(t, orderPath)
	tag := `W/"` + stateOf(before.body) + `"`
	if !strings.Contains(before.body, `data-refresh="1"`) || before.header.Get("ETag") != tag {
		t.Fatalf("a waiting page's tag: %q, want %q", before.header.Get("ETag"), tag)
	}
	same := b.getWith(t, orderPath, ifNoneMatch(tag))
	if same.status != http.StatusNotModified || same.body != "" || same.header.Get("ETag") != tag || same.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("a check of an unchanged page: %d, %d bytes, %v", same.status, len(same.body), same.header)
	}
	if listed := b.getWith(t, orderPath, ifNoneMatch(`W/"other", `+tag)); listed.status != http.StatusNotModified {
		t.Fatalf("a check whose list holds the tag: %d", listed.status)
	}
	if other := b.getWith(t, orderPath, ifNoneMatch(`W/"other"`)); other.status != http.StatusOK || !strings.Contains(other.body, *boleto.PixCode) {
		t.Fatalf("a check with another tag: %d", other.status)
	}

	b.pay(t, boleto.ID)
	after := b.getWith(t, orderPath, ifNoneMatch(tag))
	if after.status != http.StatusOK || stateOf(after.body) == stateOf(before.body) || strings.Contains(after.body, *boleto.PixCode) {
		t.Fatalf("a check once the installment is paid: %d, state %q", after.status, stateOf(after.body))
	}
	if strings.Contains(after.body, "data-refresh") != (after.header.Get("ETag") != "") {
		t.Fatalf("a page's tag and its checks disagree: ETag %q", after.header.Get("ETag"))
	}
}

// A state a tag cannot hold gives no tag, so its page is always sent.
func TestStateTag(t *testing.T) {
	t.Parallel()
	for state, want := range map[string]string{
		"in_progress/waiting_payment/pending:1": `W/"in_progress/waiting_payment/pending:1"`,
		"":                                      "",
		"a b":                                   "",
		`a"b`:                                   "",
		"pagamento/é":                           "",
		"a\x7f":                                 "",
	} {
		if got := stateTag(state); got != want {
			t.Errorf("stateTag(%q) = %q, want %q", state, got, want)
		}
	}
}

func ifNoneMatch(tag string) map[string]string { return map[string]string{"If-None-Match": tag} }

// A waiting page whose rendering fails is answered with the error page,
// without the page's tag: it was set before the page rendered, and the
// 500 carried a tag for a page never sent.
func TestFailedWaitingPageCarriesNoTag(t *testing.T) {
	t.Parallel()
	h := New(Deps{})
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/order/x", nil)
	// Content the order template cannot execute on: a rendering failure.
	h.render(w, r, http.StatusOK, "order", page{Refresh: 5, State: "pending", Content: 42})
	if w.Code != http.StatusInternalServerError {
		t.Fatalf("status %d, want the 500 of a failed rendering", w.Code)
	}
	if tag := w.Header().Get("ETag"); tag != "" {
		t.Fatalf("a 500 error page carries the waiting page's tag %q", tag)
	}
}
