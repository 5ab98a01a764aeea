package sqldb

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// No statement of the store binds a bare parameter as its LIMIT or OFFSET:
// SQLite would compile such a statement again at every call (limitParam).
// Every string literal of the package's code is looked at.
func TestLimitsAreBoundThroughACast(t *testing.T) {
	t.Parallel()
	bare := regexp.MustCompile(`(?i)\b(LIMIT|OFFSET)\s+\?`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && bare.MatchString(lit.Value) {
				t.Errorf("%s binds a bare parameter as a LIMIT or OFFSET; use limitParam or limitOffsetParam", fset.Position(lit.Pos()))
			}
			return true
		})
	}
}
