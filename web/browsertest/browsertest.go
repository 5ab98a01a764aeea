// Package browsertest drives the payer's pages in a real headless
// Chromium for tests: one browser per test binary, a browser context (its
// own cookies) per tab, screenshots at phone and desktop sizes. Without a
// Chromium binary the tests skip; PARCELA_CHROMIUM names one. Screenshots
// go to PARCELA_SCREENSHOTS, or to a temporary directory printed once.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

var shared struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	skip   string
	shots  string
}

// Stop closes the shared browser. Call it from TestMain after m.Run.
func Stop() {
	if shared.cancel != nil {
		shared.cancel()
	}
}

// ScreenshotDir is where the screenshots of this test binary go ("" before
// the first tab).
func ScreenshotDir() string { return shared.shots }

func chromiumPath() string {
	if p := os.Getenv("PARCELA_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func startBrowser() {
	path := chromiumPath()
	if path == "" {
		shared.skip = "no Chromium found: install Debian's chromium or set PARCELA_CHROMIUM to run the browser tests"
		return
	}
	profile, err := os.MkdirTemp("", "parcela-chromium-")
	if err != nil {
		shared.skip = err.Error()
		return
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.UserDataDir(profile), chromedp.WindowSize(1280, 800),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true), chromedp.Flag("lang", "pt-BR"),
		chromedp.Env("LANGUAGE=pt_BR", "LANG=pt_BR.UTF-8"))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		shared.skip = "Chromium at " + path + " did not start: " + err.Error()
		return
	}
	shared.ctx, shared.cancel = ctx, func() { cancel(); cancelAlloc(); _ = os.RemoveAll(profile) }
	shared.shots = os.Getenv("PARCELA_SCREENSHOTS")
	if shared.shots == "" {
		shared.shots, _ = os.MkdirTemp("", "parcela-screenshots-")
	}
	if err := os.MkdirAll(shared.shots, 0o755); err != nil {
		shared.skip = "screenshot directory: " + err.Error()
		return
	}
	fmt.Fprintf(os.Stderr, "browser tests: screenshots in %s\n", shared.shots)
}

// Tab is one browser context on the pages served at Base (a server's URL).
type Tab struct {
	T    *testing.T
	Ctx  context.Context
	Base string
}

// Open opens a tab at 1280×800 in Brazilian Portuguese, or skips the test
// without a browser (and in -short mode). Tests with tabs should not run
// in parallel, so that a small machine stays responsive.
func Open(t *testing.T, base string) *Tab {
	t.Helper()
	if testing.Short() {
		t.Skip("browser tests skipped in -short mode")
	}
	shared.once.Do(startBrowser)
	if shared.skip != "" {
		t.Skip(shared.skip)
	}
	ctx, cancel := chromedp.NewContext(shared.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	// The first action opens the tab, which lives as long as the context
	// of that call: so not one with a timeout.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	if _, err := chromedp.Call(ctx, emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{Locale: "pt-BR"}); err != nil {
		t.Fatalf("setting the locale: %v", err)
	}
	return &Tab{T: t, Ctx: ctx, Base: base}
}

// Do runs steps, failing the test on the first error or after 60 s.
func (tb *Tab) Do(steps ...chromedp.Action[chromedp.Void]) {
	tb.T.Helper()
	ctx, cancel := context.WithTimeout(tb.Ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		tb.T.Fatalf("browser: %v", err)
	}
}

