package client_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// go doc parcela/client, which the README sends integrators to, opens
// with the package's own comment (client.go). The generated file's
// comment ("Package client provides primitives to interact with the
// openapi HTTP API", and its DO NOT EDIT notice) came first, and was the
// package's synopsis.
func TestPackageDocIsTheClientsOwn(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	var files []*ast.File
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "parcela/client")
	if err != nil {
		t.Fatal(err)
	}
	if synopsis := p.Synopsis(p.Doc); synopsis != "Package client is a Go client of parcela's external API." {
		t.Errorf("the package's synopsis is %q", synopsis)
	}
	if strings.Contains(p.Doc, "DO NOT EDIT") || strings.Contains(p.Doc, "provides primitives") {
		t.Errorf("the package's documentation holds the generated file's comment:\n%s", p.Doc)
	}
}
