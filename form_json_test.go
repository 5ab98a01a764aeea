package parcela

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// formGen fills a value's every field by reflection from a stream of
// bytes, so a field added to a form is filled (and marshalled by
// encoding/json) without anyone touching this test: if AppendJSON misses
// it, the comparison fails. A kind it cannot fill fails the test too.
type formGen struct {
	t    testing.TB
	data []byte
}

func (g *formGen) byte() byte {
	if len(g.data) == 0 {
		return 0
	}
	b := g.data[0]
	g.data = g.data[1:]
	return b
}

func (g *formGen) uint64() uint64 {
	var b [8]byte
	n := copy(b[:], g.data)
	g.data = g.data[n:]
	return binary.LittleEndian.Uint64(b[:])
}

var edgeStrings = []string{
	"", "a", "<script>&amp;</script>", `"quoted" \ back\slash /`, "\u2028\u2029", "\x00\x01\x1f\x7f",
	"\b\f\n\r\t", "\xff", "\xe2\x80", "a\xc0\xafb", "\xed\xa0\x80", "\U0001F600 ção", "\ufffd", "\xf4\x90\x80\x80",
	"https://api.example.com/checkout/bills/x?code=A&b=<c>",
}

var edgeInts = []int64{0, 1, -1, 9, 10, -10, math.MaxInt64, math.MinInt64, math.MaxInt32, math.MinInt32, 1_000_000_000_00}

func (g *formGen) string() string {
	if k := g.byte(); k < 128 {
		return edgeStrings[int(k)%len(edgeStrings)]
	}
	n := min(int(g.byte())%40, len(g.data))
	s := string(g.data[:n])
	g.data = g.data[n:]
	return s
}

func (g *formGen) int() int64 {
	if k := g.byte(); k < 96 {
		return edgeInts[int(k)%len(edgeInts)]
	} else if k < 192 {
		return int64(g.uint64() % 100_000_000)
	}
	return int64(g.uint64())
}

var edgeTimes = []time.Time{
	{}, time.Unix(0, 0), time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC), time.Date(10000, 1, 1, 2, 0, 0, 0, time.UTC),
	time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1000, 6, 1, 0, 0, 0, 1, time.UTC), time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC),
	time.Date(2026, 2, 15, 0, 0, 0, 500_000, SaoPaulo), time.Date(2018, 11, 4, 0, 30, 0, 0, SaoPaulo),
	time.Date(2026, 3, 8, 12, 0, 0, 123_456_789, time.FixedZone("X", 5*3600+1800)),
}

func (g *formGen) time() time.Time {
	if k := g.byte(); k < 64 {
		return edgeTimes[int(k)%len(edgeTimes)]
	}
	// Seconds from 1900 to 2100, or across ±70,000 years; any nanosecond,
	// any of a few zones.
	sec := int64(g.uint64()%(1<<42)) - 1<<41
	if g.byte()&1 == 0 {
		sec = int64(g.uint64()%(200*366*86400)) - 70*366*86400
	}
	t := time.Unix(sec, int64(g.uint64()%1_000_000_000))
	zones := []*time.Location{time.UTC, SaoPaulo, time.FixedZone("", -(3*3600 + 388)), time.Local}
	return t.In(zones[int(g.byte())%len(zones)])
}

func (g *formGen) rate() Rate {
	switch k := g.byte(); {
	case k < 8:
		return Rate{unbounded: true}
	case k < 64:
		return Rate{}
	default:
		return RateFromDecimal(decimal.New(g.int(), int32(int(g.byte())%81)-40))
	}
}

