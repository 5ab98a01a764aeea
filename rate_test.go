package parcela

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

func TestRateUnmarshalJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in        string
		want      string // the value kept, "" for an unbounded rate
		malformed bool   // not a JSON number: a decoding error
	}{
		{"0.0299", "0.0299", false},
		{"0.10", "0.1", false},
		{"1", "1", false},
		{"2.99e-2", "0.0299", false},
		{"-0.5", "-0.5", false},
		{"1e-61", "", false},
		{"1e10000", "", false},
		{"1e999999999999", "", false}, // an exponent past int32
		{"0." + strings.Repeat("0", 80) + "1", "", false},
		{strings.Repeat("9", 100), "", false},
		{`"0.02"`, "", true},
		{"null", "", true},
		{"true", "", true},
		{"{}", "", true},
		{"0x10", "", true},
		{"NaN", "", true},
		{"1e", "", true},
	}
	for _, tt := range tests {
		var r Rate
		err := r.UnmarshalJSON([]byte(tt.in))
		switch {
		case tt.malformed:
			if err == nil {
				t.Errorf("UnmarshalJSON(%s) = %v, want an error", tt.in, r)
			}
		case err != nil:
			t.Errorf("UnmarshalJSON(%s): %v", tt.in, err)
		case tt.want == "" && !r.unbounded:
			t.Errorf("UnmarshalJSON(%s) = %v, want an unbounded rate", tt.in, r)
		case tt.want != "" && (r.unbounded || r.String() != tt.want):
			t.Errorf("UnmarshalJSON(%s) = %v, want %s", tt.in, r, tt.want)
		}
	}
	// An unbounded rate never renders: it is refused before anything echoes it.
	var r Rate
	if err := json.Unmarshal([]byte("1e10000"), &r); err != nil {
		t.Fatal(err)
	}
	if b, err := json.Marshal(r); err == nil {
		t.Errorf("Marshal(1e10000) = %s, want an error", b)
	}
	if _, err := ParseRate("1e10000"); err == nil {
		t.Error("ParseRate(1e10000) succeeded")
	}
}

func TestCheckRate(t *testing.T) {
	t.Parallel()
	unbounded := func(s string) Rate {
		var r Rate
		if err := r.UnmarshalJSON([]byte(s)); err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := []struct {
		name string
		r    Rate
		max  string
		code string // "" when valid
	}{
		{"zero", MustRate("0"), "1", ""},
		{"one", MustRate("1"), "1", ""},
		{"six places", MustRate("0.000001"), "1", ""},
		{"trailing zeros do not count", MustRate("0.020000000"), "1", ""},
		{"seven places", MustRate("0.0000001"), "1", "invalid"},
		{"above one", MustRate("1.000001"), "1", "too_large"},
		{"above the fine cap", MustRate("0.021"), "0.02", "too_large"},
		{"negative", MustRate("-0.01"), "1", "too_small"},
		{"1e-61", unbounded("1e-61"), "1", "invalid"},
		{"1e10000", unbounded("1e10000"), "1", "invalid"},
	}
	for _, tt := range tests {
		var v Validation
		ok := checkRate(&v, "rate", tt.r, MustRate(tt.max))
		if ok != (tt.code == "") || (tt.code != "" && v.Fields[0].Code != tt.code) {
			t.Errorf("%s: checkRate = %v %+v, want code %q", tt.name, ok, v.Fields, tt.code)
		}
		if len(v.Fields) > 0 && len(v.Fields[0].Message) > 200 {
			t.Errorf("%s: message of %d bytes", tt.name, len(v.Fields[0].Message))
		}
	}
	for _, tt := range []struct {
		r    Rate
		code string
	}{
		{RateFromInt(0), ""}, {RateFromInt(MaxAmountCents), ""}, {MustRate("150.00"), ""},
		{RateFromInt(MaxAmountCents + 1), "too_large"}, {unbounded("1e30"), "too_large"},
		{MustRate("-1"), "too_small"}, {MustRate("0.5"), "invalid"},
	} {
		var v Validation
		if ok := checkRateCents(&v, "cents", tt.r); ok != (tt.code == "") || (tt.code != "" && v.Fields[0].Code != tt.code) {
			t.Errorf("checkRateCents(%v) = %v %+v, want code %q", tt.r, ok, v.Fields, tt.code)
		}
	}
}

func TestRatePlaces(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int{"0": 0, "10": 0, "1e3": 0, "0.1": 1, "0.10": 1, "0.0299": 4, "2.99e-2": 4, "0.000001": 6, "1.5000": 1} {
		if got := MustRate(in).Places(); got != want {
			t.Errorf("Places(%s) = %d, want %d", in, got, want)
		}
	}
}

func TestCentsTimesMatchesMulCents(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(12, 13))
	for range 20000 {
		r := RateFromDecimal(decimal.New(rng.Int64N(1_000_001), -int32(rng.IntN(RatePlaces+1))))
		if r.Decimal().GreaterThan(one) {
			continue
		}
		cents := rng.Int64N(MaxAmountCents * 1000)
		if got, want := centsTimes(r)(cents), r.MulCents(cents); got != want {
			t.Fatalf("centsTimes(%s)(%d) = %d, want %d", r, cents, got, want)
		}
	}
	// Half a cent rounds up.
	if got := centsTimes(MustRate("0.5"))(1); got != 1 {
		t.Errorf("0.5 × 1 = %d, want 1", got)
	}
}

// Zero written with an exponent past the envelope's is zero, a valid rate:
// "0e-41" was refused as out of range where "0e-40" was read (an audit).
func TestZeroWithAnyExponentIsARate(t *testing.T) {
	for _, s := range []string{"0e-40", "0e-41", "0E-100", "-0e-41", "0e+99", "0.0e-2000",
		"0e-2147483649", "0e9999999999", "0.0e-99999999999", "-0.000E+99999999999", // exponents past 32 bits too (a review)
		"0." + strings.Repeat("0", 70), "0e-" + strings.Repeat("9", 70)} { // and past 64 characters
		r, err := ParseRate(s)
		if err != nil {
			t.Errorf("ParseRate(%q): %v", s, err)
			continue
		}
		var v Validation
		if !checkRate(&v, "interest_rate", r, rateOne) || !r.IsZero() || r.String() != "0" {
			t.Errorf("%q: %v, refused %+v", s, r, v.Fields)
		}
	}
	for _, s := range []string{"1e-41", "0.1e-99999999999", "10e9999999999", "0." + strings.Repeat("0", 70) + "1"} {
		if _, err := ParseRate(s); err == nil {
			t.Errorf("%s read as a rate", s)
		}
	}
}
