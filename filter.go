package parcela

import "slices"

// BillStatuses are the statuses a bill listing can filter on.
var BillStatuses = []string{BillPending, BillPaid, BillCanceled, BillOverdue}

// Validate checks a bill listing's filter and page: status is a bill
// status, date ranges are in order, and the page is within Page.Validate's
// bounds. A range's end is the midnight after its last day, so an end at
// its start is a last day before the first, as reversed as any other. Ids are not checked here: a filter never answers 404 or 422 for
// an id, it matches nothing (MatchesNothing).
func (f BillFilter) Validate() error {
	var v Validation
	if f.Status != "" && !slices.Contains(BillStatuses, f.Status) {
		v.Add("status", "invalid", "must be pending, paid, canceled or overdue")
	}
	if f.DueFrom != nil && f.DueTo != nil && !f.DueTo.After(*f.DueFrom) {
		v.Add("due_date_end", "invalid", "must not be before due_date_start")
	}
	if f.PaidFrom != nil && f.PaidTo != nil && !f.PaidTo.After(*f.PaidFrom) {
		v.Add("paid_at_end", "invalid", "must not be before paid_at_start")
	}
	if err := f.Page.Validate(); err != nil {
		v.Fields = append(v.Fields, err.(*Error).Fields...)
	}
	return v.Err()
}

// MatchesNothing reports whether the filter names an id that no bill can
// have (billing_id or order_id not a UUID), so the listing is empty without
// a query: such a value, a NUL byte say, must not reach the database.
func (f BillFilter) MatchesNothing() bool {
	return f.BillingID != "" && !IsUUID(f.BillingID) || f.OrderID != "" && !IsUUID(f.OrderID)
}
