package parcela

import (
	"slices"
	"testing"
)

func TestCompanyValidate(t *testing.T) {
	t.Parallel()
	str := func(s string) *string { return &s }
	tests := []struct {
		name   string
		change func(*Company)
		fields []string // the fields at fault, nil when valid
	}{
		{"defaults", func(*Company) {}, nil},
		{"formatted CNPJ", func(c *Company) { c.Document = "11.222.333/0001-81" }, nil},
		{"alphanumeric CNPJ", func(c *Company) { c.Document = "12.ABC.345/01DE-35" }, nil},
		{"alphanumeric CNPJ in lower case", func(c *Company) { c.Document = "12.abc.345/01de-35" }, nil},
		{"CPF of a sole seller", func(c *Company) { c.Document = "529.982.247-25" }, nil},
		{"CNPJ with a wrong check digit", func(c *Company) { c.Document = "11222333000182" }, []string{"document"}},
		{"CPF with a wrong check digit", func(c *Company) { c.Document = "52998224724" }, []string{"document"}},
		{"repeated digits", func(c *Company) { c.Document = "00000000000000" }, []string{"document"}},
		{"repeated CPF digits", func(c *Company) { c.Document = "111.111.111-11" }, []string{"document"}},
		{"12 digits", func(c *Company) { c.Document = "112223330001" }, []string{"document"}},
		{"letters", func(c *Company) { c.Document = "abc" }, []string{"document"}},
		{"name with NUL", func(c *Company) { c.Name = "Escola\x00" }, []string{"name"}},
		{"name with a line break", func(c *Company) { c.Name = "Escola\nX" }, []string{"name"}},
		{"name in Japanese", func(c *Company) { c.Name = "日本語学校" }, []string{"name"}},
		{"name in Japanese with a Latin word", func(c *Company) { c.Name = "日本語学校 Sakura" }, nil},
		{"accented name", func(c *Company) { c.Name = "Ação & Educação" }, nil},
		{"fine at the 2% cap", func(c *Company) { c.FineRate = MustRate("0.02") }, nil},
		{"fine above 2%", func(c *Company) { c.FineRate = MustRate("0.0201") }, []string{"fine_rate"}},
		{"late interest at the 1% cap", func(c *Company) { c.MonthlyInterestRate = MustRate("0.01") }, nil},
		{"late interest above 1% a month", func(c *Company) { c.MonthlyInterestRate = MustRate("0.011") }, []string{"monthly_interest_rate"}},
		{"interest with 7 places", func(c *Company) { c.MaxInterestRate = MustRate("0.0299001") }, []string{"max_interest_rate"}},
		{"absolute take rate in cents", func(c *Company) { c.TakeRateType, c.TakeRateValue = "absolute", RateFromInt(250) }, nil},
		{"absolute take rate of half a cent", func(c *Company) { c.TakeRateType, c.TakeRateValue = "absolute", MustRate("0.5") }, []string{"take_rate_value"}},
		{"percentage take rate above 1", func(c *Company) { c.TakeRateValue = MustRate("2") }, []string{"take_rate_value"}},
		{"unknown take rate type", func(c *Company) { c.TakeRateType = "fixed" }, []string{"take_rate_type"}},
		{"no grace", func(c *Company) { c.BoletoGraceBusinessDays = 0 }, nil},
		{"five days of grace", func(c *Company) { c.BoletoGraceBusinessDays = 5 }, nil},
		{"six days of grace", func(c *Company) { c.BoletoGraceBusinessDays = 6 }, []string{"boleto_grace_business_days"}},
		{"negative grace", func(c *Company) { c.BoletoGraceBusinessDays = -1 }, []string{"boleto_grace_business_days"}},
		{"min installment above what a boleto carries", func(c *Company) { c.MinInstallmentCents = MaxAmountCents + 1 }, []string{"min_installment_amount_cents"}},
		{"121 installments", func(c *Company) { c.MaxInstallments = 121 }, []string{"max_installments"}},
		{"email", func(c *Company) { c.Email = str("financeiro@escola.com.br") }, nil},
		{"email without a TLD", func(c *Company) { c.Email = str("financeiro@escola") }, []string{"email"}},
		{"phone", func(c *Company) { c.Phone = str("+55 (11) 3234-5678") }, nil},
		{"phone without an area code", func(c *Company) { c.Phone = str("32345678") }, []string{"phone"}},
		{"https logo", func(c *Company) { c.Logo = "https://escola.example/logo.png" }, nil},
		// The pages show no image from an http address: a logo the CLI took
		// showed the company's initial instead (an audit).
		{"http logo", func(c *Company) { c.Logo = "http://escola.example/logo.png" }, []string{"logo"}},
		{"logo with a password", func(c *Company) { c.Logo = "https://u:secret@escola.example/logo.png" }, []string{"logo"}},
	}
	for _, tt := range tests {
		c := NewCompany("Escola X", "11222333000181", "escola-x")
		tt.change(&c)
		err := c.Validate()
		var got []string
		if err != nil {
			for _, f := range err.(*Error).Fields {
				got = append(got, f.Field)
			}
		}
		if !slices.Equal(got, tt.fields) {
			t.Errorf("%s: fields at fault %v, want %v (%v)", tt.name, got, tt.fields, err)
		}
	}

	// The stored forms are digits (and CNPJ capitals, however typed).
	c := NewCompany("Escola X", "12.abc.345/01De-35", "escola-x")
	c.Phone = str("+55 (11) 3234-5678")
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Document != "12ABC34501DE35" || *c.Phone != "1132345678" {
		t.Errorf("document %q phone %q, want 12ABC34501DE35 and 1132345678", c.Document, *c.Phone)
	}
	if d := NewCompany("", "", ""); d.BoletoGraceBusinessDays != 1 || d.MinInstallmentCents != 5000 {
		t.Errorf("defaults: grace %d, min installment %d; want 1 and 5000", d.BoletoGraceBusinessDays, d.MinInstallmentCents)
	}
}
