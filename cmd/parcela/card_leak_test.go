package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// No card number or security code reaches the logs, the database or any
// response. Three cards go through the real checkout form: one failing its
// checks, one refused, one approved (a 4-digit Amex code). Then the server's
// log at debug level, every page, every API answer, every webhook delivered
// and every value of every table (River's included) are searched.
func TestCardNeverLeaks(t *testing.T) {
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			s := newShop(t, e, map[string]string{"PARCELA_LOG_LEVEL": "debug"})
			hook := newReceiver(t)
			secret := s.webhook(hook)
			order := s.chargedOrder("pix", 1)
			billID := bills(order)[0]
			checkout := path(t, s.api("GET", "/bills/"+billID, "", 200)["checkout_url"].(string))
			action := strings.Split(checkout, "?")[0] + "/card"
			pages := newPages(t, s.ts.sandbox)
			cards := []struct {
				number, cvv string
				status      int
			}{
				{"4111 1111 1111 1112", "918", 422}, // fails Luhn
				{"4000 0000 0000 0069", "927", 303}, // refused: expired_card
				{"3782 822463 10005", "7351", 303},  // Amex, approved
			}
			year := strconv.Itoa(time.Now().Year() + 3)
			for _, c := range cards {
				status, header, page := pages.postForm(checkout, action, url.Values{"card_number": {c.number}, "card_name": {"MARIA C SOUZA"},
					"card_month": {"12"}, "card_year": {year}, "card_cvv": {c.cvv}, "card_installments": {"2"}})
				if status != c.status {
					t.Fatalf("card %s: status %d, want %d\n%s", c.number[len(c.number)-4:], status, c.status, page)
				}
				if status == 303 {
					pages.do("GET", header.Get("Location"), nil)
				}
			}
			paid := s.api("GET", "/bills/"+billID, "", 200)
			var got []string
			for _, p := range payments(paid) {
				got = append(got, fmt.Sprintf("%s %s %v %v %v", p["payment_method"], p["status"], p["card_brand"], p["card_last_digits"], p["installments"]))
			}
			if want := "pix canceled <nil> <nil> 1|credit_card refused visa 0069 2|credit_card paid amex 0005 2"; strings.Join(got, "|") != want {
				t.Fatalf("payments %v, want %s", got, want)
			}
			hook.event(t, secret, "bill", "paid", billID)
			answers, _ := json.Marshal([]any{paid, s.api("GET", "/orders/"+order["id"].(string), "", 200),
				s.api("GET", "/bills?order_id="+order["id"].(string), "", 200)})

			places := map[string]string{"the log": s.ts.stderr.String() + s.ts.stdout.String(), "a page": pages.seen.String(),
				"an API answer": string(answers), "a webhook": string(hook.all()), "the database": databaseText(t, e, s.ts.dsn)}
			for where, text := range places {
				for _, c := range cards {
					digits := strings.ReplaceAll(c.number, " ", "")
					if strings.Contains(text, digits) || strings.Contains(text, c.number) || strings.Contains(text, strings.ReplaceAll(c.number, " ", "-")) {
						t.Errorf("card %s… found in %s", digits[:6], where)
					}
				}
				// The form shows the holder's name back to its payer, and
				// keeps it nowhere.
				if strings.Contains(text, "MARIA C SOUZA") && where != "a page" {
					t.Errorf("the card holder's name found in %s", where)
				}
				if regexp.MustCompile(`(?i)cvv"?\s*[:=]`).MatchString(text) {
					t.Errorf("a security code field found in %s", where)
				}
			}
			for _, c := range cards {
				// A code is a few digits: look for it as a value of its own.
				for where, pattern := range map[string]string{"the log": `"` + c.cvv + `"`, "the database": "\x00" + c.cvv + "\x00",
					"a page": `value="` + c.cvv + `"`} {
					if strings.Contains(places[where], pattern) {
						t.Errorf("security code %s found in %s", c.cvv, where)
					}
				}
			}
			// At debug too, the log holds none of the customer's data, the
			// token or the webhook's secret.
			for _, private := range []string{"52998224725", "maria@example.com", "11987654321", "1990-05-17", "Maria da Silva", s.token, secret} {
				if strings.Contains(places["the log"], private) {
					t.Errorf("the debug log holds %q", private)
				}
			}
			if !strings.Contains(places["the database"], "\x000005\x00") || !strings.Contains(places["the database"], "\x00amex\x00") {
				t.Fatal("the database scan did not see the card's brand and last four digits: it is not looking")
			}
		})
	}
}

// databaseText is every non-null value of every table of the database at
// dsn, each between NUL bytes.
func databaseText(t *testing.T, e sqldb.Dialect, dsn string) string {
	t.Helper()
	ctx := context.Background()
	db, err := sqldb.Open(ctx, dsn, sqldb.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := `SELECT name FROM sqlite_master WHERE type = 'table'`
	if e == sqldb.Postgres {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`
	}
	tables, err := column[string](ctx, db.SQLDB(), q)
	if err != nil || len(tables) < 10 {
		t.Fatalf("%d tables: %v", len(tables), err)
	}
	var b strings.Builder
	for _, table := range tables {
		rows, err := db.SQLDB().QueryContext(ctx, `SELECT * FROM "`+table+`"`)
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatalf("%s: %v", table, err)
			}
			for _, v := range vals {
				switch v := v.(type) {
				case nil:
				case []byte:
					b.WriteString("\x00" + string(v) + "\x00")
				default:
					b.WriteString("\x00" + fmt.Sprint(v) + "\x00")
				}
			}
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func column[T any](ctx context.Context, db *sql.DB, q string) ([]T, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
