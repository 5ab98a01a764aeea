package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// The operations listener serves profiles, not the command line: it can
// hold --database postgres://user:password@…, and the listener is the
// metrics scrapers', often reachable by a whole network.
func TestOpsListenerServesNoCommandLine(t *testing.T) {
	t.Parallel()
	h := opsHandler(prometheus.NewRegistry())
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/pprof/cmdline", nil))
	if rec.Code != http.StatusNotFound || strings.Contains(rec.Body.String(), os.Args[0]) {
		t.Fatalf("GET /debug/pprof/cmdline: %d %q", rec.Code, rec.Body.String())
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/pprof/", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /debug/pprof/: %d", rec.Code)
	}
}
