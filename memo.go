package parcela

import "sync"

// memo remembers the results of a pure function of its key. It is for the
// plan's decimal arithmetic (the price table, the CET's search), which the
// offer page runs for every count of installments on every view with the
// same few inputs. Being pure, an entry can never be stale. Past max
// entries the memo starts again empty: bounded without bookkeeping, and a
// miss only costs the computation it would have cost anyway.
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
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[k] = v
}
