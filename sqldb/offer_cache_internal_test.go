package sqldb

import (
	"strings"
	"testing"

	"parcela"
)

// Offers whose products carry long descriptions fill the cache by their
// size, not their count: it never holds more than its budget.
func TestOfferCacheBoundedBySize(t *testing.T) {
	var c offerCache
	description := strings.Repeat("é", 20000) // 40 KB
	for i := range 2000 {
		o := &parcela.Offer{ID: parcela.NewID(), Product: &parcela.Product{Description: &description, Metadata: []byte(`{}`)}}
		c.put(o, int64(i))
		if c.bytes > maxKeptBytes {
			t.Fatalf("after %d offers the cache holds %d bytes, over %d", i+1, c.bytes, maxKeptBytes)
		}
		if got := c.get(o.ID, int64(i)); got == nil || *got.Product.Description != description {
			t.Fatalf("offer %d not kept", i)
		}
	}
	if len(c.kept) > maxKeptBytes/40000 {
		t.Fatalf("%d offers of 40 KB kept", len(c.kept))
	}
	// Kept again at a later version, an offer counts once.
	o := &parcela.Offer{ID: parcela.NewID()}
	c = offerCache{}
	c.put(o, 1)
	c.put(o, 2)
	c.put(o, 1) // an older read finishing late is not kept
	if c.bytes != keptSize(o) || c.get(o.ID, 2) == nil || c.get(o.ID, 1) != nil {
		t.Fatalf("bytes %d, want %d; kept %+v", c.bytes, keptSize(o), c.kept)
	}
}
