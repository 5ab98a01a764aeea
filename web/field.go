package web

import (
	"strconv"
	"strings"
)

// inputField is one labelled input of a form, with its error next to it.
type inputField struct {
	Name, Label, Value, Error                    string
	Type, Autocomplete, Inputmode, Hint, Pattern string
	Maxlength                                    int
	Optional                                     bool
}

// field builds an input for a template: its name, label, typed value, the
// form's errors, and options as "key=value" (type, autocomplete,
// inputmode, hint, maxlength, pattern, optional).
func field(name, label, value string, errs map[string]string, opts ...string) inputField {
	f := inputField{Name: name, Label: label, Value: value, Error: errs[name], Type: "text"}
	for _, o := range opts {
		k, v, _ := strings.Cut(o, "=")
		switch k {
		case "type":
			f.Type = v
		case "autocomplete":
			f.Autocomplete = v
		case "inputmode":
			f.Inputmode = v
		case "hint":
			f.Hint = v
		case "pattern":
			f.Pattern = v
		case "maxlength":
			f.Maxlength, _ = strconv.Atoi(v)
		case "optional":
			f.Optional = true
		}
	}
	return f
}
