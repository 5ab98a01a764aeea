package web

import (
	"crypto/sha256"
	"html/template"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"parcela"
)

// paymentChoices is the offer page's first section: the option groups.
var paymentChoices = regexp.MustCompile(`(?s)<legend><span class="step">1</span>.*?</fieldset>`)

func choicesOf(t *testing.T, b *bundle) string {
	t.Helper()
	res := b.get(t, b.offerPath())
	if res.status != http.StatusOK {
		t.Fatalf("offer page: %d", res.status)
	}
	s := paymentChoices.FindString(res.body)
	if s == "" {
		t.Fatalf("no payment choices in:\n%s", res.body)
	}
	return s
}

// A kept option group is shown again only while nothing it shows changed:
// after each change, a handler that kept the earlier groups renders what a
// handler that never saw them renders.
func TestKeptOptionGroupsFollowWhatTheyShow(t *testing.T) {
	t.Parallel()
	changes := []struct {
		name   string
		change func(b *bundle)
	}{
		{"interest", func(b *bundle) { b.offer.PaymentConfigurations[1].InterestRate = parcela.MustRate("0.0349") }},
		{"registration fee", func(b *bundle) { b.offer.PaymentConfigurations[1].RegistrationFee = parcela.MustRate("0.05") }},
		{"max installments", func(b *bundle) { b.offer.PaymentConfigurations[1].MaxInstallments = 6 }},
		{"price", func(b *bundle) { b.offer.AmountCents = 149000 }},
		{"a day later", func(b *bundle) { b.clock.Advance(24 * time.Hour) }},
		{"31 December", func(b *bundle) { b.clock.Set(time.Date(2026, time.December, 31, 23, 30, 0, 0, parcela.SaoPaulo)) }},
	}
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			warm := setup(t)
			before := choicesOf(t, warm)
			if again := choicesOf(t, warm); again != before {
				t.Fatal("the same page rendered twice differs")
			}
			c.change(warm)
			after := choicesOf(t, warm)
			if after == before {
				t.Fatalf("%s: the payment choices did not change", c.name)
			}
			cold := setup(t)
			c.change(cold)
			if fresh := choicesOf(t, cold); fresh != after {
				t.Fatalf("%s: kept groups rendered\n%s\nnot\n%s", c.name, after, fresh)
			}
		})
	}
}

// What a payer typed is rendered on every view and never kept.
func TestFragmentsKeepNothingTyped(t *testing.T) {
	t.Parallel()
	b := setup(t)
	page := b.get(t, b.offerPath())
	form := tokens(t, page.body, customer())
	form.Set("email", "maria@invalido")
	form.Set("intent", "buy")
	form.Set("option", testUpfront+":pix")
	res := b.post(t, b.offerPath(), form)
	if res.status != http.StatusUnprocessableEntity || !strings.Contains(res.body, "Maria da Silva") {
		t.Fatalf("the refused form: %d\n%s", res.status, res.body)
	}
	var kept []template.HTML
	b.pages.frags.kept.Range(func(_, v any) bool {
		kept = append(kept, v.(template.HTML))
		return true
	})
	b.pages.frags.groups.each(func(v template.HTML) { kept = append(kept, v) })
	b.pages.frags.cards.each(func(v template.HTML) { kept = append(kept, v) })
	if len(kept) == 0 {
		t.Fatal("nothing kept from the first view")
	}
	for _, typed := range []string{"Maria da Silva", "529.982.247-25", "maria@invalido", "98765-4321", "Avenida Paulista", "Apto 42"} {
		for _, f := range kept {
			if strings.Contains(string(f), typed) {
				t.Fatalf("a kept fragment holds %q:\n%s", typed, f)
			}
		}
	}
}

// Within a day a group shows the same dates and amounts, so an hour later
// it is the kept one that is shown.
func TestOptionGroupsKeptThroughTheDay(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := choicesOf(t, b)
	kept := b.pages.frags.groups.len()
	b.clock.Advance(time.Hour + 17*time.Second)
	if later := choicesOf(t, b); later != first {
		t.Fatalf("an hour later the choices differ:\n%s\n%s", first, later)
	}
	if n := b.pages.frags.groups.len(); n != kept {
		t.Fatalf("%d groups kept after the first view, %d an hour later", kept, n)
	}
}

