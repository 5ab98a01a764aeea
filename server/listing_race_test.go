package server_test

import (
	"sync"
	"testing"
)

// A listing's total_items is at least what its page shows, while charges
// add bills: the count and the page are two statements, and a page of
// 1,000 answered total_items 6 with 12 results (PostgreSQL in every run,
// SQLite in two of five). With no filter a bill only ever joins the
// listing, so here the two must be equal.
func TestRaceListingCountAndPageUnderCharges(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer, _ := b.order()
		_, fin := configs(offer)
		var orders []string
		for range 25 {
			orders = append(orders, b.call("POST", "/external_api/v1/orders", orderBody(offer["id"].(string))).want(t, 201).JSON(t)["id"].(string))
		}
		var wg sync.WaitGroup
		done := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(done)
			for _, o := range orders {
				b.call("POST", "/external_api/v1/orders/"+o+"/charge", chargeBody(fin, "boleto", 6)).want(t, 200)
			}
		}()
		bad := 0
		for {
			select {
			case <-done:
				wg.Wait()
				if bad > 0 {
					t.Errorf("%d listings whose total_items was not their results", bad)
				}
				return
			default:
			}
			page := b.call("GET", "/external_api/v1/bills?per_page=1000", nil).want(t, 200).JSON(t)
			if total, shown := int(page["total_items"].(float64)), len(page["results"].([]any)); total != shown {
				if bad++; bad < 4 {
					t.Logf("total_items %d, results %d", total, shown)
				}
			}
		}
	})
}
