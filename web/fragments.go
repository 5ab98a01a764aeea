package web

import (
	"crypto/sha256"
	"encoding/binary"
	"html/template"
	"slices"
	"strings"
	"sync"

	"parcela"
)

// fragments renders the parts of the pages that are the same on most
// views (a blank form field, the due-day, state and card expiry choices)
// once, and keeps them: html/template calls its escapers through reflection
// for every action, and these parts are most of a page's actions. A
// fragment is a pure function of its key (the field's definition, the
// chosen day or state), so a kept one is never stale.
//
// A key holds nothing a payer typed, which bounds the keys and keeps no
// personal data in memory: only the templates' own literals, the choices'
// own strings and numbers. Not even a typed value equal to a choice: Go's
// form parsing gives a value that needs no decoding (an empty one too) as
// a piece of the request's body, so a key holding it would keep the whole
// body (the card number, or the CPF) for the life of the process. The
// option groups and the card installments depend on amounts, so they are
// kept in bounded sets.
type fragments struct {
	t    *template.Template // parts.html, with the pages' functions
	kept sync.Map           // fragmentKey → template.HTML

	groups keptSet[[sha256.Size]byte] // by groupKey
	cards  keptSet[cardInstallments]
}

// maxKept bounds each kept set: one option group per offer, plan chosen
// and day of viewing is a few hundred a day for a busy offer; the card
// installments, up to 13 per amount owed and most installments (one per
// installment chosen, and none).
const maxKept = 2048

// keptSet keeps rendered fragments by key, at most maxKept: when full it
// starts again empty, which costs a render per key and no more.
type keptSet[K comparable] struct {
	mu sync.Mutex
	m  map[K]template.HTML
}

func (s *keptSet[K]) get(k K) (template.HTML, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out, ok := s.m[k]
	return out, ok
}

func (s *keptSet[K]) put(k K, out template.HTML) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil || len(s.m) >= maxKept {
		s.m = make(map[K]template.HTML)
	}
	s.m[k] = out
}

// renderKept executes the template name with arg, kept in s by k.
func renderKept[K comparable](f *fragments, s *keptSet[K], k K, name string, arg any) (template.HTML, error) {
	if out, ok := s.get(k); ok {
		return out, nil
	}
	out, err := f.render(name, arg, false)
	if err != nil {
		return "", err
	}
	s.put(k, out)
	return out, nil
}

// each calls fn with every fragment kept, under the set's lock.
func (s *keptSet[K]) each(fn func(template.HTML)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, out := range s.m {
		fn(out)
	}
}

func (s *keptSet[K]) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

type fragmentKey struct {
	name string
	arg  any // comparable
}

// render executes the template name with arg, kept when keep.
func (f *fragments) render(name string, arg any, keep bool) (template.HTML, error) {
	return f.renderAs(fragmentKey{name, arg}, name, arg, keep)
}

// renderAs is render with the key the fragment is kept by, when arg is
// not itself one.
func (f *fragments) renderAs(k fragmentKey, name string, arg any, keep bool) (template.HTML, error) {
	if keep {
		if v, ok := f.kept.Load(k); ok {
			return v.(template.HTML), nil
		}
	}
	var b strings.Builder
	if err := f.t.ExecuteTemplate(&b, name, arg); err != nil {
		return "", err
	}
	// The template's output, escaped for the HTML text it is inserted in.
	out := template.HTML(b.String())
	if keep {
		f.kept.Store(k, out)
	}
	return out, nil
}

// input is a form field; a blank one (no value, no error) is kept, by
// its definition alone (see fragments: even an empty typed value is a
// piece of the request).
func (f *fragments) input(field inputField) (template.HTML, error) {
	if field.Value != "" || field.Error != "" {
		return f.render("input", field, false)
	}
	field.Value, field.Error = "", ""
	return f.render("input", field, true)
}

// own returns the choice equal to typed as the choices' own string, and
// whether there is one ("" is none chosen): the value to key a fragment
// by (see fragments).
func own(typed string, choices []string) (string, bool) {
	if typed == "" {
		return "", true
	}
	if i := slices.Index(choices, typed); i >= 0 {
		return choices[i], true
	}
	return typed, false
}

// dueDayOptions are the <option>s of the due day, day chosen.
func (f *fragments) dueDayOptions(day int) (template.HTML, error) {
	return f.render("due-day-options", day, day >= 1 && day <= 31)
}

// stateOptions are the <option>s of the state, the one chosen selected.
func (f *fragments) stateOptions(chosen string) (template.HTML, error) {
	p, err := loadPlaces()
	if err != nil {
		return "", err
	}
	chosen, known := own(chosen, p.acronyms)
	return f.render("state-options", chosen, known)
}

