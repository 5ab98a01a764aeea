package parcela

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"time"
)

// Product is something a company sells: a course, an event, a mentorship…
type Product struct {
	ID              string
	CompanyID       string
	Environment     Environment
	Name            string
	Description     *string
	Kind            Named
	Shift           Named
	AccessPeriod    string // lifetime, days or period
	DurationInDays  *int
	DurationInHours *int
	StartDate       *string // YYYY-MM-DD
	EndDate         *string
	FullAmountCents int64
	BannerURL       *string
	GooglePixelCode string
	MetaPixelCode   string
	Metadata        json.RawMessage
	Availability    string
	CreatedAt       time.Time
	UpdatedAt       time.Time
	Company         *Company
	Version         int64 // moves with every PATCH
}

// Named is a reference-table row: a product kind or shift.
type Named struct {
	ID        string
	Name      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Access periods of a product.
const (
	AccessLifetime = "lifetime"
	AccessDays     = "days"
	AccessPeriod   = "period"
)

// ProductInput is a create or patch request; nil fields are not set.
type ProductInput struct {
	Name            *string          `json:"name"`
	FullAmountCents *int64           `json:"full_amount_cents"`
	Description     *string          `json:"description"`
	Kind            *string          `json:"kind"`
	Shift           *string          `json:"shift"`
	AccessPeriod    *string          `json:"access_period"`
	DurationInDays  *int             `json:"duration_in_days"`
	DurationInHours *int             `json:"duration_in_hours"`
	StartDate       *string          `json:"start_date"`
	EndDate         *string          `json:"end_date"`
	BannerURL       *string          `json:"banner_url"`
	GooglePixelCode *string          `json:"google_pixel_code"`
	MetaPixelCode   *string          `json:"meta_pixel_code"`
	Metadata        *json.RawMessage `json:"metadata"`
	Availability    *string          `json:"availability"`
	// Clear* remove the banner and the dates, sent as null in a PATCH
	// (an absent field keeps its value).
	ClearBannerURL, ClearStartDate, ClearEndDate bool `json:"-"`
}

// Apply copies the set fields of in onto p and validates the result. On
// create p starts from NewProduct; on patch from the stored product.
func (p *Product) Apply(in ProductInput, kinds, shifts map[string]Named) error {
	var v Validation
	if in.Name != nil {
		p.Name = TrimText(*in.Name)
	}
	if in.FullAmountCents != nil {
		p.FullAmountCents = *in.FullAmountCents
	}
	if in.Description != nil {
		p.Description = in.Description
	}
	if in.Kind != nil {
		k, ok := kinds[*in.Kind]
		if !ok {
			v.Add("product.kind", "invalid", "must be one of "+namesOf(kinds))
		}
		p.Kind = k
	}
	if in.Shift != nil {
		s, ok := shifts[*in.Shift]
		if !ok {
			v.Add("product.shift", "invalid", "must be one of "+namesOf(shifts))
		}
		p.Shift = s
	}
	if in.AccessPeriod != nil {
		p.AccessPeriod = *in.AccessPeriod
	}
	if in.DurationInDays != nil {
		p.DurationInDays = in.DurationInDays
	}
	if in.DurationInHours != nil {
		p.DurationInHours = in.DurationInHours
	}
	if in.StartDate != nil || in.ClearStartDate {
		p.StartDate = in.StartDate
	}
	if in.EndDate != nil || in.ClearEndDate {
		p.EndDate = in.EndDate
	}
	if in.BannerURL != nil || in.ClearBannerURL {
		p.BannerURL = in.BannerURL
	}
	if in.GooglePixelCode != nil {
		p.GooglePixelCode = *in.GooglePixelCode
	}
	if in.MetaPixelCode != nil {
		p.MetaPixelCode = *in.MetaPixelCode
	}
	if in.Metadata != nil {
		p.Metadata = *in.Metadata
	}
	if in.Availability != nil {
		p.Availability = *in.Availability
	}
	p.validate(&v, in)
	return v.Err()
}

func namesOf(m map[string]Named) string {
	var names []string
	for _, k := range []string{"course", "event", "mentorship", "ebook", "workshop", "other", "morning", "afternoon", "evening", "online"} {
		if _, ok := m[k]; ok {
			names = append(names, k)
		}
	}
	return strings.Join(names, ", ")
}

// validate checks p as in leaves it. The characters of a name or pixel
// code are checked as sent: one stored before a rule refused them (the
// line separators, since) is the product's as it was taken, and checked
// again it refused a patch of any other field on a field not sent.
func (p *Product) validate(v *Validation, in ProductInput) {
	switch {
	case p.Name == "":
		v.Add("product.name", "required", "is required")
	case TooLong(p.Name, 255):
		v.Add("product.name", "too_long", "must be at most 255 characters")
	case in.Name != nil:
		checkText(v, "product.name", p.Name, SingleLine)
	}
	checkAmount(v, "product.full_amount_cents", p.FullAmountCents, 1)
	if p.Description != nil {
		if TooLong(*p.Description, 10000) {
			v.Add("product.description", "too_long", "must be at most 10000 characters")
		} else {
			checkText(v, "product.description", *p.Description, FreeText)
		}
	}
	for _, pixel := range []struct {
		field, code string
		sent        bool
	}{
		{"product.google_pixel_code", p.GooglePixelCode, in.GooglePixelCode != nil},
		{"product.meta_pixel_code", p.MetaPixelCode, in.MetaPixelCode != nil},
	} {
		if TooLong(pixel.code, 255) {
			v.Add(pixel.field, "too_long", "must be at most 255 characters")
		} else if pixel.sent {
			checkText(v, pixel.field, pixel.code, SingleLine)
		}
	}
	if p.Availability != "enabled" && p.Availability != "disabled" {
		v.Add("product.availability", "invalid", "must be enabled or disabled")
	}
	checkCount(v, "product.duration_in_days", p.DurationInDays, 0, MaxDurationDays)
	checkCount(v, "product.duration_in_hours", p.DurationInHours, 0, MaxDurationHours)
	start, startOK := p.date(v, "product.start_date", p.StartDate)
	end, endOK := p.date(v, "product.end_date", p.EndDate)
	switch p.AccessPeriod {
	case AccessLifetime:
	case AccessDays:
		if p.DurationInDays == nil || *p.DurationInDays < 1 {
			v.Add("product.duration_in_days", "required", "must be at least 1 when access_period is days")
		}
	case AccessPeriod:
		if p.StartDate == nil {
			v.Add("product.start_date", "required", "is required when access_period is period")
		}
		if p.EndDate == nil {
			v.Add("product.end_date", "required", "is required when access_period is period")
		}
	default:
		v.Add("product.access_period", "invalid", "must be lifetime, days or period")
	}
	if startOK && endOK && end.Before(start) {
		v.Add("product.end_date", "invalid", "must not be before start_date")
	}
	if p.BannerURL != nil {
		checkImageURL(v, "product.banner_url", *p.BannerURL)
	}
	if len(p.Metadata) == 0 {
		p.Metadata = json.RawMessage("{}")
	} else {
		var m map[string]any
		var number *json.UnmarshalTypeError
		if err := json.Unmarshal(p.Metadata, &m); errors.As(err, &number) && number.Type != nil && number.Type.Kind() == reflect.Float64 {
			// Valid JSON, but a client reading numbers as doubles (this
			// API's own Go client, a browser) could not read it back.
			v.Add("product.metadata", "invalid", "must hold numbers within a double's range (about ±1.8e308)")
		} else if err != nil || m == nil {
			v.Add("product.metadata", "invalid", "must be a JSON object")
		} else if len(p.Metadata) > 16<<10 {
			v.Add("product.metadata", "too_large", "must be at most 16 KiB")
		} else if !validJSONText(m) {
			v.Add("product.metadata", "invalid", "must not contain control characters other than tab and line breaks in its keys and strings")
		}
	}
}

// validJSONText reports whether every key and string in a decoded JSON
// value is free text (ValidText).
func validJSONText(x any) bool {
	switch x := x.(type) {
	case string:
		return ValidText(x, FreeText)
	case map[string]any:
		for k, e := range x {
			if !ValidText(k, FreeText) || !validJSONText(e) {
				return false
			}
		}
	case []any:
		for _, e := range x {
			if !validJSONText(e) {
				return false
			}
		}
	}
	return true
}

func (p *Product) date(v *Validation, field string, s *string) (time.Time, bool) {
	if s == nil {
		return time.Time{}, false
	}
	t, err := time.Parse(time.DateOnly, *s)
	if err != nil {
		v.Add(field, "invalid", "must be a date as YYYY-MM-DD")
		return t, false
	}
	return t, true
}

// FormattedAccessPeriod renders the access period for people, in Portuguese.
func (p *Product) FormattedAccessPeriod() string {
	switch p.AccessPeriod {
	case AccessDays:
		if p.DurationInDays != nil && *p.DurationInDays == 1 {
			return "1 dia"
		}
		if p.DurationInDays != nil {
			return fmt.Sprintf("%d dias", *p.DurationInDays)
		}
	case AccessPeriod:
		if p.StartDate != nil && p.EndDate != nil {
			return brDate(*p.StartDate) + " a " + brDate(*p.EndDate)
		}
	}
	return "Vitalício"
}

func brDate(iso string) string {
	t, err := time.Parse(time.DateOnly, iso)
	if err != nil {
		return iso
	}
	return t.Format("02/01/2006")
}

// The largest counts a product or an offer takes: a century of access, a
// million hours of workload, a million seats. They also keep every count
// inside the 32-bit columns that store them.
const (
	MaxDurationDays  = 36_600
	MaxDurationHours = 1_000_000
	MaxSeats         = 1_000_000
)

// checkCount adds a field error unless *n (when sent) is in [min, max].
func checkCount(v *Validation, field string, n *int, min, max int) {
	switch {
	case n == nil:
	case *n < min && min == 0:
		v.Add(field, "too_small", "must not be negative")
	case *n < min:
		v.Add(field, "too_small", fmt.Sprintf("must be at least %d", min))
	case *n > max:
		v.Add(field, "too_large", fmt.Sprintf("must be at most %d", max))
	}
}

// checkImageURL checks s, the address of an image shown to payers (a
// product's banner, a company's logo): an absolute http(s) URL of
// single-line text, at most 2048 characters, without a user or password,
// which the pages would publish to every payer.
func checkImageURL(v *Validation, field, s string) {
	if u, err := url.Parse(s); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "" || !ValidText(s, SingleLine) {
		v.Add(field, "invalid", "must be an absolute http(s) URL")
	} else if u.User != nil {
		v.Add(field, "invalid", "must not hold a user or password")
	} else if TooLong(s, 2048) {
		v.Add(field, "too_long", "must be at most 2048 characters")
	}
}
