package server_test

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The statuses every operation declares are answered by some test, each
// answer checked against the document (bundle.send records them): a
// status no test provokes is one whose body, headers and cause nothing
// checks.
var (
	answeredMu sync.Mutex
	answered   = map[string]bool{} // "METHOD /path/{id} status"
)

// recordAnswer notes that an answer to req with status was checked.
func recordAnswer(req *http.Request, status int) {
	op := contract.Operation(req)
	if op == "" {
		return
	}
	answeredMu.Lock()
	answered[op+" "+strconv.Itoa(status)] = true
	answeredMu.Unlock()
}

// unanswered are the declared statuses the package's tests provoke
// without the contract's check, or not at all; any other declared status
// of an operation must be answered by the tests.
var unanswered = map[string]string{
	"405": "provoked on every path by TestEveryOperationAnswersItsDeclaredErrors, which no operation matches",
	"429": "the limiters' tests (limits_test.go) provoke it on a few operations",
	"500": "a failure inside: TestHandlersOnFakes provokes it on fakes",
	"503": "the outage tests (outage_test.go) provoke it on fakes",
	"GET /external_api/v1/payments/{id}/barcode.png 304": "images_test.go, on fakes",
	"GET /external_api/v1/payments/{id}/pix.png 200":     "images_test.go, on fakes",
	"GET /external_api/v1/payments/{id}/pix.png 304":     "images_test.go, on fakes",
	// Their only 409 is idempotency_in_flight, which needs a request held
	// in flight: TestIdempotencyAcrossInstances provokes it on the charge.
	"POST /external_api/v1/products 409":                    inFlightOnly,
	"PATCH /external_api/v1/products/{id} 409":              inFlightOnly,
	"POST /external_api/v1/offers 409":                      inFlightOnly,
	"PATCH /external_api/v1/offers/{id} 409":                inFlightOnly,
	"POST /external_api/v1/orders 409":                      inFlightOnly,
	"POST /external_api/v1/webhooks 409":                    inFlightOnly,
	"PATCH /external_api/v1/webhooks/{id} 409":              inFlightOnly,
	"DELETE /external_api/v1/webhooks/{id} 409":             inFlightOnly,
	"POST /external_api/v1/webhooks/{id}/rotate_secret 409": inFlightOnly,
}

const inFlightOnly = "idempotency_in_flight only"

// checkAnswered reports the declared statuses no test answered, once the
// whole package ran (a -run, -skip or -short run leaves tests out, a
// -list run runs none).
func checkAnswered() error {
	if os.Getenv("PARCELA_PRESENCE_REPORT") != "" {
		fmt.Fprintf(os.Stderr, "always present, not required:\n\t%s\n", strings.Join(alwaysPresentOptional(), "\n\t"))
	}
	for _, name := range []string{"test.run", "test.skip", "test.fuzz", "test.list"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return nil
		}
	}
	if testing.Short() || contract == nil {
		return nil
	}
	var errs []error
	if found := alwaysPresentOptional(); len(found) > 0 {
		errs = append(errs, errors.New("every answer the tests received held these properties, which api/openapi.yaml does not mark required "+
			"(mark them, or list them in optionalByDesign with the answers that leave them out):\n\t"+strings.Join(found, "\n\t")))
	}
	if found := neverPresent(); len(found) > 0 {
		errs = append(errs, errors.New("no answer the tests received held these properties, which api/openapi.yaml declares "+
			"(drop them, provoke an answer that holds them, or list them in neverSentByDesign):\n\t"+strings.Join(found, "\n\t")))
	}
	var missing []string
	for path, item := range contract.Doc().Paths.Map() {
		for method, op := range item.Operations() {
			for code := range op.Responses.Map() {
				key := method + " " + path + " " + code
				if answered[key] || unanswered[code] != "" || unanswered[key] != "" {
					continue
				}
				missing = append(missing, key)
			}
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		errs = append(errs, errors.New("no test answers these statuses that api/openapi.yaml declares:\n\t"+strings.Join(missing, "\n\t")))
	}
	return errors.Join(errs...)
}