// states are the states in the order of their names.
func states() ([]parcela.State, error) {
	p, err := loadPlaces()
	if err != nil {
		return nil, err
	}
	return p.states, nil
}

// dueDays are the days an installment may fall due.
func dueDays() []int {
	days := make([]int, 31)
	for i := range days {
		days[i] = i + 1
	}
	return days
}

// optionGroup is a payment configuration's choices and plan on the offer
// page. It is kept by a digest of everything the template reads of it, so
// a group is rendered again exactly when something shown changes; its
// keys are plans and choices, never a payer's data.
func (f *fragments) optionGroup(g optionGroup) (template.HTML, error) {
	return renderKept(f, &f.groups, groupKey(g), "option-group", g)
}

// groupKey digests the fields of g the "option-group" template reads: all
// of them, with the configuration by its id (the only part of it shown),
// each written with its length, so two groups share a key only when every
// field is equal. Written out field by field: encoding/json took a tenth
// of the offer page's CPU. TestGroupKeyCoversEveryField changes each field
// in turn and fails if the key does not change.
func groupKey(g optionGroup) [sha256.Size]byte {
	k := keyWriter{b: make([]byte, 0, 2048)} // most groups' fields fit
	k.str(g.Config.ID)
	k.bool(g.Financed)
	k.str(g.Title)
	k.int(int64(len(g.Choices)))
	for _, c := range g.Choices {
		k.str(c.Value)
		k.str(c.Label)
		k.str(c.Detail)
		k.bool(c.Checked)
	}
	k.int(int64(len(g.Installments)))
	for _, c := range g.Installments {
		k.int(int64(c.Count))
		k.str(c.Label)
		k.bool(c.Selected)
	}
	k.int(int64(g.Chosen))
	k.int(int64(g.DueDay))
	k.bool(g.Plan != nil)
	if p := g.Plan; p != nil {
		k.int(int64(len(p.Bills)))
		for _, b := range p.Bills {
			k.str(b.Label)
			k.str(b.DueDate)
			k.int(b.AmountCents)
			k.bool(b.First)
		}
		k.int(p.TotalCents)
		k.int(p.InterestCents)
		k.int(p.FeeCents)
		k.str(p.InterestRate.String())
		k.bool(p.CET != nil)
		if p.CET != nil {
			k.str(p.CET.String())
		}
	}
	k.str(g.PlanURL)
	k.str(g.Digest)
	k.str(g.OptionError)
	k.str(g.InstallmentsError)
	k.str(g.DueDayError)
	return sha256.Sum256(k.b)
}

// keyWriter writes a key's fields unambiguously: a number in 8 bytes, a
// string after its length.
type keyWriter struct{ b []byte }

func (k *keyWriter) int(n int64) { k.b = binary.BigEndian.AppendUint64(k.b, uint64(n)) }

func (k *keyWriter) str(s string) {
	k.int(int64(len(s)))
	k.b = append(k.b, s...)
}

func (k *keyWriter) bool(v bool) {
	if v {
		k.b = append(k.b, 1)
	} else {
		k.b = append(k.b, 0)
	}
}

// cardMonthOptions are the <option>s of the card's expiry month, the one
// chosen selected; kept unless what was sent is none of them.
func (f *fragments) cardMonthOptions(chosen string) (template.HTML, error) {
	chosen, known := own(chosen, cardMonths)
	return f.render("card-month-options", chosen, known)
}

// cardYearOptions are the <option>s of the card's expiry year; kept unless
// what was sent is none of them.
func (f *fragments) cardYearOptions(y cardYears) (template.HTML, error) {
	if y.Chosen == "" {
		return f.render("card-year-options", cardYears{First: y.First}, true)
	}
	var known bool
	y.Chosen, known = own(y.Chosen, y.Years())
	return f.render("card-year-options", y, known)
}

// cardInstallmentOptions are the <option>s of the card installments. Its
// key is numbers only (newCardForm makes a choice out of range none).
func (f *fragments) cardInstallmentOptions(c cardInstallments) (template.HTML, error) {
	return renderKept(f, &f.cards, c, "card-installment-options", c)
}

// customerFields are the offer page's sections on the customer and the
// address; while nothing is typed and nothing is wrong (the page's first
// view) they are the same on every view, and kept.
func (f *fragments) customerFields(p offerPage) (template.HTML, error) {
	form := p.Form
	blank := len(p.Errors) == 0 && len(p.Cities) == 0 && form.Name == "" && form.CPF == "" && form.Birthdate == "" &&
		form.Email == "" && form.Phone == "" && form.CEP == "" && form.Street == "" && form.Number == "" &&
		form.Complement == "" && form.Neighborhood == "" && form.State == "" && form.City == ""
	return f.renderAs(fragmentKey{"customer-fields", "blank"}, "customer-fields", p, blank)
}