func (g *formGen) fill(v reflect.Value) {
	switch v.Type() {
	case reflect.TypeFor[Timestamp]():
		v.Set(reflect.ValueOf(Timestamp(g.time())))
		return
	case reflect.TypeFor[Rate]():
		v.Set(reflect.ValueOf(g.rate()))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(g.string())
	case reflect.Int, reflect.Int64:
		v.SetInt(g.int())
	case reflect.Bool:
		v.SetBool(g.byte()&1 == 1)
	case reflect.Pointer:
		if g.byte()%3 == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		g.fill(p.Elem())
		v.Set(p)
	case reflect.Slice:
		n := int(g.byte() % 5)
		if n == 4 {
			v.SetZero() // nil
			return
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			g.fill(s.Index(i))
		}
		v.Set(s)
	case reflect.Struct:
		for i := range v.NumField() {
			// An embedded struct (billBase) is walked in place: its exported
			// fields are settable though it is not.
			if sf := v.Type().Field(i); !v.Field(i).CanSet() && !(sf.Anonymous && sf.Type.Kind() == reflect.Struct) {
				g.t.Fatalf("%s.%s cannot be filled: teach formGen (and AppendJSON) about it", v.Type(), v.Type().Field(i).Name)
			}
			g.fill(v.Field(i))
		}
	default:
		g.t.Fatalf("%s (%s) cannot be filled: teach formGen (and AppendJSON) about it", v.Type(), v.Kind())
	}
}

// genForm fills a form of type T from data.
func genForm[T any](t testing.TB, data []byte) T {
	var f T
	(&formGen{t: t, data: data}).fill(reflect.ValueOf(&f).Elem())
	return f
}

func genBillEndpointForm(t testing.TB, data []byte) BillEndpointForm {
	return genForm[BillEndpointForm](t, data)
}

// appender is a form that writes itself (through a pointer to it).
type appender[T any] interface {
	*T
	AppendJSON([]byte) ([]byte, error)
}

// sameAsMarshal fails unless AppendJSON writes what json.Marshal writes,
// or fails where it fails.
func sameAsMarshal[T any, P appender[T]](t *testing.T, f T) {
	t.Helper()
	want, wantErr := json.Marshal(f)
	prefix := []byte("prefix")
	got, err := P(&f).AppendJSON(prefix[:len(prefix):len(prefix)])
	if (err != nil) != (wantErr != nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("AppendJSON error %v, json.Marshal error %v", err, wantErr)
	}
	if err != nil {
		return
	}
	if !bytes.HasPrefix(got, prefix) {
		t.Fatalf("AppendJSON did not append to its argument: %.40q", got)
	}
	if got = got[len(prefix):]; !bytes.Equal(got, want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		from := max(0, i-60)
		t.Fatalf("AppendJSON and json.Marshal differ at byte %d:\nAppendJSON   …%.160s\njson.Marshal …%.160s", i, got[from:], want[from:])
	}
}

func TestBillEndpointFormAppendJSONMatchesMarshal(t *testing.T) {
	sameAsMarshal(t, BillEndpointForm{})
	sameAsMarshal(t, BillEndpointForm{Payments: []PaymentBillForm{}})
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 4096)
	for range 3000 {
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		sameAsMarshal(t, genBillEndpointForm(t, data))
	}
}

// TestBillEndpointFormAppendJSONRendersEveryField guards the generator
// itself: a form it fills has no field json.Marshal leaves at its zero.
func TestBillEndpointFormAppendJSONRendersEveryField(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	seen := map[string]bool{}
	data := make([]byte, 4096)
	for range 200 {
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		f := genBillEndpointForm(t, data)
		out, err := f.AppendJSON(nil)
		if err != nil {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("AppendJSON wrote invalid JSON: %v\n%s", err, out)
		}
		for k := range m {
			seen[k] = true
		}
		if billing, ok := m["billing"].(map[string]any); ok {
			for k := range billing {
				seen["billing."+k] = true
			}
		}
	}
	for _, k := range []string{"paid_at", "disable_penalties_until", "payments"} {
		if !seen[k] {
			t.Errorf("no generated form had %s", k)
		}
	}
}

func TestAppendJSONStringMatchesMarshal(t *testing.T) {
	var cases []string
	for b := range 256 {
		cases = append(cases, string([]byte{byte(b)}), "x"+string([]byte{byte(b)})+"y")
		// At every place of the words plain8 reads.
		for at := range 17 {
			long := []byte("0123456789abcdef-")
			long[at] = byte(b)
			cases = append(cases, string(long), string(long[:at+1]))
		}
	}
	for r := rune(0); r < 0x3000; r++ {
		cases = append(cases, string(r))
	}
	cases = append(cases, edgeStrings...)
	for _, s := range cases {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONString(%q) = %s, json.Marshal %s", s, got, want)
		}
	}
}

