package parcela

import (
	"testing"
	"time"
)

// benchmarkPlanCounts120 plans every count of a 120-installment offer, as
// its page does on every view: with the memos as the last view left them
// (warm), or emptied first (cold: the first view of a day, whose due dates
// are new keys, or a view whose entries were forgotten).
func benchmarkPlanCounts120(b *testing.B, cold bool) {
	c, o := financedOrder(120, 5_000_000, "0.1", "0.05")
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, SaoPaulo)
	counts := make([]int, 0, 119)
	for n := 2; n <= 120; n++ {
		counts = append(counts, n)
	}
	req := chargeReq("financed", MethodBoleto, 0)
	for b.Loop() {
		if cold {
			forgetAll(cets)
			forgetAll(cetBounds)
			forgetAll(priceTables)
		}
		PlanCounts(req, o, &c, now, counts, false, 0)
	}
}

func forgetAll[K comparable, V any](m *memo[K, V]) {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.m)
}

func BenchmarkPlanCounts120Cold(b *testing.B) { benchmarkPlanCounts120(b, true) }
func BenchmarkPlanCounts120Warm(b *testing.B) { benchmarkPlanCounts120(b, false) }
