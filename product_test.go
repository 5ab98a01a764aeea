package parcela

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// fault is one field error a test expects: the field, its code, and a
// fragment of its message (the gist a client reads).
type fault struct{ field, code, gist string }

// pointerTo returns a pointer to a copy of v, for request fields.
func pointerTo[T any](v T) *T { return &v }

// checkFaults fails unless err is nil and want is empty, or err is a
// validation_failed *Error listing exactly want, in order.
func checkFaults(t *testing.T, err error, want []fault) {
	t.Helper()
	if err == nil {
		if len(want) > 0 {
			t.Fatalf("no error, want %v", want)
		}
		return
	}
	e, ok := err.(*Error)
	if !ok || e.Code != EINVALID {
		t.Fatalf("error %#v, want a %s *Error", err, EINVALID)
	}
	if len(e.Fields) != len(want) {
		t.Fatalf("fields %+v, want %v", e.Fields, want)
	}
	for i, f := range e.Fields {
		w := want[i]
		if f.Field != w.field || f.Code != w.code || !strings.Contains(f.Message, w.gist) {
			t.Errorf("field error %d is %+v, want %s %s containing %q", i, f, w.field, w.code, w.gist)
		}
	}
	if first := want[0]; !strings.HasPrefix(e.Message, first.field+" ") {
		t.Errorf("message %q does not start with the first field %s", e.Message, first.field)
	}
}

func productReferences() (kinds, shifts map[string]Named) {
	kinds = map[string]Named{"course": {ID: "k1", Name: "course"}, "event": {ID: "k2", Name: "event"}}
	shifts = map[string]Named{"online": {ID: "s1", Name: "online"}, "morning": {ID: "s2", Name: "morning"}}
	return kinds, shifts
}

// newProduct is a product as a create starts from it: lifetime access,
// enabled, a course given online.
func newProduct() *Product {
	kinds, shifts := productReferences()
	return &Product{CompanyID: "c1", Environment: Sandbox, AccessPeriod: AccessLifetime,
		Availability: "enabled", Kind: kinds["course"], Shift: shifts["online"]}
}

