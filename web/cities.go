package web

import (
	"encoding/json"
	"net/http"
	"sort"
	"sync"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"

	"parcela"
)

// places is the IBGE list by state, for the address form.
type places struct {
	states   []parcela.State
	acronyms []string                  // the states', in the same order
	cities   map[string][]parcela.City // by state acronym, by name
	byCode   map[string]parcela.City
}

var loadPlaces = sync.OnceValues(func() (*places, error) {
	all, err := parcela.Municipalities()
	if err != nil {
		return nil, err
	}
	p := &places{cities: map[string][]parcela.City{}, byCode: map[string]parcela.City{}}
	for _, c := range all {
		if _, ok := p.cities[c.State.Acronym]; !ok {
			p.states = append(p.states, c.State)
		}
		p.cities[c.State.Acronym] = append(p.cities[c.State.Acronym], c)
		p.byCode[c.IBGECode] = c
	}
	c := collate.New(language.BrazilianPortuguese)
	sort.Slice(p.states, func(i, j int) bool { return c.CompareString(p.states[i].Name, p.states[j].Name) < 0 })
	for _, s := range p.states {
		p.acronyms = append(p.acronyms, s.Acronym)
	}
	return p, nil
})

// cityIn tells whether the IBGE code names a city of the state.
func (p *places) cityIn(code, state string) bool {
	c, ok := p.byCode[code]
	return ok && c.State.Acronym == state
}

// handleCities answers a state's cities for the script that fills the city
// list in place: [{"code": "3550308", "name": "São Paulo"}, …].
func (h *Handler) handleCities(w http.ResponseWriter, r *http.Request) {
	p, err := loadPlaces()
	if err != nil {
		h.fail(w, r, err)
		return
	}
	cities, ok := p.cities[r.PathValue("state")]
	if !ok {
		h.renderError(w, r, http.StatusNotFound)
		return
	}
	type city struct {
		Code string `json:"code"`
		Name string `json:"name"`
	}
	out := make([]city, len(cities))
	for i, c := range cities {
		out[i] = city{c.IBGECode, c.Name}
	}
	body, err := json.Marshal(out)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=86400")
	w.Write(body)
}
