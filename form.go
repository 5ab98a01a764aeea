package parcela

import (
	"encoding/json"
	"time"
)

// The forms below are the API's representations of each resource, exactly
// as the spec names and nests them. They live in the domain because an
// event's payload is the entity as its GET returns it at the moment of the
// event, rendered by the use case that decides the change.

// Timestamp renders as RFC 3339 with milliseconds in São Paulo time.
type Timestamp time.Time

// TimestampLayout is how every timestamp is written.
const TimestampLayout = "2006-01-02T15:04:05.000Z07:00"

// MarshalText writes the São Paulo time with milliseconds. As a text
// marshaler it is quoted by encoding/json, which re-scans the output of a
// MarshalJSON (a tenth of a bill listing's encoding time).
func (t Timestamp) MarshalText() ([]byte, error) {
	return time.Time(t).In(SaoPaulo).AppendFormat(make([]byte, 0, 29), TimestampLayout), nil
}

func ts(t time.Time) Timestamp { return Timestamp(t) }

func tsPtr(t *time.Time) *Timestamp {
	if t == nil {
		return nil
	}
	v := Timestamp(*t)
	return &v
}

// Links are the public addresses that forms point to.
type Links struct {
	PublicURL string // e.g. https://api.example.com or the sandbox's
}

// StateForm is spec 2.2 city.state.
type StateForm struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Acronym   string    `json:"acronym"`
	CreatedAt Timestamp `json:"created_at"`
	UpdatedAt Timestamp `json:"updated_at"`
}

// CityForm is spec 2.2 city.
type CityForm struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	IBGECode  string    `json:"ibge_code"`
	CreatedAt Timestamp `json:"created_at"`
	UpdatedAt Timestamp `json:"updated_at"`
	State     StateForm `json:"state"`
}

// AddressForm is spec 2.2.
type AddressForm struct {
	ID           string    `json:"id"`
	Zipcode      string    `json:"zipcode"`
	Neighborhood string    `json:"neighborhood"`
	Street       string    `json:"street"`
	Number       string    `json:"number"`
	Complement   *string   `json:"complement"`
	CreatedAt    Timestamp `json:"created_at"`
	UpdatedAt    Timestamp `json:"updated_at"`
	City         CityForm  `json:"city"`
}

// NewAddressForm renders an address.
func NewAddressForm(a *Address) *AddressForm {
	if a == nil {
		return nil
	}
	s := a.City.State
	return &AddressForm{
		ID: a.ID, Zipcode: a.Zipcode, Neighborhood: a.Neighborhood, Street: a.Street, Number: a.Number, Complement: a.Complement,
		CreatedAt: ts(a.CreatedAt), UpdatedAt: ts(a.UpdatedAt),
		City: CityForm{ID: a.City.ID, Name: a.City.Name, IBGECode: a.City.IBGECode, CreatedAt: ts(a.City.CreatedAt), UpdatedAt: ts(a.City.UpdatedAt),
			State: StateForm{ID: s.ID, Name: s.Name, Acronym: s.Acronym, CreatedAt: ts(s.CreatedAt), UpdatedAt: ts(s.UpdatedAt)}},
	}
}

// CompanyForm is spec 2.4 Company.
type CompanyForm struct {
	ID                  string       `json:"id"`
	Document            string       `json:"document"`
	Name                string       `json:"name"`
	Slug                string       `json:"slug"`
	CreatedAt           Timestamp    `json:"created_at"`
	UpdatedAt           Timestamp    `json:"updated_at"`
	ThemeCustomizations ThemeForm    `json:"theme_customizations"`
	Logo                string       `json:"logo"`
	Email               *string      `json:"email"`
	Phone               *string      `json:"phone"`
	Address             *AddressForm `json:"address"`
}

// ThemeForm is a company's checkout theme.
type ThemeForm struct {
	Dark    bool   `json:"dark"`
	Palette string `json:"palette"`
}

// NewCompanyForm renders a company.
func NewCompanyForm(c *Company) CompanyForm {
	return CompanyForm{
		ID: c.ID, Document: c.Document, Name: c.Name, Slug: c.Slug, CreatedAt: ts(c.CreatedAt), UpdatedAt: ts(c.UpdatedAt),
		ThemeCustomizations: ThemeForm{Dark: c.Dark, Palette: c.Palette}, Logo: c.Logo, Email: c.Email, Phone: c.Phone,
		Address: NewAddressForm(c.Address),
	}
}

