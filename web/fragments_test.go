package web

import (
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
	b.pages.frags.mu.Lock()
	for _, v := range b.pages.frags.groups {
		kept = append(kept, v)
	}
	b.pages.frags.mu.Unlock()
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
	b.pages.frags.mu.Lock()
	kept := len(b.pages.frags.groups)
	b.pages.frags.mu.Unlock()
	b.clock.Advance(time.Hour + 17*time.Second)
	if later := choicesOf(t, b); later != first {
		t.Fatalf("an hour later the choices differ:\n%s\n%s", first, later)
	}
	b.pages.frags.mu.Lock()
	defer b.pages.frags.mu.Unlock()
	if len(b.pages.frags.groups) != kept {
		t.Fatalf("%d groups kept after the first view, %d an hour later", kept, len(b.pages.frags.groups))
	}
}