// cardSelects are the checkout's card choices: the expiry month and year
// and the installments.
var cardSelects = regexp.MustCompile(`(?s)<select id="f-card_(?:month|year|installments)".*?</select>`)

func cardSelectsOf(t *testing.T, b *bundle, checkout string) string {
	t.Helper()
	res := b.get(t, checkout)
	selects := cardSelects.FindAllString(res.body, -1)
	if res.status != http.StatusOK || len(selects) != 3 {
		t.Fatalf("checkout: %d, %d card selects\n%s", res.status, len(selects), res.body)
	}
	return strings.Join(selects, "\n")
}

// forget drops every kept fragment, as a handler that never rendered one.
func (f *fragments) forget() {
	f.kept.Clear()
	f.groups = keptSet[[sha256.Size]byte]{}
	f.cards = keptSet[cardInstallments]{}
}

// The card's choices are kept, and shown only while what they show is
// unchanged: at every view, the choices kept from the views before render
// what choices rendered afresh render. The views cross a new year (the
// expiry years move), three amounts owed and two limits (the installments
// differ), and a form sent back with its choices.
func TestKeptCardChoicesFollowWhatTheyShow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.clock.Set(time.Date(2026, time.December, 31, 23, 30, 0, 0, parcela.SaoPaulo))
	upfront := b.buy(t, testUpfront+":credit_card")
	financed := b.buy(t, testFinanced+":credit_card")
	b.offer.AmountCents = 149000
	cheaper := b.buy(t, testUpfront+":credit_card")
	b.pages.frags.forget()
	view := func(checkout string) string {
		t.Helper()
		kept := cardSelectsOf(t, b, checkout)
		if b.pages.frags.cards.len() == 0 {
			t.Fatal("no card installments kept")
		}
		b.pages.frags.forget()
		if fresh := cardSelectsOf(t, b, checkout); fresh != kept {
			t.Fatalf("kept choices rendered\n%s\nnot\n%s", kept, fresh)
		}
		return kept
	}
	first := view(upfront)
	if again := view(upfront); again != first {
		t.Fatal("the same choices rendered twice differ")
	}
	down := view(financed)
	if down == first || strings.Count(first, "× ") < 11 || strings.Count(down, "<option value=\"") != 12+16+1+2 {
		t.Fatalf("upfront choices\n%s\ndown payment choices\n%s", first, down)
	}
	if view(upfront) != first {
		t.Fatal("the upfront choices changed back and forth")
	}
	if other := view(cheaper); other == first || !strings.Contains(other, "1× de R$\u00a01.490,00") {
		t.Fatalf("the choices of R$ 1.490,00 are\n%s", other)
	}
	cardSelectsOf(t, b, upfront)  // kept at 12 installments
	b.company.MaxInstallments = 6 // the same amount, fewer installments
	if fewer := view(upfront); !strings.Contains(fewer, `<option value="6">`) || strings.Contains(fewer, `<option value="7">`) {
		t.Fatalf("up to 6 installments:\n%s", fewer)
	}
	b.company.MaxInstallments = 12
	// A form sent back with its choices: the page shows them chosen.
	form := card("4111 1111 1111 1112", "12", 3) // an invalid number: shown again
	form.Set("card_month", "05")
	form.Set("card_year", "2031")
	sent := func() string {
		t.Helper()
		res := b.postCheckout(t, upfront, "card", form)
		if res.status != http.StatusUnprocessableEntity {
			t.Fatalf("status %d", res.status)
		}
		return strings.Join(cardSelects.FindAllString(res.body, -1), "\n")
	}
	kept := sent()
	b.pages.frags.forget()
	if fresh := sent(); fresh != kept {
		t.Fatalf("kept choices rendered\n%s\nnot\n%s", kept, fresh)
	}
	for _, want := range []string{`<option value="05" selected>`, `<option value="2031" selected>`, `<option value="3" selected>`} {
		if !strings.Contains(kept, want) {
			t.Errorf("the form sent back lacks %s", want)
		}
	}
	if view(upfront) != first {
		t.Fatal("after a form sent back, the choices of a view changed")
	}
	b.clock.Advance(time.Hour) // 1 January 2027 in São Paulo
	newYear := view(upfront)
	if !strings.Contains(first, `<option value="2026">`) || strings.Contains(newYear, `<option value="2026">`) ||
		!strings.Contains(newYear, `<option value="2042">`) {
		t.Fatalf("31 December\n%s\n1 January\n%s", first, newYear)
	}
}

