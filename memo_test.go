package parcela

import "testing"

func TestMemoStaysBounded(t *testing.T) {
	t.Parallel()
	m := newMemo[int, int](8)
	for i := range 100 {
		m.put(i, i*i)
		if len(m.m) > 8 {
			t.Fatalf("%d entries kept, bound 8", len(m.m))
		}
	}
	if v, ok := m.get(99); !ok || v != 99*99 {
		t.Fatalf("the last entry: %d %v", v, ok)
	}
}

// Past its bound a memo forgets a few entries, not all: a working set a
// little larger than the bound keeps most of its hits. It started again
// empty, and a set of 4,097 cycled through 4,096 slots hit none.
func TestMemoPastItsBoundKeepsMostEntries(t *testing.T) {
	t.Parallel()
	m := newMemo[int, int](4096)
	hits := 0
	for round := range 4 {
		for k := range 4097 {
			if _, ok := m.get(k); ok && round > 0 {
				hits++
			} else if !ok {
				m.put(k, k)
			}
		}
	}
	if len(m.m) > 4096 {
		t.Fatalf("%d entries kept, bound 4096", len(m.m))
	}
	if hits < 3*4097/2 {
		t.Fatalf("%d hits of %d lookups after the first round", hits, 3*4097)
	}
}

// A remembered price table is the computed one, and a caller that changes
// its copy does not change what the next caller gets.
func TestPriceTableRememberedIsComputed(t *testing.T) {
	t.Parallel()
	rate := MustRate("0.0299")
	first, err := priceTable(159200, rate, 11, 33)
	if err != nil {
		t.Fatal(err)
	}
	want, err := priceTableCarried(159200, rate, 11, prorataFactor(rate.Decimal(), 33))
	if err != nil {
		t.Fatal(err)
	}
	first.parts[0].InterestCents = -1
	again, _ := priceTable(159200, rate, 11, 33)
	if again.pmt != want.pmt || len(again.parts) != len(want.parts) {
		t.Fatalf("remembered %+v, computed %+v", again, want)
	}
	for i := range want.parts {
		if again.parts[i] != want.parts[i] {
			t.Fatalf("part %d: remembered %+v, computed %+v", i, again.parts[i], want.parts[i])
		}
	}
}