// Eval evaluates a JavaScript expression in the page.
func (tb *Tab) Eval(expr string) string {
	tb.T.Helper()
	ctx, cancel := context.WithTimeout(tb.Ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		tb.T.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// Is tells whether the expression is truthy in the page.
func (tb *Tab) Is(expr string) bool {
	return tb.Eval("String(Boolean("+expr+"))") == "true"
}

// WaitFor waits until the expression is true in the page, through any
// navigation on the way.
func (tb *Tab) WaitFor(expr string) {
	tb.T.Helper()
	check := "(() => { try { return Boolean(" + expr + ") } catch (e) { return false } })()"
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(tb.Ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](check))
		cancel()
		if err == nil && ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	tb.T.Fatalf("waiting for %s: timed out\nat %s, page text:\n%s", expr, tb.Eval("location.href"), tb.Eval("document.body ? document.body.innerText : ''"))
}

// Open navigates to a path (or a full URL) and waits for the page.
func (tb *Tab) Open(path string) {
	tb.T.Helper()
	if len(path) > 0 && path[0] == '/' {
		path = tb.Base + path
	}
	tb.Do(chromedp.Navigate(path))
	tb.WaitFor(`document.readyState === "complete"`)
}

// Shots saves the page at desktop and phone sizes as name-desktop.png and
// name-phone.png (the whole page height).
func (tb *Tab) Shots(name string) {
	tb.T.Helper()
	for _, size := range []struct {
		label string
		w, h  int64
	}{{"desktop", 1280, 800}, {"phone", 390, 844}} {
		tb.Do(chromedp.EmulateViewport(size.w, size.h), chromedp.Sleep(300*time.Millisecond))
		ctx, cancel := context.WithTimeout(tb.Ctx, 30*time.Second)
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		cancel()
		if err != nil {
			tb.T.Fatalf("screenshot: %v", err)
		}
		file := filepath.Join(shared.shots, name+"-"+size.label+".png")
		if err := os.WriteFile(file, png, 0o644); err != nil {
			tb.T.Fatal(err)
		}
		tb.T.Logf("screenshot %s", file)
	}
	tb.Do(chromedp.EmulateViewport(1280, 800))
}

// ViewportShot saves what a 1280×800 screen shows, as name.png.
func (tb *Tab) ViewportShot(name string) {
	tb.T.Helper()
	ctx, cancel := context.WithTimeout(tb.Ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		tb.T.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(filepath.Join(shared.shots, name+".png"), png, 0o644); err != nil {
		tb.T.Fatal(err)
	}
}

// TabTo presses Tab until the focused element matches css.
func (tb *Tab) TabTo(css string) {
	tb.T.Helper()
	match := "document.activeElement && document.activeElement.matches(" + strconv.Quote(css) + ")"
	for range 80 {
		if tb.Is(match) {
			return
		}
		tb.Do(chromedp.KeyEvent(kb.Tab))
	}
	tb.T.Fatalf("Tab never reached %s (at %s)", css, tb.Eval("document.activeElement.outerHTML.slice(0, 200)"))
}

// TypeInto tabs to a field and types into it.
func (tb *Tab) TypeInto(css, text string) {
	tb.T.Helper()
	tb.TabTo(css)
	tb.Do(chromedp.KeyEvent(text))
}

// ArrowTo moves the focused select or radio group with the arrow keys
// until the focused element's value (or the checked radio's) is value.
func (tb *Tab) ArrowTo(value string) {
	tb.T.Helper()
	current := `(document.activeElement.type === "radio" ? document.querySelector("input[name='" + document.activeElement.name + "']:checked").value : document.activeElement.value)`
	for _, key := range []string{kb.ArrowDown, kb.ArrowUp} {
		for range 700 {
			if tb.Eval(current) == value {
				return
			}
			before := tb.Eval(current)
			tb.Do(chromedp.KeyEvent(key))
			if tb.Eval(current) == before {
				break // the end of the list
			}
		}
	}
	tb.T.Fatalf("arrows never reached %q (at %q)", value, tb.Eval(current))
}

// FillCustomer fills the offer page's customer form the quick way (by
// input id f-NAME; the state through its change event, then the city).
func (tb *Tab) FillCustomer(fields map[string]string) {
	tb.T.Helper()
	for _, id := range customerInputs {
		v, ok := fields[id]
		if !ok {
			continue
		}
		tb.Do(chromedp.SendKeys(chromedp.ID("f-"+id), v))
	}
	if st := fields["state"]; st != "" {
		tb.Eval(`(s => { s.value = ` + strconv.Quote(st) + `; s.dispatchEvent(new Event("change")); return "" })(document.querySelector("#f-state"))`)
		tb.WaitFor(`!document.querySelector("#f-city").disabled`)
		tb.Do(chromedp.SetValue(chromedp.ID("f-city"), fields["city"]))
	}
}

// TypeCustomer fills the same form with the keyboard alone, as a person
// would: each field typed, the state and then the city chosen with the
// arrow keys once the state's cities have arrived.
func (tb *Tab) TypeCustomer(fields map[string]string) {
	tb.T.Helper()
	for _, id := range customerInputs {
		if v, ok := fields[id]; ok {
			tb.TypeInto("#f-"+id, v)
		}
	}
	tb.TabTo("#f-state")
	tb.ArrowTo(fields["state"])
	tb.WaitFor(`!document.querySelector("#f-city").disabled && document.querySelectorAll("#f-city option").length > 600`)
	tb.TabTo("#f-city")
	tb.ArrowTo(fields["city"])
}

// customerInputs are the customer form's text inputs (id f-NAME), in the
// page's order.
var customerInputs = []string{"name", "cpf", "birthdate", "email", "phone", "cep", "number", "street", "complement", "neighborhood"}

// Maria is a valid customer in São Paulo, as FillCustomer takes it.
var Maria = map[string]string{"name": "Maria da Silva", "cpf": "52998224725", "birthdate": "17/05/1990", "email": "maria@example.com",
	"phone": "11987654321", "cep": "01310100", "number": "1000", "street": "Avenida Paulista", "neighborhood": "Bela Vista",
	"state": "SP", "city": "3550308"}

// MariaTyped is Maria as a person types her, with the CPF's dots and dash.
var MariaTyped = map[string]string{"name": "Maria da Silva", "cpf": "529.982.247-25", "birthdate": "17/05/1990", "email": "maria@example.com",
	"phone": "11987654321", "cep": "01310100", "number": "1000", "street": "Avenida Paulista", "neighborhood": "Bela Vista",
	"state": "SP", "city": "3550308"}

// PayByCard fills the checkout's card form and submits it, then waits for
// the page the attempt lands on: the checkout on the attempt, or (an
// approval on a purchase's card form) the order's page. A page at another
// address than the form's, since the attempt's page is at its own.
func (tb *Tab) PayByCard(number, cvv, installments string) {
	tb.T.Helper()
	before := tb.Eval(`location.href`)
	tb.Do(chromedp.SendKeys(chromedp.ID("f-card_number"), number), chromedp.SendKeys(chromedp.ID("f-card_name"), "MARIA DA SILVA"),
		chromedp.SetValue(chromedp.ID("f-card_month"), "12"), chromedp.SetValue(chromedp.ID("f-card_year"), strconv.Itoa(time.Now().Year()+3)),
		chromedp.SendKeys(chromedp.ID("f-card_cvv"), cvv), chromedp.SetValue(chromedp.ID("f-card_installments"), installments))
	tb.Do(chromedp.Click(chromedp.CSS(".card-form button.primary")))
	tb.WaitFor(`location.href !== ` + strconv.Quote(before) + ` && (location.search.includes("payment=") || location.pathname.startsWith("/pay/orders/")) && document.readyState === "complete"`)
}