// IDName is {id, name}.
type IDName struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// KindForm is the order form's product kind.
type KindForm struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt Timestamp `json:"created_at"`
	UpdatedAt Timestamp `json:"updated_at"`
}

// ProductCreateForm is spec 2.4 create-response form.
type ProductCreateForm struct {
	AccessPeriod          string          `json:"access_period"`
	Availability          string          `json:"availability"`
	BannerURL             *string         `json:"banner_url"`
	CompanyID             string          `json:"company_id"`
	CreatedAt             Timestamp       `json:"created_at"`
	Description           string          `json:"description"`
	DurationInDays        int             `json:"duration_in_days"`
	DurationInHours       int             `json:"duration_in_hours"`
	EndDate               *string         `json:"end_date"`
	FormattedAccessPeriod string          `json:"formatted_access_period"`
	FullAmountCents       int64           `json:"full_amount_cents"`
	FullAmountCurrency    string          `json:"full_amount_currency"`
	GooglePixelCode       string          `json:"google_pixel_code"`
	ID                    string          `json:"id"`
	Kind                  IDName          `json:"kind"`
	MetaPixelCode         string          `json:"meta_pixel_code"`
	Metadata              json.RawMessage `json:"metadata"`
	Name                  string          `json:"name"`
	Shift                 IDName          `json:"shift"`
	StartDate             *string         `json:"start_date"`
	UpdatedAt             Timestamp       `json:"updated_at"`
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// NewProductCreateForm renders a product in create-response form.
func NewProductCreateForm(p *Product) ProductCreateForm {
	return ProductCreateForm{
		AccessPeriod: p.AccessPeriod, Availability: p.Availability, BannerURL: p.BannerURL, CompanyID: p.CompanyID,
		CreatedAt: ts(p.CreatedAt), Description: deref(p.Description), DurationInDays: deref(p.DurationInDays),
		DurationInHours: deref(p.DurationInHours), EndDate: p.EndDate, FormattedAccessPeriod: p.FormattedAccessPeriod(),
		FullAmountCents: p.FullAmountCents, FullAmountCurrency: "BRL", GooglePixelCode: p.GooglePixelCode, ID: p.ID,
		Kind: IDName{p.Kind.ID, p.Kind.Name}, MetaPixelCode: p.MetaPixelCode, Metadata: p.Metadata, Name: p.Name,
		Shift: IDName{p.Shift.ID, p.Shift.Name}, StartDate: p.StartDate, UpdatedAt: ts(p.UpdatedAt),
	}
}

// ProductOrderForm is spec 2.4 order form.
type ProductOrderForm struct {
	ID                    string      `json:"id"`
	Name                  string      `json:"name"`
	FullAmountCents       int64       `json:"full_amount_cents"`
	CreatedAt             Timestamp   `json:"created_at"`
	UpdatedAt             Timestamp   `json:"updated_at"`
	Description           *string     `json:"description"`
	DurationInHours       *int        `json:"duration_in_hours"`
	AccessPeriod          string      `json:"access_period"`
	DurationInDays        *int        `json:"duration_in_days"`
	StartDate             *string     `json:"start_date"`
	EndDate               *string     `json:"end_date"`
	FormattedAccessPeriod string      `json:"formatted_access_period"`
	Company               CompanyForm `json:"company"`
	Kind                  KindForm    `json:"kind"`
}

// NewProductOrderForm renders a product (with its company) in order form.
func NewProductOrderForm(p *Product) ProductOrderForm {
	return ProductOrderForm{
		ID: p.ID, Name: p.Name, FullAmountCents: p.FullAmountCents, CreatedAt: ts(p.CreatedAt), UpdatedAt: ts(p.UpdatedAt),
		Description: p.Description, DurationInHours: p.DurationInHours, AccessPeriod: p.AccessPeriod, DurationInDays: p.DurationInDays,
		StartDate: p.StartDate, EndDate: p.EndDate, FormattedAccessPeriod: p.FormattedAccessPeriod(), Company: NewCompanyForm(p.Company),
		Kind: KindForm{ID: p.Kind.ID, Name: p.Kind.Name, CreatedAt: ts(p.Kind.CreatedAt), UpdatedAt: ts(p.Kind.UpdatedAt)},
	}
}