func FuzzBillEndpointFormAppendJSON(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x80\x05<a>&\u2028\xff\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a"))
	f.Add(bytes.Repeat([]byte{0xff, 0x00, 0x81, 0x40}, 200))
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsMarshal(t, genBillEndpointForm(t, data))
	})
}

// The hand-written years and the AppendFormat fallback both write what
// MarshalText does: across all of int64's seconds, around the edges of the
// hand-written range and around São Paulo's offset changes.
func TestAppendJSONTimestampMatchesMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	around := []int64{minFastTimestamp, maxFastTimestamp, 0, -2_208_988_800,
		time.Date(1914, 1, 1, 3, 6, 28, 0, time.UTC).Unix(), time.Date(2019, 2, 17, 2, 0, 0, 0, time.UTC).Unix()}
	for i := range 200_000 {
		var sec int64
		switch i % 4 {
		case 0:
			sec = int64(rng.Uint64())
		case 1:
			sec = rng.Int64N(1<<40) - 1<<39
		case 2:
			sec = around[rng.IntN(len(around))] + rng.Int64N(4*86400) - 2*86400
		default:
			sec = rng.Int64N(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).Unix())
		}
		ts := Timestamp(time.Unix(sec, rng.Int64N(1e9)))
		want, _ := json.Marshal(ts)
		if got := appendJSONTimestamp(nil, ts); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONTimestamp(%d) = %s, json.Marshal %s", sec, got, want)
		}
	}
}

// BenchmarkBillEndpointFormJSON compares the two ways of writing a bill
// with a paid payment.
func BenchmarkBillEndpointFormJSON(b *testing.B) {
	at := Timestamp(time.Date(2026, 3, 10, 14, 5, 6, 789_000_000, time.UTC))
	code, url := "34191790010104351004791020150008291070026000", "https://api.example.com/external_api/v1/payments/x/barcode.png"
	p := PaymentBillForm{PaymentOrderForm: PaymentOrderForm{ID: "0b9f1c2e-6a4f-4d8e-9a51-3c2b1d0e9f8a", CreatedAt: at, AmountCents: 52_345,
		PaidAmountCents: 52_345, PaidAt: &at, Status: "paid", PaymentMethod: "boleto", URL: url, Barcode: &code, ExpiresAt: at, Installments: 1},
		BarcodeImageURL: &url, BillID: "7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"}
	f := BillEndpointForm{billBase: billBase{ID: p.BillID, AmountCents: 52_345, CreatedAt: at, UpdatedAt: at, Status: "paid", DueDate: at,
		BillType: BillTypeInstallment, BillDetails: BillDetails{AmortizationCents: 50_000, InterestCents: 2_345}},
		Payments: []PaymentBillForm{p}, AuthenticationCode: "A1B2C3", CheckoutURL: "https://api.example.com/checkout/bills/x?code=A1B2C3",
		Billing: BillingSummaryForm{billingBase: billingBase{ID: "1e2d3c4b-5a69-4788-9a0b-c1d2e3f4a5b6", AmountCents: 600_000, AmountCurrency: "BRL",
			CreatedAt: at, UpdatedAt: at, DueDay: 10, Installments: 12, Status: "active"}, OrderID: "9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d"},
		CurrentAmountCents: 52_345, OriginalAmountCents: 52_345, EffectiveDueDate: at, PaidAt: &at}
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(f); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := f.AppendJSON(make([]byte, 0, 2048)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkAppendJSONString(b *testing.B) {
	s := "https://api.example.com/external_api/v1/payments/0b9f1c2e-6a4f-4d8e-9a51-3c2b1d0e9f8a/barcode.png"
	buf := make([]byte, 0, 256)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = appendJSONString(buf[:0], s)
	}
}
