package jsonbody

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"parcela"
)

// checkKeys walks the (already decoded, so well-formed) body beside the
// type of v and refuses what encoding/json would have let through
// silently: a key twice in one object, and a key that names a field of the
// target struct in other letter case, and a timestamp RFC 3339 does not
// write (a comma before its fraction).
func checkKeys(body []byte, v any) error {
	return walker{refused: timestampRefusal}.walk(body, reflect.TypeOf(v))
}

// timestampRefusal refuses what encoding/json took as a timestamp and RFC
// 3339 does not (Timestamp): a value of another type that decodes itself
// has had its say.
func timestampRefusal(t reflect.Type, raw []byte, at *fieldPath) error {
	if t != timeType {
		return nil
	}
	return refusal(t, raw, at)
}

// walker reads a body beside the Go type it decodes into, naming each
// value's path as field errors do ("payment_configurations[1].interest_rate").
type walker struct {
	dec *json.Decoder
	// refused, when set, is asked about every value of a type that decodes
	// itself (refusedValue): its error, naming the path, ends the walk.
	refused func(t reflect.Type, raw []byte, path *fieldPath) error
	// mistyped, when set, is asked about every value's first token beside
	// the type it decodes into (mistypedValue): its error ends the walk.
	mistyped func(t reflect.Type, tok json.Token, path *fieldPath) error
}

// fieldPath is where a value sits in the body, spelt out (String) only
// for an error. Each value points to its parent's path: a value's path
// written out at every level costs the sum of the paths' lengths, which
// for a body nested 10,000 deep under 100-byte keys (1 MiB, within the
// limit) was gigabytes held at once, and the process ran out of memory.
type fieldPath struct {
	parent *fieldPath
	key    string
	index  int
	elem   bool // an array's element (index), not an object's member (key)
	// empty: the path is written "" (the body itself, or members keyed ""
	// all the way down, as concatenating their keys spelt it).
	empty bool
}

func (p *fieldPath) member(key string) *fieldPath {
	return &fieldPath{parent: p, key: key, empty: (p == nil || p.empty) && key == ""}
}

func (p *fieldPath) element(i int) *fieldPath {
	return &fieldPath{parent: p, index: i, elem: true}
}

// isEmpty reports whether the path is written "".
func (p *fieldPath) isEmpty() bool { return p == nil || p.empty }

// String writes the path as field errors name it
// ("payment_configurations[1].interest_rate").
func (p *fieldPath) String() string {
	var nodes []*fieldPath
	for n := p; n != nil; n = n.parent {
		nodes = append(nodes, n)
	}
	var b strings.Builder
	for i := len(nodes) - 1; i >= 0; i-- {
		switch n := nodes[i]; {
		case n.elem:
			b.WriteString("[" + strconv.Itoa(n.index) + "]")
		case b.Len() > 0:
			b.WriteString("." + n.key)
		default:
			b.WriteString(n.key)
		}
	}
	return b.String()
}

// walk reads body, one JSON value, beside t with w's hooks.
func (w walker) walk(body []byte, t reflect.Type) error {
	w.dec = json.NewDecoder(bytes.NewReader(body))
	w.dec.UseNumber()
	return w.value(t, nil)
}

// value reads one value whose Go type is t (nil when its keys are free:
// unknown fields, maps of anything, interfaces, custom unmarshalers).
func (w walker) value(t reflect.Type, path *fieldPath) error {
	if w.refused != nil {
		if self, ok := decodesItself(t); ok {
			var raw json.RawMessage
			if err := w.dec.Decode(&raw); err != nil {
				return malformed(err)
			}
			if pointer := self != t; pointer && string(raw) == "null" {
				return nil // encoding/json sets nil without asking the type
			}
			return w.refused(self, raw, path)
		}
	}
	tok, err := w.dec.Token()
	if err != nil {
		return malformed(err)
	}
	t = target(t)
	if w.mistyped != nil {
		if err := w.mistyped(t, tok, path); err != nil {
			return err
		}
	}
	switch tok {
	case json.Delim('{'):
		return w.object(t, path)
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; w.dec.More(); i++ {
			if err := w.value(elem, path.element(i)); err != nil {
				return err
			}
		}
		_, err := w.dec.Token() // ]
		return err
	}
	return nil
}

func (w walker) object(t reflect.Type, path *fieldPath) error {
	var fields map[string]reflect.Type
	var elem reflect.Type
	if t != nil {
		switch t.Kind() {
		case reflect.Struct:
			fields = fieldsOf(t)
		case reflect.Map:
			elem = t.Elem()
		}
	}
	seen := map[string]bool{}
	for w.dec.More() {
		tok, err := w.dec.Token()
		if err != nil {
			return malformed(err)
		}
		key, _ := tok.(string)
		at := path.member(key)
		if seen[key] {
			at := at.String()
			return &parcela.Error{Code: parcela.EMALFORMED, Message: "duplicate key " + strconv.Quote(at) + " in the body",
				Fields: []parcela.FieldError{{Field: at, Code: "not_allowed", Message: "appears more than once"}}}
		}
		seen[key] = true
		next := elem
		if fields != nil {
			ft, known := fields[key]
			if !known {
				if name, ok := foldedName(fields, key); ok {
					at := at.String()
					msg := "differs only in case from the field " + strconv.Quote(name) + "; field names are case-sensitive"
					return &parcela.Error{Code: parcela.EMALFORMED, Message: strconv.Quote(at) + " " + msg,
						Fields: []parcela.FieldError{{Field: at, Code: "not_allowed", Message: msg}}}
				}
			}
			next = ft // nil for an unknown field: ignored, as encoding/json does
		}
		if err := w.value(next, at); err != nil {
			return err
		}
	}
	_, err := w.dec.Token() // }
	return err
}

func foldedName(fields map[string]reflect.Type, key string) (string, bool) {
	for name := range fields {
		if strings.EqualFold(name, key) {
			return name, true
		}
	}
	return "", false
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// target is the type whose keys constrain a value of type t: pointers are
// followed; a type that decodes itself (json.RawMessage, time.Time,
// parcela.Rate) and an interface take any keys.
func target(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return nil
	}
	return t
}

// decodesItself is the type t points to (t itself if no pointer) when
// that type decodes its own JSON (json.Unmarshaler).
func decodesItself(t reflect.Type) (reflect.Type, bool) {
	self := t
	for self != nil && self.Kind() == reflect.Pointer {
		self = self.Elem()
	}
	return self, self != nil && self.Kind() != reflect.Interface && reflect.PointerTo(self).Implements(jsonUnmarshaler)
}

var fieldCache sync.Map // reflect.Type → map[string]reflect.Type

// fieldsOf maps the JSON names of a struct's fields to their types, by
// encoding/json's rules: exported fields, named by their tag or their Go
// name, "-" skipped, the fields of untagged embedded structs promoted
// unless a shallower field has the name.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	var embedded []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				embedded = append(embedded, ft)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = ft
	}
	for _, e := range embedded {
		for name, ft := range fieldsOf(e) {
			if _, shadowed := m[name]; !shadowed {
				m[name] = ft
			}
		}
	}
	fieldCache.Store(t, m)
	return m
}
