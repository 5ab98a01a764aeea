package parcela

import "sync"

// memo remembers the results of a pure function of its key. It is for the
// plan's decimal arithmetic (the price table, the CET's search and bound),
// which the offer page runs for every count of installments on every view
// with the same few inputs. Being pure, an entry can never be stale. Past
// max entries an eighth of them, in the map's own random order, is
// forgotten: bounded without bookkeeping, a miss costs only the
// computation, and a working set past the bound keeps most of its hits.
// (Starting again empty, as it did, lost them all at once: offers enough
// of 120 installments kept it starting over, and every view missed.)
type memo[K comparable, V any] struct {
	mu  sync.Mutex
	m   map[K]V
	max int
}

func newMemo[K comparable, V any](max int) *memo[K, V] {
	return &memo[K, V]{m: make(map[K]V), max: max}
}

func (c *memo[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *memo[K, V]) put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; !ok && len(c.m) >= c.max {
		forget := max(1, c.max/8)
		for old := range c.m {
			delete(c.m, old)
			if forget--; forget == 0 {
				break
			}
		}
	}
	c.m[k] = v
}
