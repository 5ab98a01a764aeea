package client

import (
	"context"
	"fmt"
	"iter"
	"time"
)

// Bills yields every bill that params selects, fetching page after page
// (params.Page, when set, is the first page; params.PerPage the page size,
// default 25). An error ends the sequence after being yielded. Bills are
// ordered by due date, then id, and paged by position: a bill that joins
// the selection while walking moves the later ones a place on, and those
// already yielded are not yielded again (each is yielded once, in order);
// one that leaves it moves them a place back (one is missed). Leaving includes what the loop itself does: walking status
// pending and paying each bill as it comes skips every other one. Collect
// the bills first, then act on them.
//
//	for bill, err := range c.Bills(ctx, client.ListBillsParams{OrderId: &orderID}) {
//		if err != nil { return err }
//		…
//	}
func (c *Client) Bills(ctx context.Context, params ListBillsParams) iter.Seq2[BillEndpoint, error] {
	return func(yield func(BillEndpoint, error) bool) {
		// Each walk pages its own copy: setting params.Page itself made a
		// second range over the sequence start at the first one's last page.
		walk := params
		page := 1
		if params.Page != nil {
			page = *params.Page
		}
		// The last bill yielded: a page fetched after bills joined the
		// selection before it starts with ones already yielded (GET /bills
		// pages by position), which are skipped, as the order is a total one
		// (due date, then id).
		var lastDue time.Time
		var lastID string
		yielded := false
		for {
			walk.Page = &page
			resp, err := c.ListBillsWithResponse(ctx, &walk)
			if err == nil && resp.JSON200 == nil {
				err = fmt.Errorf("client: GET /bills answered %d without a page of bills", resp.StatusCode())
			}
			if err != nil {
				yield(BillEndpoint{}, err)
				return
			}
			for _, b := range resp.JSON200.Results {
				if yielded && (b.DueDate.Before(lastDue) || b.DueDate.Equal(lastDue) && b.Id <= lastID) {
					continue
				}
				yielded, lastDue, lastID = true, b.DueDate, b.Id
				if !yield(b, nil) {
					return
				}
			}
			if page >= resp.JSON200.TotalPages {
				return
			}
			page++
		}
	}
}
