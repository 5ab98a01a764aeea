package web

import (
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"parcela/web/browsertest"
)

// Without JavaScript, the offer form's updates (the state's cities, the
// plan of other options) come back from the server at the controls that
// asked for them: on a phone they opened at the page's top, screens above
// the city to choose next, or above the plan recalculated.
func TestBrowserUpdatesWithoutJavaScriptOpenAtTheirControls(t *testing.T) {
	b := setup(t)
	tb := browsertest.Open(t, b.server.URL)
	if _, err := chromedp.Call(tb.Ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	tb.Do(chromedp.EmulateViewport(390, 844))
	tb.Open(b.offerPath())
	inView := func(css string) bool {
		return tb.Is(`(r => r.top >= 0 && r.bottom <= innerHeight)(document.querySelector(` + "`" + css + "`" + `).getBoundingClientRect())`)
	}
	tb.Do(chromedp.SetValue(chromedp.ID("f-state"), "SP"), chromedp.Click(chromedp.CSS(`#f-state ~ button[value=update]`)))
	tb.WaitFor(`document.readyState === "complete" && !document.querySelector("#f-city").disabled`)
	if !inView("#f-city") || !inView("#f-state") || !inView(`label[for="f-state"]`) {
		t.Errorf("the cities loaded, the page opens at %s px, away from the state and the city", tb.Eval(`String(scrollY)`))
	}
	tb.Do(chromedp.Click(chromedp.CSS(`input[value="`+testFinanced+`:boleto"]`)),
		chromedp.SetValue(chromedp.CSS(`select[name="installments.`+testFinanced+`"]`), "6"))
	tb.Do(chromedp.Click(chromedp.CSS(`.option-group[data-group="` + testFinanced + `"] button[value=update]`)))
	tb.WaitFor(`document.readyState === "complete" && document.querySelectorAll(".option-group[data-group='` + testFinanced + `'] .plan-table tbody tr").length === 6`)
	tb.ViewportShot("nojs-plan-update-phone")
	if !inView(`label[for="installments-`+testFinanced+`"]`) || !inView(`select[name="due_day.`+testFinanced+`"]`) {
		t.Errorf("the plan recalculated, the page opens at %s px, away from its controls", tb.Eval(`String(scrollY)`))
	}
}
