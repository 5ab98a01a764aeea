package web

import (
	"crypto/sha256"
	"html/template"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

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
// expiry years move) and three amounts owed (the installments differ).
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
	b.clock.Advance(time.Hour) // 1 January 2027 in São Paulo
	newYear := view(upfront)
	if !strings.Contains(first, `<option value="2026">`) || strings.Contains(newYear, `<option value="2026">`) ||
		!strings.Contains(newYear, `<option value="2042">`) {
		t.Fatalf("31 December\n%s\n1 January\n%s", first, newYear)
	}
}

// An expiry the payer sent that is none of the choices is shown with none
// selected, and not kept.
func TestCardChoicesKeepNothingTyped(t *testing.T) {
	t.Parallel()
	b := setup(t)
	checkout := b.buy(t, testUpfront+":credit_card")
	form := card("4111111111111111", "123", 99)
	form.Set("card_month", "13")
	form.Set("card_year", "<b>2030</b>")
	res := b.postCheckout(t, checkout, "card", form)
	selects := cardSelects.FindAllString(res.body, -1)
	if res.status != http.StatusUnprocessableEntity || len(selects) != 3 {
		t.Fatalf("status %d, %d selects\n%s", res.status, len(selects), res.body)
	}
	for _, s := range selects {
		if strings.Contains(s, "selected") || strings.Contains(s, "<b>") {
			t.Errorf("a choice is selected: %s", s)
		}
	}
	b.pages.frags.kept.Range(func(k, _ any) bool {
		switch arg := k.(fragmentKey).arg.(type) {
		case string:
			if arg == "13" {
				t.Error("the month sent is kept")
			}
		case cardYears:
			if arg.Chosen != "" && arg.Chosen != "2030" {
				t.Errorf("the year sent is kept: %q", arg.Chosen)
			}
		}
		return true
	})
}
