package parcela

import (
	"math"
	"testing"
)

func TestPageValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		page Page
		want []string // the fields at fault
	}{
		{Page{1, 25}, nil},
		{Page{1, 1}, nil},
		{Page{1, MaxPerPage}, nil},
		{Page{MaxPage, MaxPerPage}, nil},
		{Page{0, 25}, []string{"page"}},
		{Page{-1, 25}, []string{"page"}},
		{Page{MaxPage + 1, 25}, []string{"page"}},
		{Page{math.MaxInt, 25}, []string{"page"}},
		{Page{1, 0}, []string{"per_page"}},
		{Page{1, MaxPerPage + 1}, []string{"per_page"}},
		{Page{0, 0}, []string{"page", "per_page"}},
	}
	for _, tt := range tests {
		err := tt.page.Validate()
		var got []string
		if err != nil {
			if ErrorCode(err) != EINVALID {
				t.Errorf("%+v: code %s", tt.page, ErrorCode(err))
			}
			for _, f := range err.(*Error).Fields {
				got = append(got, f.Field)
			}
		}
		if len(got) != len(tt.want) || (len(got) > 0 && got[0] != tt.want[0]) {
			t.Errorf("%+v: fields %v, want %v", tt.page, got, tt.want)
		}
	}
	// The largest valid offset fits a 32-bit OFFSET with room to spare.
	if off := (Page{MaxPage, MaxPerPage}).Offset(); off <= 0 || off > math.MaxInt32 {
		t.Errorf("largest offset %d does not fit an int32", off)
	}
}
