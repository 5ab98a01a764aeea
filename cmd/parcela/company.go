package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"parcela"
	"parcela/sqldb"
)

func cmdCompany(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{"company: want 'create' or 'list'"}
	}
	switch args[0] {
	case "create":
		return companyCreate(ctx, args[1:], getenv, stdout, stderr)
	case "list":
		return companyList(ctx, args[1:], getenv, stdout, stderr)
	}
	if isHelp(args[0]) {
		return subcommandsHelp("company", "create", "list")
	}
	return usageError{fmt.Sprintf("company: unknown subcommand %q", args[0])}
}

func companyCreate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, dbFlag := newFlags("company create", stderr)
	c := parcela.NewCompany("", "", "")
	fs.StringVar(&c.Name, "name", "", "company name (required)")
	fs.StringVar(&c.Document, "document", "", "CNPJ or CPF digits (required)")
	fs.StringVar(&c.Slug, "slug", "", "URL slug (required)")
	fs.Var(&rateFlag{r: &c.MaxInterestRate}, "max-interest-rate", "maximum monthly interest rate")
	fs.IntVar(&c.MaxInstallments, "max-installments", c.MaxInstallments, "maximum installments")
	fs.Var(&rateFlag{r: &c.MinDownPaymentRate}, "min-down-payment-rate", "minimum down payment rate")
	fs.Int64Var(&c.MinDownPaymentCents, "min-down-payment-cents", c.MinDownPaymentCents, "minimum absolute down payment in cents")
	fs.Var(&rateFlag{r: &c.RegistrationFee}, "registration-fee", "registration fee rate")
	fs.Var(&rateFlag{r: &c.FineRate}, "fine-rate", "late fine rate (at most 0.02)")
	fs.Var(&rateFlag{r: &c.MonthlyInterestRate}, "monthly-interest-rate", "late interest per month")
	fs.IntVar(&c.BoletoGraceBusinessDays, "boleto-grace-business-days", c.BoletoGraceBusinessDays,
		"business days an unpaid boleto waits for the bank's notice after its last payable day before it expires (0 to 5)")
	// The platform's fee and the smallest installment are the operator's
	// to set: offers take them from the company, never from the seller.
	fs.StringVar(&c.TakeRateType, "take-rate-type", c.TakeRateType, "the platform's fee per payment: percentage or absolute")
	fs.Var(&rateFlag{r: &c.TakeRateValue}, "take-rate-value", "the platform's fee: a fraction of each payment (percentage) or cents (absolute)")
	fs.Int64Var(&c.MinInstallmentCents, "min-installment-cents", c.MinInstallmentCents, "smallest installment bill in cents")
	// What payers see of the company on its orders and pages: the API's
	// company shows an email, a phone, a logo and an address.
	email := fs.String("email", "", "contact email shown to payers")
	phone := fs.String("phone", "", "contact phone shown to payers (Brazilian, with its area code)")
	fs.StringVar(&c.Logo, "logo", "", "the address (an https URL) of the company's logo image")
	var addr parcela.AddressInput
	for _, f := range []struct {
		name, usage string
		dest        **string
	}{
		{"zipcode", "zipcode (CEP)", &addr.Zipcode}, {"street", "street", &addr.Street}, {"number", "number", &addr.Number},
		{"complement", "complement (optional)", &addr.Complement}, {"neighborhood", "neighborhood", &addr.Neighborhood},
		{"city-ibge-code", "the city's 7-digit IBGE code", &addr.CityIBGECode},
	} {
		fs.Func(f.name, "the company's address: "+f.usage+"; give the address's flags together or none", func(v string) error {
			*f.dest = &v
			return nil
		})
	}
	asJSON := fs.Bool("json", false, "print the company as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *email != "" {
		c.Email = email
	}
	if *phone != "" {
		c.Phone = phone
	}
	if addr != (parcela.AddressInput{}) {
		a, err := parcela.BuildAddress("address.", addr)
		if err != nil {
			return validationLine(err)
		}
		c.Address = a
	}
	if err := c.Validate(); err != nil {
		return validationLine(err)
	}
	db, err := openDB(ctx, *dbFlag, getenv, sqldb.Config{})
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.CreateCompany(ctx, &c); err != nil {
		return validationLine(err)
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(companyJSON(&c))
	}
	fmt.Fprintf(stdout, "company %s created (slug %s)\n", c.ID, c.Slug)
	return nil
}

// validationLine turns a domain error into one line naming every field.
func validationLine(err error) error {
	e, ok := errors.AsType[*parcela.Error](err)
	if !ok || len(e.Fields) == 0 {
		return err
	}
	msg := ""
	for i, f := range e.Fields {
		if i > 0 {
			msg += "; "
		}
		// An address's fields are flags of their own (--zipcode).
		name := strings.TrimPrefix(f.Field, "address.")
		if flag, ok := flagOfField[name]; ok {
			name = flag
		}
		msg += "--" + dashed(name) + " " + f.Message
	}
	return usageError{msg}
}

// flagOfField names the flags whose names are not their field's dashed.
var flagOfField = map[string]string{"min_installment_amount_cents": "min-installment-cents"}

func dashed(s string) string {
	b := []byte(s)
	for i := range b {
		if b[i] == '_' {
			b[i] = '-'
		}
	}
	return string(b)
}

func companyList(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, dbFlag := newFlags("company list", stderr)
	asJSON := fs.Bool("json", false, "print companies as a JSON array")
	if err := parse(fs, args); err != nil {
		return err
	}
	db, err := openExistingDB(ctx, *dbFlag, getenv)
	if err != nil {
		return err
	}
	defer db.Close()
	cs, err := db.Companies(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		out := make([]map[string]any, 0, len(cs))
		for _, c := range cs {
			out = append(out, companyJSON(c))
		}
		return json.NewEncoder(stdout).Encode(out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSLUG\tNAME\tCREATED")
	for _, c := range cs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.ID, c.Slug, c.Name, c.CreatedAt.Format(time.RFC3339))
	}
	return tw.Flush()
}

func companyJSON(c *parcela.Company) map[string]any {
	return map[string]any{
		"id": c.ID, "name": c.Name, "document": c.Document, "slug": c.Slug,
		"max_interest_rate": c.MaxInterestRate, "max_installments": c.MaxInstallments,
		"min_down_payment_rate": c.MinDownPaymentRate, "min_down_payment_cents": c.MinDownPaymentCents,
		"registration_fee": c.RegistrationFee, "take_rate_type": c.TakeRateType, "take_rate_value": c.TakeRateValue,
		"fine_rate": c.FineRate, "monthly_interest_rate": c.MonthlyInterestRate,
		"min_installment_amount_cents": c.MinInstallmentCents, "payment_expiry_hours": c.PaymentExpiryHours,
		"installment_issue_days": c.InstallmentIssueDays, "boleto_grace_business_days": c.BoletoGraceBusinessDays,
		"email": c.Email, "phone": c.Phone, "logo": c.Logo, "address": addressJSON(c.Address),
		// As the API writes times: the company just created holds the
		// clock's UTC instant, a listed one São Paulo's.
		"created_at": c.CreatedAt.In(parcela.SaoPaulo).Format(parcela.TimestampLayout),
	}
}

// addressJSON is a company's address as the commands print it, or nil.
func addressJSON(a *parcela.Address) map[string]any {
	if a == nil {
		return nil
	}
	return map[string]any{"zipcode": a.Zipcode, "street": a.Street, "number": a.Number, "complement": a.Complement,
		"neighborhood": a.Neighborhood, "city_ibge_code": a.City.IBGECode, "city": a.City.Name, "state": a.City.State.Acronym}
}
