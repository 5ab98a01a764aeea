package jsonbody

import (
	"runtime"
	"strings"
	"testing"
)

// TestDeepBodyCostsItsSize: a body nested deep under long keys, well
// within the body limit, must cost memory in proportion to its size. Its
// walk wrote every value's path out, so the paths held at the deepest
// value summed to depth²×key/2: a 1 MiB body nested 10,000 deep under
// 100-byte keys held about 5 GB, and one request ran the server out of
// memory.
func TestDeepBodyCostsItsSize(t *testing.T) {
	const depth, keyLen = 2000, 40
	key := `"` + strings.Repeat("k", keyLen) + `":`
	body := `{"x":` + strings.Repeat("{"+key, depth) + `1` + strings.Repeat("}", depth) + `}`
	var v struct {
		Y int `json:"y"`
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := Decode([]byte(body), &v); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	runtime.ReadMemStats(&after)
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(100*len(body)); got > limit {
		t.Fatalf("decoding a %d-byte body %d deep allocated %d MB, more than %d MB", len(body), depth, got>>20, limit>>20)
	}
	// A path deep in the body is still named in full.
	dup := `{"x":` + strings.Repeat(`{"a":`, 3) + `{"b":1,"b":2}` + strings.Repeat("}", 3) + `}`
	if err := Decode([]byte(dup), &v); err == nil || !strings.Contains(err.Error(), `"x.a.a.a.b"`) {
		t.Fatalf("duplicate deep key: %v", err)
	}
}