// An expiry or a number of installments the payer sent that is none of
// the choices is shown with none selected, and not kept.
func TestCardChoicesKeepNothingTyped(t *testing.T) {
	t.Parallel()
	b := setup(t)
	checkout := b.buy(t, testUpfront+":credit_card")
	sent := []struct{ month, year, installments string }{
		{"13", "<b>2030</b>", "99"}, {"1", "02030", "-1"}, {"5 ", "+2030", "3.0"}, {"1e1", " 2030", "abc"}, {"00", "2030.0", "13"}, {"012", "20300", "0"},
	}
	for _, c := range sent {
		form := card("4111111111111111", "123", 1)
		form.Set("card_month", c.month)
		form.Set("card_year", c.year)
		form.Set("card_installments", c.installments)
		res := b.postCheckout(t, checkout, "card", form)
		selects := cardSelects.FindAllString(res.body, -1)
		if res.status != http.StatusUnprocessableEntity || len(selects) != 3 {
			t.Fatalf("%v: status %d, %d selects\n%s", c, res.status, len(selects), res.body)
		}
		for _, s := range selects {
			if strings.Contains(s, "selected") || strings.Contains(s, "<b>") {
				t.Errorf("%v: a choice is selected: %s", c, s)
			}
		}
	}
	b.pages.frags.kept.Range(func(k, _ any) bool {
		switch arg := k.(fragmentKey).arg.(type) {
		case string:
			if arg != "" && !slices.Contains(cardMonths, arg) && k.(fragmentKey).name == "card-month-options" {
				t.Errorf("the month sent is kept: %q", arg)
			}
		case cardYears:
			if arg.Chosen != "" {
				t.Errorf("a year sent is kept: %q", arg.Chosen)
			}
		}
		return true
	})
	b.pages.frags.cards.mu.Lock()
	defer b.pages.frags.cards.mu.Unlock()
	for k := range b.pages.frags.cards.m {
		if k.Chosen != 0 {
			t.Errorf("installments kept as chosen: %+v", k)
		}
	}
}

// A kept fragment's key shares no memory with what it was given: Go's
// form parsing gives each typed value (an empty one too) as a piece of the
// request's body, and a key holding one would keep the whole body, card
// number and CPF included, for the life of the process.
func TestFragmentKeysHoldNothingOfTheRequest(t *testing.T) {
	t.Parallel()
	f := setup(t).pages.frags
	f.forget()
	body := "card_name=&state=SP&card_month=05&card_year=2031&card_number=4111111111111111&cpf=529.982.247-25"
	piece := func(v string) string {
		i := strings.Index(body, v)
		return body[i : i+len(v)]
	}
	empty := body[len("card_name="):len("card_name=")]
	calls := []func() (template.HTML, error){
		func() (template.HTML, error) { return f.stateOptions(piece("SP")) },
		func() (template.HTML, error) { return f.cardMonthOptions(piece("05")) },
		func() (template.HTML, error) { return f.cardYearOptions(cardYears{First: 2026, Chosen: piece("2031")}) },
		func() (template.HTML, error) { return f.cardYearOptions(cardYears{First: 2026, Chosen: empty}) },
		func() (template.HTML, error) { return f.input(field("card_name", "Nome", empty, nil)) },
	}
	for _, call := range calls {
		if _, err := call(); err != nil {
			t.Fatal(err)
		}
	}
	kept := 0
	f.kept.Range(func(k, _ any) bool {
		kept++
		for _, s := range stringsIn(t, reflect.ValueOf(k.(fragmentKey).arg)) {
			if within(s, body) {
				t.Errorf("the key %+v holds a piece of the request", k)
			}
		}
		return true
	})
	if kept != len(calls) {
		t.Fatalf("%d fragments kept of %d", kept, len(calls))
	}
}

