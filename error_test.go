package parcela

import (
	"fmt"
	"strings"
	"testing"
)

func TestValidationListsAtMost100Fields(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 100, 101, 5000} {
		var v Validation
		for i := range n {
			v.Add(fmt.Sprintf("items[%d]", i), "invalid", "is invalid")
		}
		e := v.Err().(*Error)
		if want := min(n, MaxFieldErrors); len(e.Fields) != want {
			t.Errorf("%d errors: %d listed, want %d", n, len(e.Fields), want)
		}
		switch {
		case n == 1 && e.Message != "items[0] is invalid":
			t.Errorf("1 error: message %q", e.Message)
		case n == 2 && e.Message != "items[0] is invalid (and 1 more error)":
			t.Errorf("2 errors: message %q", e.Message)
		case n > 2 && !strings.Contains(e.Message, fmt.Sprintf("and %d more errors", n-1)):
			t.Errorf("%d errors: message %q does not count them", n, e.Message)
		case n > MaxFieldErrors && !strings.Contains(e.Message, fmt.Sprintf("%d more are not", n-MaxFieldErrors)):
			t.Errorf("%d errors: message %q does not say how many are not listed", n, e.Message)
		}
	}
	var v Validation
	if v.Err() != nil {
		t.Error("an empty validation is an error")
	}
}
