package server_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"parcela"
	"parcela/api"
	"parcela/server"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// A panic in a request is logged with the stack it unwound, so an operator
// can find where it happened: the line held the panic's value alone
// ("runtime error: invalid memory address or nil pointer dereference"),
// which names no function. Neither it nor any other line holds the
// request's body or its token.
func TestPanicLogsItsStack(t *testing.T) {
	t.Parallel()
	f := &storeFaults{}
	b := setup(t, sqldb.SQLite, func(c *sqldb.Config) { c.Fault = f.hook })
	logs := &logBuffer{}
	srv := httptest.NewServer(server.New(server.ServicesOf(b.app, b.db), server.Config{Environment: parcela.Sandbox, Clock: b.clock,
		PublicURL: sqldbtest.Links[parcela.Sandbox].PublicURL, OpenAPI: api.Spec, Logger: slog.New(slog.NewJSONHandler(logs, nil))}))
	t.Cleanup(srv.Close)
	offer := b.offer()["id"].(string)

	f.arm(sqldb.BeforeCommit)
	b.send(srv.URL, b.token, "POST", v1+"/orders", orderBody(offer), map[string]string{"Idempotency-Key": "panic-" + sqldbtest.Suffix()}).
		want(t, http.StatusInternalServerError)
	f.arm("")

	panics := logs.lines(t, "panic")
	if len(panics) != 1 {
		t.Fatalf("%d panic lines:\n%s", len(panics), logs.b.String())
	}
	if stack, _ := panics[0]["stack"].(string); !strings.Contains(stack, "server.(*Server).") {
		t.Errorf("the panic's line does not say where it happened: %v", panics[0])
	}
	all := logs.b.String()
	for _, secret := range []string{"529.982.247-25", "maria@example.com", "98765-4321", "1990-05-17", b.token} {
		if strings.Contains(all, secret) {
			t.Errorf("the log holds %q:\n%s", secret, all)
		}
	}
}
