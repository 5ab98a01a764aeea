package sqldb

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// No statement of the store binds a bare parameter as its LIMIT or OFFSET:
// SQLite would compile such a statement again at every call (limitParam).
func TestLimitsAreBoundThroughACast(t *testing.T) {
	t.Parallel()
	bare := regexp.MustCompile(`(?i)\b(LIMIT|OFFSET)\s+\?`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if loc := bare.FindIndex(src); loc != nil {
			line := 1 + strings.Count(string(src[:loc[0]]), "\n")
			t.Errorf("%s:%d binds a bare parameter as a LIMIT or OFFSET; use limitParam or limitOffsetParam", f, line)
		}
	}
}
