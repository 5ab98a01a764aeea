package sqldb_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

func TestReferenceData(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		cities, states, err := db.CountCities(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if cities != 5571 || states != 27 {
			t.Fatalf("cities=%d states=%d, want 5571 and 27", cities, states)
		}
		// Migrating again is harmless and loads nothing twice.
		if err := db.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		if c, _, _ := db.CountCities(context.Background()); c != 5571 {
			t.Fatalf("cities after second migrate = %d", c)
		}
	})
}

// Not parallel: on PostgreSQL the reference rows are shared by the tests of
// the binary, and TestReferenceData counts them.
func TestReferenceDataRefreshesAnOlderIBGEFile(t *testing.T) {
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		// A database seeded from the 2022 file: São Luiz do Anauá (RR) was
		// still São Luiz, and Boa Esperança do Norte (MT) did not exist.
		// Neither is used by any other test.
		ctx, q := context.Background(), db.SQLDB()
		rebind := func(s string) string { return sqldb.Rebind(db, s) }
		if _, err := q.ExecContext(ctx, rebind(`UPDATE cities SET name = ? WHERE ibge_code = ?`), "São Luiz", "1400605"); err != nil {
			t.Fatal(err)
		}
		if _, err := q.ExecContext(ctx, rebind(`DELETE FROM cities WHERE ibge_code = ?`), "5101837"); err != nil {
			t.Fatal(err)
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		for code, want := range map[string]string{"1400605": "São Luiz do Anauá", "5101837": "Boa Esperança do Norte"} {
			var name string
			if err := q.QueryRowContext(ctx, rebind(`SELECT name FROM cities WHERE ibge_code = ?`), code).Scan(&name); err != nil || name != want {
				t.Errorf("city %s: %q, %v; want %q", code, name, err, want)
			}
		}
		if c, _, _ := db.CountCities(ctx); c != 5571 {
			t.Errorf("cities after the refresh = %d, want 5571", c)
		}
	})
}

func TestCompanyCreateAndRead(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		c := parcela.NewCompany("Escola Teste", "11222333000181", "escola-"+sqldbtest.Suffix())
		c.MaxInterestRate = parcela.MustRate("0.0299")
		c.FineRate = parcela.MustRate("0.015")
		c.Address = &parcela.Address{Zipcode: "20040002", Street: "Rua da Assembleia", Number: "10", Neighborhood: "Centro",
			City: parcela.City{IBGECode: "3304557"}}
		if err := db.CreateCompany(ctx, &c); err != nil {
			t.Fatal(err)
		}
		got, err := db.Company(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "Escola Teste" || got.Slug != c.Slug || !got.MaxInterestRate.Equal(parcela.MustRate("0.0299")) || got.FineRate.String() != "0.015" {
			t.Fatalf("read back %+v", got)
		}
		if got.Address == nil || got.Address.City.Name != "Rio de Janeiro" || got.Address.City.State.Acronym != "RJ" {
			t.Fatalf("address %+v", got.Address)
		}
		if !got.CreatedAt.Equal(c.CreatedAt.Truncate(time.Millisecond)) {
			t.Fatalf("created_at %v, want %v", got.CreatedAt, c.CreatedAt)
		}

		dup := parcela.NewCompany("Other", "11222333000181", c.Slug)
		if err := db.CreateCompany(ctx, &dup); parcela.ErrorCode(err) != parcela.ECONFLICT {
			t.Fatalf("duplicate slug: %v", err)
		}
		if _, err := db.Company(ctx, "00000000-0000-0000-0000-000000000000"); parcela.ErrorCode(err) != parcela.ENOTFOUND {
			t.Fatalf("missing company: %v", err)
		}
	})
}

func TestCompanyValidation(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		c := parcela.NewCompany("", "123", "Bad Slug")
		c.FineRate = parcela.MustRate("0.05")
		err := db.CreateCompany(context.Background(), &c)
		e, ok := err.(*parcela.Error)
		if !ok || e.Code != parcela.EINVALID {
			t.Fatalf("err = %v", err)
		}
		fields := map[string]bool{}
		for _, f := range e.Fields {
			fields[f.Field] = true
		}
		for _, want := range []string{"name", "document", "slug", "fine_rate"} {
			if !fields[want] {
				t.Errorf("no error for %s in %+v", want, e.Fields)
			}
		}
	})
}

func TestTokens(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		c := sqldbtest.Company(t, db)
		tok, plain, err := db.CreateToken(ctx, c.ID, parcela.Sandbox)
		if err != nil {
			t.Fatal(err)
		}
		secret, ok := strings.CutPrefix(plain, "sandbox_")
		if !ok || len(secret) < 43 {
			t.Fatalf("token %q: want sandbox_ and at least 32 random bytes of base62", plain)
		}
		if tok.Hash == plain || strings.Contains(tok.Hash, secret) || tok.Hash != parcela.HashToken(plain) {
			t.Fatal("the stored hash must be the SHA-256 of the token, never the token")
		}
		tokens := parcela.NewTokens(db)
		got, err := tokens.Authenticate(ctx, plain)
		if err != nil || got.CompanyID != c.ID || got.Environment != parcela.Sandbox {
			t.Fatalf("authenticate: %+v %v", got, err)
		}
		if _, err := tokens.Authenticate(ctx, plain+"x"); parcela.ErrorCode(err) != parcela.EUNAUTHORIZED {
			t.Fatalf("wrong token: %v", err)
		}
		list, err := db.Tokens(ctx, c.ID)
		if err != nil || len(list) != 1 || !strings.HasPrefix(plain, list[0].Prefix) || len(list[0].Prefix) >= len(plain)/2 {
			t.Fatalf("list %+v %v", list, err)
		}
		if err := db.RevokeToken(ctx, tok.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := tokens.Authenticate(ctx, plain); parcela.ErrorCode(err) != parcela.EUNAUTHORIZED {
			t.Fatalf("revoked token still works: %v", err)
		}
		if err := db.RevokeToken(ctx, "nope"); parcela.ErrorCode(err) != parcela.ENOTFOUND {
			t.Fatalf("revoke missing: %v", err)
		}
		if _, _, err := db.CreateToken(ctx, "nope", parcela.Production); parcela.ErrorCode(err) != parcela.ENOTFOUND {
			t.Fatalf("token for missing company: %v", err)
		}
	})
}
