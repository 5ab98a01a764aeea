package docsite_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"parcela"
	"parcela/docsite"
	"parcela/server"
)

// codeConstants reads the problem codes declared in the domain's error.go:
// every string constant named E….
func codeConstants(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", "error.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && strings.HasPrefix(name.Name, "E") {
					consts[name.Name], _ = strconv.Unquote(lit.Value)
				}
			}
		}
	}
	if len(consts) < 10 {
		t.Fatalf("read only %d codes from error.go", len(consts))
	}
	return consts
}

// usedCodes scans the module's Go code (tests and the generated client
// aside) for the codes it can put in a problem: problem codes given as
// literals to Errorf or Error{Code: …}, and field codes given to
// Validation.Add, fieldErr or FieldError{Code: …}.
func usedCodes(t *testing.T) (problems, fields map[string]string) {
	t.Helper()
	problems, fields = map[string]string{}, map[string]string{}
	literal := func(e ast.Expr) (string, bool) {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(lit.Value)
		return s, err == nil
	}
	typeName := func(e ast.Expr) string {
		switch x := e.(type) {
		case *ast.Ident:
			return x.Name
		case *ast.SelectorExpr:
			return x.Sel.Name
		}
		return ""
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "client" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				name := typeName(n.Fun)
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && name == "Errorf" {
					if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "parcela" {
						return true // fmt.Errorf
					}
				}
				switch {
				case name == "Errorf" && len(n.Args) > 0:
					if s, ok := literal(n.Args[0]); ok {
						problems[s] = fset.Position(n.Pos()).String()
					}
				case (name == "Add" || name == "fieldErr") && len(n.Args) == 3:
					if s, ok := literal(n.Args[1]); ok {
						fields[s] = fset.Position(n.Pos()).String()
					}
				}
			case *ast.CompositeLit:
				kind := typeName(n.Type)
				if arr, ok := n.Type.(*ast.ArrayType); ok && typeName(arr.Elt) == "FieldError" {
					// []FieldError{{Code: …}}: the elements' type is elided.
					for _, el := range n.Elts {
						if inner, ok := el.(*ast.CompositeLit); ok && inner.Type == nil {
							inner.Type = arr.Elt
						}
					}
				}
				if kind != "Error" && kind != "FieldError" {
					return true
				}
				for _, el := range n.Elts {
					kv, ok := el.(*ast.KeyValueExpr)
					if !ok || typeName(kv.Key) != "Code" {
						continue
					}
					if s, ok := literal(kv.Value); ok {
						if kind == "Error" {
							problems[s] = fset.Position(kv.Pos()).String()
						} else {
							fields[s] = fset.Position(kv.Pos()).String()
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(fields) < 5 {
		t.Fatalf("found only %d field codes: the scan is broken", len(fields))
	}
	return problems, fields
}

// Every code the server can emit has an entry, with the status the server
// answers it with, and every entry is a code the server can emit.
func TestErrorCatalogueIsComplete(t *testing.T) {
	t.Parallel()
	entries := map[string]docsite.Problem{}
	for _, p := range docsite.Problems {
		entries[p.Code] = p
		if p.Title == "" || p.Cause == "" || p.Fix == "" {
			t.Errorf("%s: title, cause and fix are all needed", p.Code)
		}
	}
	consts := codeConstants(t)
	codes := map[string]bool{}
	for name, code := range consts {
		codes[code] = true
		p, ok := entries[code]
		if !ok {
			t.Errorf("%s (%q) has no entry in the error catalogue", name, code)
			continue
		}
		if status := server.StatusOf(&parcela.Error{Code: code}); p.Status != status {
			t.Errorf("%s: the catalogue says %d, the server answers %d", code, p.Status, status)
		}
	}
	problems, fields := usedCodes(t)
	for code, at := range problems {
		if _, ok := entries[code]; !ok {
			t.Errorf("problem code %q (%s) has no entry in the error catalogue", code, at)
		}
		codes[code] = true
	}
	for code := range entries {
		if !codes[code] {
			t.Errorf("the catalogue documents %q, which the server never emits", code)
		}
	}
	documented := map[string]bool{}
	for _, f := range docsite.FieldCodes {
		documented[f.Code] = true
	}
	for code, at := range fields {
		if !documented[code] {
			t.Errorf("field code %q (%s) is not in the catalogue's field codes", code, at)
		}
		delete(documented, code)
	}
	for code := range documented {
		t.Errorf("the catalogue documents field code %q, which nothing uses", code)
	}
}

// Each problem's type, {public address}/docs/errors#{code}, lands on its
// entry.
func TestErrorCatalogueAnchors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	page := body(t, b.get("/docs/errors"))
	for _, p := range docsite.Problems {
		if !strings.Contains(page, `id="`+p.Code+`"`) {
			t.Errorf("no anchor %s", p.Code)
		}
	}
	for _, f := range docsite.FieldCodes {
		if !strings.Contains(page, `id="field-`+f.Code+`"`) {
			t.Errorf("no anchor field-%s", f.Code)
		}
	}
	statuses := make([]int, 0, len(docsite.Problems))
	for _, p := range docsite.Problems {
		statuses = append(statuses, p.Status)
	}
	if !slices.IsSorted(statuses) {
		t.Error("the catalogue is not in status order")
	}
}

// not_found's fix said no query filter answers 404, and the delivery log's
// webhook_id does (an unknown webhook is a 404, as the reference says):
// an integrator told to expect an empty page got a problem.
func TestCatalogueNotFoundNamesTheFilterThatAnswers404(t *testing.T) {
	t.Parallel()
	for _, p := range docsite.Problems {
		if p.Code != "not_found" {
			continue
		}
		if strings.Contains(p.Fix, "Query filters never answer 404") || !strings.Contains(p.Fix, "`webhook_id`") {
			t.Errorf("not_found's fix does not say the delivery log's webhook_id answers 404: %s", p.Fix)
		}
		return
	}
	t.Fatal("no not_found entry")
}

// conflict is answered when concurrent requests kept colliding and the
// request gave up having done nothing (its message says "retry"; the Go
// client retries it, client/transport.go). The catalogue told clients not
// to repeat it, with an example that answers invalid_state (two charges of
// one order at once), and the production guide's list of what to retry
// left it out.
func TestCatalogueAndGuideSayConflictIsRetried(t *testing.T) {
	t.Parallel()
	for _, p := range docsite.Problems {
		if p.Code == "conflict" && (!strings.HasPrefix(p.Fix, "Retry") || strings.Contains(p.Fix, "do not")) {
			t.Errorf("conflict's fix does not say to retry: %s", p.Fix)
		}
	}
	guide, err := os.ReadFile(filepath.Join("guides", "production.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, retries, _ := strings.Cut(string(guide), "**Retries.**")
	retries, _, _ = strings.Cut(retries, "\n4.")
	for _, want := range []string{"`409 idempotency_in_flight`", "`409 conflict`", "`429`", "`5xx`"} {
		if !strings.Contains(strings.Join(strings.Fields(retries), " "), want) {
			t.Errorf("the production guide's retries do not name %s:%s", want, retries)
		}
	}
}