// stringsIn are the strings of v: a string, a number, or a struct of
// them; a key of any other kind is one this check cannot see into.
func stringsIn(t *testing.T, v reflect.Value) []string {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		return []string{v.String()}
	case reflect.Struct:
		var out []string
		for i := range v.NumField() {
			out = append(out, stringsIn(t, v.Field(i))...)
		}
		return out
	case reflect.Int, reflect.Int64, reflect.Bool:
		return nil
	}
	t.Fatalf("a key holds a %s: check what it points to", v.Kind())
	return nil
}

// within tells whether s's bytes lie in buf's memory. An empty piece of
// buf points at where it was cut, inside buf; an empty literal at none.
func within(s, buf string) bool {
	p, start := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(buf)))
	return p >= start && p < start+uintptr(len(buf))
}

// postParsed posts a form through the handler itself, given already parsed
// from body, a string the caller holds: as with the server's own parsing,
// each value that needs no decoding is a piece of body.
func (b *bundle) postParsed(t *testing.T, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	form, err := url.ParseQuery(body)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, path, nil)
	req.PostForm, req.Form = form, form
	req.Header.Set("User-Agent", "parcela-test")
	base, _ := url.Parse(b.server.URL)
	for _, c := range b.client.Jar.Cookies(base) {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	b.handler.ServeHTTP(rec, req)
	return rec
}

// What the pages keep after forms were posted (kept fragments, remembered
// nonces) lies in none of the forms' memory: a refused offer form, a
// purchase, and a refused card form, each sent back with what was typed.
func TestPagesKeepNothingOfPostedForms(t *testing.T) {
	t.Parallel()
	b := setup(t)
	page := b.get(t, b.offerPath())
	refused := buyForm(t, page.body, testFinanced+":boleto", url.Values{"email": {"maria@invalido"}, "complement": {""}}).Encode()
	if res := b.postParsed(t, b.offerPath(), refused); res.Code != http.StatusUnprocessableEntity {
		t.Fatalf("refused offer form: %d", res.Code)
	}
	page = b.get(t, b.offerPath())
	bought := buyForm(t, page.body, testUpfront+":credit_card", nil).Encode()
	res := b.postParsed(t, b.offerPath(), bought)
	if res.Code != http.StatusSeeOther {
		t.Fatalf("purchase: %d %s", res.Code, res.Body)
	}
	checkout := res.Header().Get("Location")
	u, _ := url.Parse(checkout)
	form := card("4111 1111 1111 1112", "12", 3)
	form.Set("card_month", "05")
	form.Set("card_year", "2031")
	form.Set("card_name", "")
	card := tokens(t, b.get(t, checkout).body, withCode(form, u)).Encode()
	if res := b.postParsed(t, u.Path+"/card", card); res.Code != http.StatusUnprocessableEntity {
		t.Fatalf("refused card: %d", res.Code)
	}
	bodies := []string{refused, bought, card}
	check := func(what string, v reflect.Value) {
		for _, s := range stringsIn(t, v) {
			for _, body := range bodies {
				if within(s, body) {
					t.Errorf("%s holds %q, a piece of a form", what, s)
				}
			}
		}
	}
	kept := 0
	b.pages.frags.kept.Range(func(k, _ any) bool {
		kept++
		check("a kept fragment's key", reflect.ValueOf(k.(fragmentKey).arg))
		return true
	})
	b.pages.submissions.mu.Lock()
	defer b.pages.submissions.mu.Unlock()
	for nonce := range b.pages.submissions.entries {
		check("a remembered nonce", reflect.ValueOf(nonce))
	}
	if kept < 10 || len(b.pages.submissions.entries) != 1 {
		t.Fatalf("%d fragments kept, %d nonces remembered", kept, len(b.pages.submissions.entries))
	}
}

