package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"parcela"
	"parcela/server"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// tenantTokens knows a token per company and environment.
type tenantTokens map[string]parcela.Token

func (m tenantTokens) Authenticate(_ context.Context, plain string) (*parcela.Token, error) {
	t, ok := m[plain]
	if !ok {
		return nil, parcela.Errorf(parcela.EUNAUTHORIZED, "invalid access token")
	}
	return &t, nil
}

// A company that spends its sandbox token's limit (on one database's
// shared count, as every instance does on PostgreSQL) takes nothing from
// its production token's limit, nor from another company's: each token's
// requests are counted alone, in its environment.
func TestRateLimitOfOneTokenSparesTheOthers(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			db := sqldbtest.Open(t, e, sqldb.Config{})
			s := sqldbtest.Suffix()
			tokens := tenantTokens{
				"sandbox_busy":  {ID: "busy-sandbox-" + s, CompanyID: "busy", Environment: parcela.Sandbox},
				"live_busy":     {ID: "busy-live-" + s, CompanyID: "busy", Environment: parcela.Production},
				"sandbox_quiet": {ID: "quiet-sandbox-" + s, CompanyID: "quiet", Environment: parcela.Sandbox},
			}
			counter := &checkedCounter{t: t, RateCounter: db}
			serve := func(env parcela.Environment) string {
				srv := httptest.NewServer(server.New(server.Services{Tokens: tokens, Orders: noOrders{}, RateCounter: counter},
					server.Config{Environment: env, RateLimit: 3}))
				t.Cleanup(srv.Close)
				return srv.URL + "/external_api/v1/orders/o1"
			}
			sandbox, production := serve(parcela.Sandbox), serve(parcela.Production)
			client := &http.Client{}
			// Within one second: retried in the next when the window ended
			// midway (the outcome, not the time, is what is checked).
			for try := 0; ; try++ {
				startOfNextSecond()
				second := time.Now().Unix()
				var codes []int
				for range 4 {
					code, _, _ := get(t, client, sandbox, "Bearer sandbox_busy", "")
					codes = append(codes, code)
				}
				live, _, _ := get(t, client, production, "Bearer live_busy", "")
				quiet, _, _ := get(t, client, sandbox, "Bearer sandbox_quiet", "")
				if time.Now().Unix() != second {
					if try == 5 {
						t.Fatal("no second held the test's requests")
					}
					continue
				}
				if codes[3] != http.StatusTooManyRequests || codes[2] == http.StatusTooManyRequests {
					t.Fatalf("the busy sandbox token's 4 requests at 3 a second answered %v", codes)
				}
				if live == http.StatusTooManyRequests || quiet == http.StatusTooManyRequests {
					t.Fatalf("after the busy sandbox token's limit was spent: its production token %d, another company's %d", live, quiet)
				}
				return
			}
		})
	}
}
