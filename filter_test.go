package parcela

import (
	"slices"
	"testing"
	"time"
)

func TestBillFilterValidate(t *testing.T) {
	t.Parallel()
	day := func(d int) *time.Time { x := calSP(2026, time.March, d, 0, 0, 0, 0); return &x }
	id := "6b0f3a0e-9d53-4a8e-9f0b-2f5d1c1e7a10"
	page := Page{1, 25}
	tests := []struct {
		name   string
		f      BillFilter
		fields []string
	}{
		{"no filter", BillFilter{Page: page}, nil},
		{"every filter", BillFilter{BillingID: id, OrderID: id, Status: BillOverdue, DueFrom: day(1), DueTo: day(2), PaidFrom: day(1), PaidTo: day(2), Page: page}, nil},
		{"billing id not a UUID: matches nothing, refuses nothing", BillFilter{BillingID: "1 OR 1=1", Page: page}, nil},
		{"unknown status", BillFilter{Status: "late", Page: page}, []string{"status"}},
		{"due range reversed", BillFilter{DueFrom: day(2), DueTo: day(1), Page: page}, []string{"due_date_end"}},
		{"paid range reversed", BillFilter{PaidFrom: day(2), PaidTo: day(1), Page: page}, []string{"paid_at_end"}},
		{"due range ending the day before its start", BillFilter{DueFrom: day(2), DueTo: day(2), Page: page}, []string{"due_date_end"}},
		{"paid range ending the day before its start", BillFilter{PaidFrom: day(2), PaidTo: day(2), Page: page}, []string{"paid_at_end"}},
		{"page too far", BillFilter{Page: Page{MaxPage + 1, 25}}, []string{"page"}},
		{"all at once", BillFilter{Status: "late", DueFrom: day(2), DueTo: day(1), Page: Page{0, 1001}}, []string{"status", "due_date_end", "page", "per_page"}},
	}
	for _, tt := range tests {
		var got []string
		if err := tt.f.Validate(); err != nil {
			for _, f := range err.(*Error).Fields {
				got = append(got, f.Field)
			}
		}
		if !slices.Equal(got, tt.fields) {
			t.Errorf("%s: fields %v, want %v", tt.name, got, tt.fields)
		}
	}
	for _, tt := range []struct {
		f    BillFilter
		want bool
	}{
		{BillFilter{}, false},
		{BillFilter{BillingID: id, OrderID: id}, false},
		{BillFilter{BillingID: "1 OR 1=1"}, true},
		{BillFilter{OrderID: id[:35] + "\x00"}, true},
		{BillFilter{BillingID: id, OrderID: "abc"}, true},
	} {
		if got := tt.f.MatchesNothing(); got != tt.want {
			t.Errorf("MatchesNothing(%+v) = %v, want %v", tt.f, got, tt.want)
		}
	}
}