func TestProductApplyRules(t *testing.T) {
	t.Parallel()
	long := func(n int) string { return strings.Repeat("a", n) }
	bannerOf := func(n int) string { u := "https://cdn.example.com/"; return u + long(n-len(u)) }
	raw := func(s string) *json.RawMessage { m := json.RawMessage(s); return &m }
	// metadataOf is a JSON object of exactly n bytes.
	metadataOf := func(n int) *json.RawMessage { return raw(`{"k":"` + long(n-len(`{"k":""}`)) + `"}`) }
	valid := ProductInput{Name: pointerTo("Curso de Go"), FullAmountCents: pointerTo(int64(150000))}
	tests := []struct {
		name   string
		change func(*ProductInput)
		want   []fault
	}{
		{"name and amount are enough", func(*ProductInput) {}, nil},

		{"blank name", func(in *ProductInput) { in.Name = pointerTo("   ") }, []fault{{"product.name", "required", "is required"}}},
		{"name trimmed to 255", func(in *ProductInput) { in.Name = pointerTo(" " + long(255) + " ") }, nil},
		{"name of 256", func(in *ProductInput) { in.Name = pointerTo(long(256)) }, []fault{{"product.name", "too_long", "at most 255"}}},
		{"name with a tab", func(in *ProductInput) { in.Name = pointerTo("Curso\tGo") }, []fault{{"product.name", "invalid", "control characters"}}},
		{"name with NUL", func(in *ProductInput) { in.Name = pointerTo("Curso\x00") }, []fault{{"product.name", "invalid", "control characters"}}},
		{"name with a C1 control inside", func(in *ProductInput) { in.Name = pointerTo("Cur\u0085so") }, []fault{{"product.name", "invalid", "control characters"}}},
		{"name not UTF-8", func(in *ProductInput) { in.Name = pointerTo("Curso \xff") }, []fault{{"product.name", "invalid", "control characters"}}},
		// NEL (U+0085) is Unicode space as well as a C1 control: trimmed at the ends.
		{"name ending in NEL", func(in *ProductInput) { in.Name = pointerTo("Curso\u0085") }, nil},
		{"accented name", func(in *ProductInput) { in.Name = pointerTo("Formação em Educação") }, nil},

		{"amount of 0", func(in *ProductInput) { in.FullAmountCents = pointerTo(int64(0)) }, []fault{{"product.full_amount_cents", "too_small", "at least 1"}}},
		{"negative amount", func(in *ProductInput) { in.FullAmountCents = pointerTo(int64(-100)) }, []fault{{"product.full_amount_cents", "too_small", "at least 1"}}},
		{"amount of 1 cent", func(in *ProductInput) { in.FullAmountCents = pointerTo(int64(1)) }, nil},
		{"amount at the boleto maximum", func(in *ProductInput) { in.FullAmountCents = pointerTo(int64(MaxAmountCents)) }, nil},
		{"amount past the boleto maximum", func(in *ProductInput) { in.FullAmountCents = pointerTo(int64(MaxAmountCents + 1)) }, []fault{{"product.full_amount_cents", "too_large", "boleto or Pix"}}},

		{"description of 10000", func(in *ProductInput) { in.Description = pointerTo(long(10000)) }, nil},
		{"description of 10001", func(in *ProductInput) { in.Description = pointerTo(long(10001)) }, []fault{{"product.description", "too_long", "at most 10000"}}},
		{"description with tab and CRLF lines", func(in *ProductInput) { in.Description = pointerTo("Aulas:\r\n\t1. Go\n\t2. SQL") }, nil},
		{"description with NUL", func(in *ProductInput) { in.Description = pointerTo("Aulas\x00") }, []fault{{"product.description", "invalid", "other than tab and line breaks"}}},
		{"description with an escape", func(in *ProductInput) { in.Description = pointerTo("Aulas\x1b[31m") }, []fault{{"product.description", "invalid", "other than tab and line breaks"}}},
		{"empty description", func(in *ProductInput) { in.Description = pointerTo("") }, nil},

		{"kind event", func(in *ProductInput) { in.Kind = pointerTo("event") }, nil},
		{"unknown kind", func(in *ProductInput) { in.Kind = pointerTo("podcast") }, []fault{{"product.kind", "invalid", "must be one of course, event"}}},
		{"shift morning", func(in *ProductInput) { in.Shift = pointerTo("morning") }, nil},
		{"unknown shift", func(in *ProductInput) { in.Shift = pointerTo("night") }, []fault{{"product.shift", "invalid", "must be one of morning, online"}}},

		{"google pixel of 255", func(in *ProductInput) { in.GooglePixelCode = pointerTo(long(255)) }, nil},
		{"google pixel of 256", func(in *ProductInput) { in.GooglePixelCode = pointerTo(long(256)) }, []fault{{"product.google_pixel_code", "too_long", "at most 255"}}},
		{"google pixel with a line break", func(in *ProductInput) { in.GooglePixelCode = pointerTo("G-1\nG-2") }, []fault{{"product.google_pixel_code", "invalid", "control characters"}}},
		{"meta pixel of 255", func(in *ProductInput) { in.MetaPixelCode = pointerTo(long(255)) }, nil},
		{"meta pixel of 256", func(in *ProductInput) { in.MetaPixelCode = pointerTo(long(256)) }, []fault{{"product.meta_pixel_code", "too_long", "at most 255"}}},
		{"meta pixel with NUL", func(in *ProductInput) { in.MetaPixelCode = pointerTo("123\x00") }, []fault{{"product.meta_pixel_code", "invalid", "control characters"}}},

		{"disabled", func(in *ProductInput) { in.Availability = pointerTo("disabled") }, nil},
		{"availability in capitals", func(in *ProductInput) { in.Availability = pointerTo("Enabled") }, []fault{{"product.availability", "invalid", "enabled or disabled"}}},
		{"empty availability", func(in *ProductInput) { in.Availability = pointerTo("") }, []fault{{"product.availability", "invalid", "enabled or disabled"}}},

		{"unknown access period", func(in *ProductInput) { in.AccessPeriod = pointerTo("forever") }, []fault{{"product.access_period", "invalid", "lifetime, days or period"}}},
		{"days without a duration", func(in *ProductInput) { in.AccessPeriod = pointerTo(AccessDays) }, []fault{{"product.duration_in_days", "required", "at least 1 when access_period is days"}}},
		{"days for 0 days", func(in *ProductInput) { in.AccessPeriod, in.DurationInDays = pointerTo(AccessDays), pointerTo(0) }, []fault{{"product.duration_in_days", "required", "at least 1"}}},
		{"days for 1 day", func(in *ProductInput) { in.AccessPeriod, in.DurationInDays = pointerTo(AccessDays), pointerTo(1) }, nil},
		{"days for -1 days", func(in *ProductInput) { in.AccessPeriod, in.DurationInDays = pointerTo(AccessDays), pointerTo(-1) }, []fault{
			{"product.duration_in_days", "too_small", "must not be negative"}, {"product.duration_in_days", "required", "at least 1"}}},
		{"lifetime with 0 days", func(in *ProductInput) { in.DurationInDays = pointerTo(0) }, nil},
		{"lifetime with negative days", func(in *ProductInput) { in.DurationInDays = pointerTo(-1) }, []fault{{"product.duration_in_days", "too_small", "must not be negative"}}},
		{"hours of 0", func(in *ProductInput) { in.DurationInHours = pointerTo(0) }, nil},
		{"negative hours", func(in *ProductInput) { in.DurationInHours = pointerTo(-1) }, []fault{{"product.duration_in_hours", "too_small", "must not be negative"}}},

		{"period without dates", func(in *ProductInput) { in.AccessPeriod = pointerTo(AccessPeriod) }, []fault{
			{"product.start_date", "required", "when access_period is period"}, {"product.end_date", "required", "when access_period is period"}}},
		{"period without an end", func(in *ProductInput) {
			in.AccessPeriod, in.StartDate = pointerTo(AccessPeriod), pointerTo("2025-03-01")
		}, []fault{
			{"product.end_date", "required", "when access_period is period"}}},
		{"period without a start", func(in *ProductInput) { in.AccessPeriod, in.EndDate = pointerTo(AccessPeriod), pointerTo("2025-03-01") }, []fault{
			{"product.start_date", "required", "when access_period is period"}}},
		{"period of one day", func(in *ProductInput) {
			in.AccessPeriod, in.StartDate, in.EndDate = pointerTo(AccessPeriod), pointerTo("2025-03-01"), pointerTo("2025-03-01")
		}, nil},
		{"period ending the day before it starts", func(in *ProductInput) {
			in.AccessPeriod, in.StartDate, in.EndDate = pointerTo(AccessPeriod), pointerTo("2025-03-01"), pointerTo("2025-02-28")
		}, []fault{{"product.end_date", "invalid", "not be before start_date"}}},
		{"period from a leap day to a year's end", func(in *ProductInput) {
			in.AccessPeriod, in.StartDate, in.EndDate = pointerTo(AccessPeriod), pointerTo("2024-02-29"), pointerTo("2024-12-31")
		}, nil},
		{"29 February of a common year", func(in *ProductInput) {
			in.AccessPeriod, in.StartDate, in.EndDate = pointerTo(AccessPeriod), pointerTo("2025-02-29"), pointerTo("2025-12-31")
		}, []fault{{"product.start_date", "invalid", "YYYY-MM-DD"}}},
		{"31 April", func(in *ProductInput) {
			in.AccessPeriod, in.StartDate, in.EndDate = pointerTo(AccessPeriod), pointerTo("2025-01-31"), pointerTo("2025-04-31")
		}, []fault{{"product.end_date", "invalid", "YYYY-MM-DD"}}},
		{"30 April", func(in *ProductInput) {
			in.AccessPeriod, in.StartDate, in.EndDate = pointerTo(AccessPeriod), pointerTo("2025-01-31"), pointerTo("2025-04-30")
		}, nil},
		{"month 13", func(in *ProductInput) { in.StartDate = pointerTo("2025-13-01") }, []fault{{"product.start_date", "invalid", "YYYY-MM-DD"}}},
		{"date without leading zeros", func(in *ProductInput) { in.StartDate = pointerTo("2025-3-1") }, []fault{{"product.start_date", "invalid", "YYYY-MM-DD"}}},
		{"Brazilian date", func(in *ProductInput) { in.EndDate = pointerTo("01/03/2025") }, []fault{{"product.end_date", "invalid", "YYYY-MM-DD"}}},
		{"timestamp for a date", func(in *ProductInput) { in.EndDate = pointerTo("2025-03-01T00:00:00Z") }, []fault{{"product.end_date", "invalid", "YYYY-MM-DD"}}},
		{"dates in reverse on a lifetime product", func(in *ProductInput) {
			in.StartDate, in.EndDate = pointerTo("2025-03-02"), pointerTo("2025-03-01")
		}, []fault{{"product.end_date", "invalid", "not be before start_date"}}},
		{"period with both dates malformed", func(in *ProductInput) {
			in.AccessPeriod, in.StartDate, in.EndDate = pointerTo(AccessPeriod), pointerTo("x"), pointerTo("y")
		}, []fault{{"product.start_date", "invalid", "YYYY-MM-DD"}, {"product.end_date", "invalid", "YYYY-MM-DD"}}},

		{"https banner", func(in *ProductInput) { in.BannerURL = pointerTo("https://cdn.example.com/b.png") }, nil},
		{"http banner", func(in *ProductInput) { in.BannerURL = pointerTo("http://cdn.example.com/b.png") }, nil},
		// Published to every payer on the offer page.
		{"banner with a password", func(in *ProductInput) { in.BannerURL = pointerTo("https://u:secret@cdn.example.com/b.png") }, []fault{{"product.banner_url", "invalid", "user or password"}}},
		{"banner of 2048", func(in *ProductInput) { in.BannerURL = pointerTo(bannerOf(2048)) }, nil},
		{"banner of 2049", func(in *ProductInput) { in.BannerURL = pointerTo(bannerOf(2049)) }, []fault{{"product.banner_url", "too_long", "at most 2048"}}},
		{"ftp banner", func(in *ProductInput) { in.BannerURL = pointerTo("ftp://cdn.example.com/b.png") }, []fault{{"product.banner_url", "invalid", "absolute http(s) URL"}}},
		{"relative banner", func(in *ProductInput) { in.BannerURL = pointerTo("/b.png") }, []fault{{"product.banner_url", "invalid", "absolute http(s) URL"}}},
		{"banner without a host", func(in *ProductInput) { in.BannerURL = pointerTo("https:///b.png") }, []fault{{"product.banner_url", "invalid", "absolute http(s) URL"}}},
		{"banner with a port but no host", func(in *ProductInput) { in.BannerURL = pointerTo("https://:443/b.png") }, []fault{{"product.banner_url", "invalid", "absolute http(s) URL"}}},
		{"banner that does not parse", func(in *ProductInput) { in.BannerURL = pointerTo("https://cdn.example.com/%zz") }, []fault{{"product.banner_url", "invalid", "absolute http(s) URL"}}},
		{"banner with a tab", func(in *ProductInput) { in.BannerURL = pointerTo("https://cdn.example.com/b\t.png") }, []fault{{"product.banner_url", "invalid", "absolute http(s) URL"}}},
		{"empty banner", func(in *ProductInput) { in.BannerURL = pointerTo("") }, []fault{{"product.banner_url", "invalid", "absolute http(s) URL"}}},

		{"metadata object", func(in *ProductInput) {
			in.Metadata = raw(`{"turma":"2025.1","vagas":30,"tags":["go",{"nível":"básico"}]}`)
		}, nil},
		{"empty metadata object", func(in *ProductInput) { in.Metadata = raw(`{}`) }, nil},
		{"metadata with tab and line breaks", func(in *ProductInput) { in.Metadata = raw(`{"obs":"a\tb\r\nc"}`) }, nil},
		{"metadata array", func(in *ProductInput) { in.Metadata = raw(`[]`) }, []fault{{"product.metadata", "invalid", "JSON object"}}},
		{"metadata null", func(in *ProductInput) { in.Metadata = raw(`null`) }, []fault{{"product.metadata", "invalid", "JSON object"}}},
		{"metadata string", func(in *ProductInput) { in.Metadata = raw(`"x"`) }, []fault{{"product.metadata", "invalid", "JSON object"}}},
		{"metadata cut short", func(in *ProductInput) { in.Metadata = raw(`{"a":`) }, []fault{{"product.metadata", "invalid", "JSON object"}}},
		{"metadata number", func(in *ProductInput) { in.Metadata = raw(`5`) }, []fault{{"product.metadata", "invalid", "JSON object"}}},
		{"metadata number past a double", func(in *ProductInput) { in.Metadata = raw(`{"a":[1,1e400]}`) }, []fault{{"product.metadata", "invalid", "double's range"}}},
		{"metadata integer past an int64", func(in *ProductInput) { in.Metadata = raw(`{"a":12345678901234567890123}`) }, nil},
		{"metadata of 16 KiB", func(in *ProductInput) { in.Metadata = metadataOf(16 << 10) }, nil},
		{"metadata past 16 KiB", func(in *ProductInput) { in.Metadata = metadataOf(16<<10 + 1) }, []fault{{"product.metadata", "too_large", "16 KiB"}}},
		{"metadata string with NUL", func(in *ProductInput) { in.Metadata = raw(`{"a":"x\u0000"}`) }, []fault{{"product.metadata", "invalid", "control characters"}}},
		{"metadata key with a control", func(in *ProductInput) { in.Metadata = raw(`{"a\u0001":1}`) }, []fault{{"product.metadata", "invalid", "control characters"}}},
		{"metadata control deep in an array", func(in *ProductInput) { in.Metadata = raw(`{"a":[1,{"b":["ok","\u001b"]}]}`) }, []fault{{"product.metadata", "invalid", "control characters"}}},
		{"metadata control in a nested key", func(in *ProductInput) { in.Metadata = raw(`{"a":{"\u007f":true}}`) }, []fault{{"product.metadata", "invalid", "control characters"}}},

		{"every fault at once, listed in order", func(in *ProductInput) {
			in.Name, in.FullAmountCents, in.Kind, in.Availability, in.AccessPeriod = pointerTo(""), pointerTo(int64(0)), pointerTo("x"), pointerTo("x"), pointerTo("x")
		}, []fault{
			{"product.kind", "invalid", "must be one of"}, {"product.name", "required", "is required"},
			{"product.full_amount_cents", "too_small", "at least 1"}, {"product.availability", "invalid", "enabled or disabled"},
			{"product.access_period", "invalid", "lifetime, days or period"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			kinds, shifts := productReferences()
			in := valid
			tt.change(&in)
			checkFaults(t, newProduct().Apply(in, kinds, shifts), tt.want)
		})
	}
}

func TestProductApplyCreate(t *testing.T) {
	t.Parallel()
	kinds, shifts := productReferences()
	p := newProduct()
	err := p.Apply(ProductInput{
		Name: pointerTo("  Mentoria  "), FullAmountCents: pointerTo(int64(99900)), Kind: pointerTo("event"), Shift: pointerTo("morning"),
		AccessPeriod: pointerTo(AccessDays), DurationInDays: pointerTo(30), DurationInHours: pointerTo(12),
		GooglePixelCode: pointerTo("G-1"), MetaPixelCode: pointerTo("M-1"), Availability: pointerTo("disabled"),
	}, kinds, shifts)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "Mentoria" || p.FullAmountCents != 99900 || p.Kind.ID != "k2" || p.Shift.ID != "s2" ||
		p.AccessPeriod != AccessDays || *p.DurationInDays != 30 || *p.DurationInHours != 12 ||
		p.GooglePixelCode != "G-1" || p.MetaPixelCode != "M-1" || p.Availability != "disabled" {
		t.Errorf("applied product %+v", p)
	}
	// Metadata left out is stored as an empty object, not as SQL NULL or "".
	if string(p.Metadata) != "{}" {
		t.Errorf("metadata %q, want {}", p.Metadata)
	}
	// An unknown kind is refused, and the product does not keep the old one.
	q := newProduct()
	if err := q.Apply(ProductInput{Name: pointerTo("X"), FullAmountCents: pointerTo(int64(1)), Kind: pointerTo("podcast")}, kinds, shifts); err == nil || q.Kind.ID != "" {
		t.Errorf("unknown kind: error %v, kind %+v", err, q.Kind)
	}
}

func TestProductApplyPatch(t *testing.T) {
	t.Parallel()
	kinds, shifts := productReferences()
	stored := func() *Product {
		p := newProduct()
		p.ID, p.Name, p.FullAmountCents = "p1", "Curso de Go", 150000
		p.Description, p.BannerURL = pointerTo("Aulas"), pointerTo("https://cdn.example.com/b.png")
		p.AccessPeriod, p.StartDate, p.EndDate = AccessPeriod, pointerTo("2025-03-01"), pointerTo("2025-06-30")
		p.DurationInHours, p.GooglePixelCode, p.MetaPixelCode = pointerTo(40), "G-1", "M-1"
		p.Metadata = json.RawMessage(`{"turma":"A"}`)
		return p
	}
	t.Run("an empty patch changes nothing", func(t *testing.T) {
		t.Parallel()
		p := stored()
		if err := p.Apply(ProductInput{}, kinds, shifts); err != nil {
			t.Fatal(err)
		}
		if want := stored(); !sameProduct(p, want) {
			t.Errorf("patched %+v, want %+v", p, want)
		}
	})
	t.Run("one field changes only that field", func(t *testing.T) {
		t.Parallel()
		p := stored()
		if err := p.Apply(ProductInput{Name: pointerTo("Curso de SQL")}, kinds, shifts); err != nil {
			t.Fatal(err)
		}
		want := stored()
		want.Name = "Curso de SQL"
		if !sameProduct(p, want) {
			t.Errorf("patched %+v, want %+v", p, want)
		}
	})
	t.Run("the stored product is validated with the patch", func(t *testing.T) {
		t.Parallel()
		p := stored()
		// An end before the stored start is refused though the start is not sent.
		checkFaults(t, p.Apply(ProductInput{EndDate: pointerTo("2025-02-28")}, kinds, shifts), []fault{
			{"product.end_date", "invalid", "not be before start_date"}})
	})
	t.Run("stored text a later rule refuses does not refuse a patch of another field", func(t *testing.T) {
		t.Parallel()
		// A name and a pixel code stored before single-line text refused
		// the line separator: disabling the product was refused on
		// product.name, a field the patch did not send.
		p := stored()
		p.Name, p.MetaPixelCode = "Curso de Go\u2028Turma A", "M-1\u2029"
		if err := p.Apply(ProductInput{Availability: pointerTo("disabled")}, kinds, shifts); err != nil {
			t.Fatal(err)
		}
		// Sent again, the name is checked as any new one is.
		checkFaults(t, p.Apply(ProductInput{Name: pointerTo(p.Name)}, kinds, shifts), []fault{
			{"product.name", "invalid", "control characters"}})
	})
	t.Run("switching to days needs a duration the product lacks", func(t *testing.T) {
		t.Parallel()
		p := stored()
		checkFaults(t, p.Apply(ProductInput{AccessPeriod: pointerTo(AccessDays)}, kinds, shifts), []fault{
			{"product.duration_in_days", "required", "at least 1 when access_period is days"}})
	})
	t.Run("switching to lifetime keeps the stored dates", func(t *testing.T) {
		t.Parallel()
		p := stored()
		if err := p.Apply(ProductInput{AccessPeriod: pointerTo(AccessLifetime)}, kinds, shifts); err != nil {
			t.Fatal(err)
		}
		if p.StartDate == nil || p.EndDate == nil || p.FormattedAccessPeriod() != "Vitalício" {
			t.Errorf("dates %v %v, rendered %q", p.StartDate, p.EndDate, p.FormattedAccessPeriod())
		}
	})
	t.Run("new metadata replaces the stored object", func(t *testing.T) {
		t.Parallel()
		p := stored()
		m := json.RawMessage(`{"turma":"B","vagas":10}`)
		if err := p.Apply(ProductInput{Metadata: &m}, kinds, shifts); err != nil {
			t.Fatal(err)
		}
		if string(p.Metadata) != `{"turma":"B","vagas":10}` {
			t.Errorf("metadata %s", p.Metadata)
		}
	})
}

// sameProduct compares the fields Apply may touch, following pointers.
func sameProduct(a, b *Product) bool {
	eq := func(x, y *string) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	eqInt := func(x, y *int) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.ID == b.ID && a.Name == b.Name && a.FullAmountCents == b.FullAmountCents && eq(a.Description, b.Description) &&
		a.Kind == b.Kind && a.Shift == b.Shift && a.AccessPeriod == b.AccessPeriod &&
		eqInt(a.DurationInDays, b.DurationInDays) && eqInt(a.DurationInHours, b.DurationInHours) &&
		eq(a.StartDate, b.StartDate) && eq(a.EndDate, b.EndDate) && eq(a.BannerURL, b.BannerURL) &&
		a.GooglePixelCode == b.GooglePixelCode && a.MetaPixelCode == b.MetaPixelCode &&
		slices.Equal(a.Metadata, b.Metadata) && a.Availability == b.Availability
}

func TestProductFormattedAccessPeriod(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		period     string
		days       *int
		start, end *string
		want       string
	}{
		{"lifetime", AccessLifetime, nil, nil, nil, "Vitalício"},
		{"lifetime ignores days and dates", AccessLifetime, pointerTo(30), pointerTo("2025-03-01"), pointerTo("2025-03-31"), "Vitalício"},
		{"one day is singular", AccessDays, pointerTo(1), nil, nil, "1 dia"},
		{"two days are plural", AccessDays, pointerTo(2), nil, nil, "2 dias"},
		{"a year of days", AccessDays, pointerTo(365), nil, nil, "365 dias"},
		{"days without a duration", AccessDays, nil, nil, nil, "Vitalício"},
		{"a period, day before month", AccessPeriod, nil, pointerTo("2025-03-01"), pointerTo("2025-12-31"), "01/03/2025 a 31/12/2025"},
		{"a period from a leap day", AccessPeriod, nil, pointerTo("2024-02-29"), pointerTo("2024-03-31"), "29/02/2024 a 31/03/2024"},
		{"a period without its end", AccessPeriod, nil, pointerTo("2025-03-01"), nil, "Vitalício"},
		{"a period without its start", AccessPeriod, nil, nil, pointerTo("2025-03-01"), "Vitalício"},
		{"a malformed date is shown as stored", AccessPeriod, nil, pointerTo("2025-02-30"), pointerTo("2025-03-01"), "2025-02-30 a 01/03/2025"},
		{"an unknown period", "forever", pointerTo(3), nil, nil, "Vitalício"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := Product{AccessPeriod: tt.period, DurationInDays: tt.days, StartDate: tt.start, EndDate: tt.end}
			if got := p.FormattedAccessPeriod(); got != tt.want {
				t.Errorf("FormattedAccessPeriod() = %q, want %q", got, tt.want)
			}
		})
	}
}
