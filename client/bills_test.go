package client_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"parcela/client"
)

// pagedBills is a listing of n bills, per_page a page, as GET /bills pages
// them.
func pagedBills(t *testing.T, n int) *client.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		perPage, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
		page, perPage = max(page, 1), max(perPage, 1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"results": [`)
		for i := (page - 1) * perPage; i < min(page*perPage, n); i++ {
			if i > (page-1)*perPage {
				fmt.Fprint(w, ",")
			}
			fmt.Fprintf(w, `{"id": "bill-%d"}`, i+1)
		}
		fmt.Fprintf(w, `], "total_items": %d, "total_pages": %d}`, n, (n+perPage-1)/perPage)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, "sandbox_token")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// One sequence of Bills walks every page each time it is ranged over.
func TestBillsSequenceRangedTwice(t *testing.T) {
	t.Parallel()
	c := pagedBills(t, 5)
	bills := c.Bills(context.Background(), client.ListBillsParams{PerPage: client.Ptr(2)})
	for pass := 1; pass <= 2; pass++ {
		var ids []string
		for bill, err := range bills {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, bill.Id)
		}
		if fmt.Sprint(ids) != "[bill-1 bill-2 bill-3 bill-4 bill-5]" {
			t.Errorf("pass %d: %v", pass, ids)
		}
	}
}

// Goroutines ranging over one sequence at once each walk every page.
func TestBillsSequenceRangedConcurrently(t *testing.T) {
	t.Parallel()
	c := pagedBills(t, 5)
	bills := c.Bills(context.Background(), client.ListBillsParams{PerPage: client.Ptr(2)})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			n := 0
			for _, err := range bills {
				if err != nil {
					t.Error(err)
					return
				}
				n++
			}
			if n != 5 {
				t.Errorf("%d bills, want 5", n)
			}
		})
	}
	wg.Wait()
}
