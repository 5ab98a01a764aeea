package parcela

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"fmt"
	"sort"
	"strconv"
	"sync"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"
)

// The IBGE table the store seeds its cities from, read here too so that the
// payer's pages list the same municipalities without a query.
//
//go:embed sqldb/data/ibge-municipalities.csv
var municipalitiesCSV []byte

// Municipalities returns every IBGE municipality with its state (without
// store ids), sorted by state acronym and then name. The slice is shared:
// callers must not modify it.
func Municipalities() ([]City, error) { return loadMunicipalities() }

var loadMunicipalities = sync.OnceValues(func() ([]City, error) {
	rows, err := csv.NewReader(bytes.NewReader(municipalitiesCSV)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("ibge csv: %w", err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("ibge csv: empty")
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	for _, name := range []string{"ibge_code", "name", "state_acronym", "state_name", "state_ibge_code"} {
		if _, ok := col[name]; !ok {
			return nil, fmt.Errorf("ibge csv: no %s column", name)
		}
	}
	out := make([]City, 0, len(rows)-1)
	for i, r := range rows[1:] {
		code, err := strconv.Atoi(r[col["state_ibge_code"]])
		if err != nil {
			return nil, fmt.Errorf("ibge csv line %d: state code %q", i+2, r[col["state_ibge_code"]])
		}
		out = append(out, City{IBGECode: r[col["ibge_code"]], Name: r[col["name"]],
			State: State{IBGECode: code, Name: r[col["state_name"]], Acronym: r[col["state_acronym"]]}})
	}
	// Portuguese order: "Água Branca" among the A's, "Campos do Jordão"
	// before "Campos Novos Paulista".
	names := collate.New(language.BrazilianPortuguese)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].State.Acronym != out[j].State.Acronym {
			return out[i].State.Acronym < out[j].State.Acronym
		}
		return names.CompareString(out[i].Name, out[j].Name) < 0
	})
	return out, nil
})
