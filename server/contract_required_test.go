package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"parcela/api"
	"slices"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// Every answer the tests check against the document (bundle.send) is also
// walked beside its schema, counting, for each object schema, how many
// objects it described and in how many each optional property was
// present. A property present in every object of its schema that the
// tests received is one a client can rely on, and the document must say
// so (required), or the generated client makes it a pointer and its users
// check for an absence that never comes.
var (
	presenceMu sync.Mutex
	presence   = map[string]*seenObjects{} // by schema name
)

type seenObjects struct {
	count    int
	optional map[string]int // property not required → objects that held it
}

// optionalByDesign are properties some answers leave out, though no test
// of the package receives one without them.
var optionalByDesign = map[string]string{}

// neverSentByDesign are properties the document declares that no answer
// of the package's tests holds, with why.
var neverSentByDesign = map[string]string{}

// observePresence walks a JSON answer beside the schema of its operation.
func observePresence(req *http.Request, status int, header http.Header, body []byte) {
	if contract == nil || !strings.Contains(header.Get("Content-Type"), "json") {
		return
	}
	s := contract.ResponseSchema(req, status, header.Get("Content-Type"))
	if s == nil {
		return
	}
	var v any
	if json.Unmarshal(body, &v) != nil {
		return
	}
	names := schemaNames()
	presenceMu.Lock()
	defer presenceMu.Unlock()
	walkPresence(s, v, names, "answer")
}

var (
	namesOnce sync.Once
	names     map[*openapi3.Schema]string
)

// schemaNames names the document's component schemas by their value.
func schemaNames() map[*openapi3.Schema]string {
	namesOnce.Do(func() {
		names = map[*openapi3.Schema]string{}
		for name, ref := range contract.Doc().Components.Schemas {
			names[ref.Value] = name
		}
	})
	return names
}

func walkPresence(s *openapi3.Schema, v any, names map[*openapi3.Schema]string, at string) {
	if s == nil {
		return
	}
	if n, ok := names[s]; ok {
		at = n
	}
	switch v := v.(type) {
	case map[string]any:
		props, required := api.ObjectProperties(s, v)
		if len(props) == 0 {
			return // free-form
		}
		seen := presence[at]
		if seen == nil {
			seen = &seenObjects{optional: map[string]int{}}
			presence[at] = seen
		}
		seen.count++
		for name := range props {
			if required[name] {
				continue
			}
			if _, ok := v[name]; ok {
				seen.optional[name]++
			} else if _, ok := seen.optional[name]; !ok {
				seen.optional[name] = 0
			}
		}
		for k, child := range v {
			if p, ok := props[k]; ok {
				walkPresence(p, child, names, at+"."+k)
			}
		}
	case []any:
		items := s.Items
		for _, sub := range s.AllOf {
			if items == nil && sub.Value.Items != nil {
				items = sub.Value.Items
			}
		}
		if items == nil {
			return
		}
		for _, child := range v {
			walkPresence(items.Value, child, names, at+"[]")
		}
	}
}

// alwaysPresentOptional lists the properties the document leaves optional
// that every object of their schema the tests received held.
func alwaysPresentOptional() []string {
	presenceMu.Lock()
	defer presenceMu.Unlock()
	var found []string
	for name, seen := range presence {
		for prop, n := range seen.optional {
			key := name + "." + prop
			if n == seen.count && optionalByDesign[key] == "" {
				found = append(found, fmt.Sprintf("%s (in all %d)", key, n))
			}
		}
	}
	slices.Sort(found)
	return found
}

// neverPresent lists the optional properties the document declares on an
// object schema the tests received, that none of its objects held: a
// property the document promises and no answer carries (a billing
// summary's cost disclosure was declared, and never sent).
func neverPresent() []string {
	presenceMu.Lock()
	defer presenceMu.Unlock()
	var found []string
	for name, seen := range presence {
		for prop, n := range seen.optional {
			if key := name + "." + prop; n == 0 && neverSentByDesign[key] == "" {
				found = append(found, fmt.Sprintf("%s (in none of %d)", key, seen.count))
			}
		}
	}
	slices.Sort(found)
	return found
}