// TestGroupKeyCoversEveryField changes each field an option group holds,
// one at a time, and checks that its key changes: a field the key left
// out would let a kept group be shown for another.
func TestGroupKeyCoversEveryField(t *testing.T) {
	t.Parallel()
	cet := parcela.MustRate("0.4")
	sample := func() optionGroup {
		return optionGroup{Config: &parcela.PaymentConfiguration{ID: "pc"}, Financed: true, Title: "t",
			Choices:      []choice{{Value: "v", Label: "l", Detail: "d", Checked: true}},
			Installments: []installmentChoice{{Count: 2, Label: "2×", Selected: true}}, Chosen: 2, DueDay: 10,
			Plan: &planView{Bills: []planBill{{Label: "Entrada", DueDate: "01/01/2027", AmountCents: 100, First: true}},
				TotalCents: 100, InterestCents: 1, FeeCents: 2, InterestRate: parcela.MustRate("0.0299"), CET: &cet},
			PlanURL: "/p", Digest: "dg", OptionError: "oe", InstallmentsError: "ie", DueDayError: "de"}
	}
	base := groupKey(sample())
	changed := 0
	// change calls try with a sample whose field at path (a chain of
	// field indexes and, for slices, their first element) was changed.
	change := func(v reflect.Value, path string, try func(string)) {
		switch {
		case v.Type() == reflect.TypeFor[parcela.Rate]():
			v.Set(reflect.ValueOf(parcela.MustRate("0.5")))
			try(path)
		case v.Type() == reflect.TypeFor[*parcela.PaymentConfiguration](): // shown by its id alone
			v.Elem().FieldByName("ID").SetString("other")
			try(path + ".ID")
		case v.Kind() == reflect.String:
			v.SetString(v.String() + "x")
			try(path)
		case v.Kind() == reflect.Bool:
			v.SetBool(!v.Bool())
			try(path)
		case v.Kind() == reflect.Int || v.Kind() == reflect.Int64:
			v.SetInt(v.Int() + 1)
			try(path)
		default:
			t.Fatalf("%s: a %s the test cannot change; teach groupKey and this test about it", path, v.Type())
		}
	}
	// walk visits every leaf of a fresh sample, changing it alone; get
	// finds the field in a sample.
	var walk func(get func(*optionGroup) reflect.Value, typ reflect.Type, path string)
	walk = func(get func(*optionGroup) reflect.Value, typ reflect.Type, path string) {
		switch {
		case typ.Kind() == reflect.Struct && typ != reflect.TypeFor[parcela.Rate]():
			for i := range typ.NumField() {
				walk(func(g *optionGroup) reflect.Value { return get(g).Field(i) }, typ.Field(i).Type, path+"."+typ.Field(i).Name)
			}
			return
		case typ.Kind() == reflect.Slice:
			// Its length, then its first element's fields.
			g := sample()
			s := get(&g)
			s.Set(reflect.Append(s, s.Index(0)))
			check(t, base, groupKey(g), path+" (length)", &changed)
			walk(func(g *optionGroup) reflect.Value { return get(g).Index(0) }, typ.Elem(), path+"[0]")
			return
		case typ.Kind() == reflect.Pointer && typ != reflect.TypeFor[*parcela.PaymentConfiguration]():
			g := sample()
			get(&g).Set(reflect.Zero(typ))
			check(t, base, groupKey(g), path+" (nil)", &changed)
			walk(func(g *optionGroup) reflect.Value { return get(g).Elem() }, typ.Elem(), path)
			return
		}
		g := sample()
		change(get(&g), path, func(p string) { check(t, base, groupKey(g), p, &changed) })
	}
	walk(func(g *optionGroup) reflect.Value { return reflect.ValueOf(g).Elem() }, reflect.TypeFor[optionGroup](), "group")
	if changed < 25 {
		t.Errorf("only %d fields changed: the walk missed some", changed)
	}
}

func check(t *testing.T, base, got [sha256.Size]byte, path string, changed *int) {
	t.Helper()
	*changed++
	if got == base {
		t.Errorf("changing %s left the option group's key as it was", path)
	}
}
