package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

const chargePath = "/external_api/v1/orders/45e5c384-fe3a-4e49-8365-9add6706f365/charge"

// loaded is the contract every test reads (loading it parses and
// validates the whole document).
var loaded = sync.OnceValues(LoadContract)

func mustContract(t *testing.T) *Contract {
	t.Helper()
	c, err := loaded()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func jsonHeader(contentType string) http.Header {
	return http.Header{"Content-Type": {contentType}, "X-Request-Id": {"4f7c1d0a-2b9e-4c51-9a3f-6e2d8b7c5a10"}}
}

// forEachOperation calls f with "METHOD /path" and the operation.
func forEachOperation(doc *openapi3.T, f func(key string, op *openapi3.Operation)) {
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			f(method+" "+path, op)
		}
	}
}

func TestDocumentLoadsAndValidates(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromData(Spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.0.3" || len(doc.Servers) != 2 {
		t.Errorf("openapi %q with %d servers, want 3.0.3 with production and sandbox", doc.OpenAPI, len(doc.Servers))
	}
}

func TestEveryOperationHasSuccessExamples(t *testing.T) {
	t.Parallel()
	forEachOperation(mustContract(t).Doc(), func(key string, op *openapi3.Operation) {
		success := 0
		for code, resp := range op.Responses.Map() {
			if !strings.HasPrefix(code, "2") {
				continue
			}
			success++
			for mediaType, media := range resp.Value.Content {
				if mediaType != "image/png" && media.Example == nil && len(media.Examples) == 0 {
					t.Errorf("%s %s %s has no example", key, code, mediaType)
				}
			}
		}
		if success == 0 {
			t.Errorf("%s has no success response", key)
		}
	})
}

func TestBearerSecurityEverywhereButPublicPaths(t *testing.T) {
	t.Parallel()
	doc := mustContract(t).Doc()
	public := map[string]bool{
		"GET /healthz": false, "GET /readyz": false, "GET /openapi.yaml": false,
		"GET /external_api/v1/payments/{id}/barcode.png": false, "GET /external_api/v1/payments/{id}/pix.png": false,
	}
	forEachOperation(doc, func(key string, op *openapi3.Operation) {
		security := doc.Security
		if op.Security != nil {
			security = *op.Security
		}
		bearer := len(security) == 1 && security[0]["bearerAuth"] != nil
		if _, ok := public[key]; ok {
			public[key] = true
			if len(security) != 0 {
				t.Errorf("%s is public but requires %v", key, security)
			}
		} else if !bearer {
			t.Errorf("%s does not require the bearer token", key)
		}
	})
	for key, seen := range public {
		if !seen {
			t.Errorf("public operation %s is missing", key)
		}
	}
}

func TestResponsesCarryRequestIDAndProblems(t *testing.T) {
	t.Parallel()
	forEachOperation(mustContract(t).Doc(), func(key string, op *openapi3.Operation) {
		for code, resp := range op.Responses.Map() {
			if resp.Value.Headers["X-Request-Id"] == nil {
				t.Errorf("%s %s lacks X-Request-Id", key, code)
			}
			if code < "400" {
				continue
			}
			media := resp.Value.Content["application/problem+json"]
			if len(resp.Value.Content) != 1 || media == nil || media.Schema.Ref != "#/components/schemas/Problem" {
				t.Errorf("%s %s is not an application/problem+json Problem", key, code)
			}
		}
		if op.Responses.Status(500) == nil {
			t.Errorf("%s does not list 500", key)
		}
		if strings.HasPrefix(key, "POST ") && op.Parameters.GetByInAndName("header", "Idempotency-Key") == nil {
			t.Errorf("%s does not take Idempotency-Key", key)
		}
	})
}

// mutate sets the field at a dotted path ("billings.0.amount_cents") of a JSON
// document to value, or deletes it when value is deleteField.
func mutate(t *testing.T, doc []byte, path string, value any) []byte {
	t.Helper()
	var root any
	if err := json.Unmarshal(doc, &root); err != nil {
		t.Fatal(err)
	}
	keys := strings.Split(path, ".")
	node := root
	for _, k := range keys[:len(keys)-1] {
		if i, err := strconv.Atoi(k); err == nil {
			node = node.([]any)[i]
		} else {
			node = node.(map[string]any)[k]
		}
	}
	last := keys[len(keys)-1]
	if value == deleteField {
		delete(node.(map[string]any), last)
	} else {
		node.(map[string]any)[last] = value
	}
	out, err := json.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type deleted struct{}

var deleteField = deleted{}

func TestChargedOrderResponse(t *testing.T) {
	t.Parallel()
	c := mustContract(t)
	order, err := os.ReadFile("testdata/order_charged.json")
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8081"+chargePath, nil)
	if err := c.ValidateResponse(req, http.StatusOK, jsonHeader("application/json"), order); err != nil {
		t.Fatalf("valid order rejected: %v", err)
	}
	// Strict: the server may send no field the document does not declare,
	// at any depth; free-form objects (a product's metadata) hold anything.
	for _, path := range []string{"billings.0.unknown_extension", "billings.0.bills.0.payments.0.internal_id", "unknown"} {
		if err := c.ValidateResponse(req, http.StatusOK, jsonHeader("application/json"), mutate(t, order, path, 1)); err == nil || !strings.Contains(err.Error(), "undocumented") {
			t.Errorf("undocumented field %s: err = %v", path, err)
		}
	}
	if err := c.ValidateResponse(req, http.StatusOK, jsonHeader("application/json"), mutate(t, order, "offer.product.company.theme_customizations.extra", 1)); err == nil {
		t.Error("undocumented field in a closed nested object accepted")
	}
	bad := map[string]any{
		"billings.0.bills.0.due_date":                     deleteField,
		"billings.0.bills.0.payments.0.paid_at":           deleteField,
		"offer.product.company":                           deleteField,
		"billings.0.amount_cents":                         "154808",
		"billings.0.payment_configuration.interest_rate":  "0.0199",
		"billings.0.bills.1.payments":                     nil,
		"billings.0.bills.2.due_date":                     "2026-11-15",
		"billings.0.bills.0.payments.0.status":            "charged",
		"offer.product.company.theme_customizations.dark": "true",
		"id":                 "45e5c384",
		"created_at":         "2026-09-03 09:58",
		"customer_birthdate": "02/12/1988",
		"billings.0.payment_configuration.financed_type": "carne",
		"billings.0.cancelation_reason":                  "bored",
	}
	for path, value := range bad {
		body := mutate(t, order, path, value)
		if err := c.ValidateResponse(req, http.StatusOK, jsonHeader("application/json"), body); err == nil {
			t.Errorf("order with %s = %v accepted", path, value)
		}
	}
	if err := c.ValidateResponse(req, http.StatusOK, http.Header{"Content-Type": {"application/json"}}, order); err == nil {
		t.Error("response without X-Request-Id accepted")
	}
	if err := c.ValidateResponse(req, http.StatusTeapot, jsonHeader("application/json"), order); err == nil {
		t.Error("undocumented status accepted")
	}
	if err := c.ValidateWebhookEvent(eventBody(t, "order", "in_progress", order)); err != nil {
		t.Errorf("order event rejected: %v", err)
	}
	for _, bad := range [][]byte{eventBody(t, "bill", "paid", order), eventBody(t, "order", "paid", order), eventBody(t, "payment", "paid", order)} {
		if err := c.ValidateWebhookEvent(bad); err == nil {
			t.Errorf("event accepted: %.80s", bad)
		}
	}
}

// A null where the document allows none is refused, and a nullable field
// takes null.
func TestNullability(t *testing.T) {
	t.Parallel()
	c := mustContract(t)
	order, err := os.ReadFile("testdata/order_charged.json")
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/external_api/v1/orders/45e5c384-fe3a-4e49-8365-9add6706f365", nil)
	for path, ok := range map[string]bool{
		"offer.product.company.address":                  true,
		"billings.0.payment_configuration.financed_type": true,
		"billings.0.cancelation_reason":                  true,
		"cancelation_reason":                             true,
		"address":                                        false,
		"offer.product.company":                          false,
		"billings.0.payment_configuration.interest_rate": false,
		"billings.0.bills.0.status":                      false,
	} {
		err := c.ValidateResponse(req, http.StatusOK, jsonHeader("application/json"), mutate(t, order, path, nil))
		if (err == nil) != ok {
			t.Errorf("%s = null: err = %v, want accepted = %v", path, err, ok)
		}
	}
}

func TestCheckStrict(t *testing.T) {
	t.Parallel()
	if err := CheckStrict(Spec); err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string]string{
		"nullable beside allOf": "components:\n  schemas:\n    A:\n      nullable: true\n      allOf:\n        - $ref: '#/components/schemas/B'\n",
		"nullable enum":         "components:\n  schemas:\n    A:\n      type: string\n      nullable: true\n      enum: [a, b]\n",
	} {
		if err := CheckStrict([]byte(doc)); err == nil || !strings.Contains(err.Error(), "#/components/schemas/A") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if err := CheckStrict([]byte("components:\n  examples:\n    A:\n      value:\n        nullable: true\n")); err != nil {
		t.Errorf("example data taken for a schema: %v", err)
	}
}

func eventBody(t *testing.T, entity, event string, data []byte) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"id": "01a1efd2-ca78-791c-9f4e-ca3dbdd87886", "entity": entity, "event": event,
		"api_version": "v1", "created_at": "2026-09-03T10:05:12.481-03:00", "data": json.RawMessage(data),
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestProblemResponses(t *testing.T) {
	t.Parallel()
	c := mustContract(t)
	problem := []byte(`{"type": "https://api.parcela.test/docs/errors#validation_failed", "title": "Validation failed",
		"status": 422, "detail": "offer.amount_cents must be at least 500",
		"code": "validation_failed", "request_id": "4f7c1d0a-2b9e-4c51-9a3f-6e2d8b7c5a10",
		"errors": [{"field": "offer.amount_cents", "code": "too_small", "message": "must be at least 500"}]}`)
	req := httptest.NewRequest(http.MethodPost, "/external_api/v1/offers", nil)
	if err := c.ValidateResponse(req, 422, jsonHeader("application/problem+json"), problem); err != nil {
		t.Fatalf("valid problem rejected: %v", err)
	}
	// request_id is the X-Request-Id, but in a replayed answer: that is
	// the first request's, stored with it.
	other := mutate(t, problem, "request_id", "req_8d64da16070ba8cbdc766d39")
	if err := c.ValidateResponse(req, 422, jsonHeader("application/problem+json"), other); err == nil || !strings.Contains(err.Error(), "request_id") {
		t.Errorf("a problem naming another request: err = %v", err)
	}
	replayed := jsonHeader("application/problem+json")
	replayed.Set("Idempotent-Replayed", "true")
	if err := c.ValidateResponse(req, 422, replayed, other); err != nil {
		t.Errorf("a replayed problem rejected: %v", err)
	}
	for _, body := range [][]byte{mutate(t, problem, "code", deleteField), mutate(t, problem, "status", "422"), mutate(t, problem, "errors.0.field", deleteField)} {
		if err := c.ValidateResponse(req, 422, jsonHeader("application/problem+json"), body); err == nil {
			t.Errorf("invalid problem accepted: %s", body)
		}
	}
	if err := c.ValidateResponse(req, 422, jsonHeader("text/plain"), problem); err == nil {
		t.Error("problem served as text/plain accepted")
	}
	limited := mutate(t, mutate(t, problem, "status", 429), "code", "rate_limited")
	if err := c.ValidateResponse(req, 429, jsonHeader("application/problem+json"), limited); err == nil {
		t.Error("429 without Retry-After accepted")
	}
	h := jsonHeader("application/problem+json")
	h.Set("Retry-After", "1")
	if err := c.ValidateResponse(req, 429, h, limited); err != nil {
		t.Errorf("429 rejected: %v", err)
	}
}

func TestValidateRequest(t *testing.T) {
	t.Parallel()
	c := mustContract(t)
	charge := []byte(`{"payment_configuration_id": "4be36cc6-2384-489f-97af-52f709f28c2a", "due_day": 15,
		"installments": 4, "payment": {"payment_method": "pix"},
		"signature": {"remote_ip": "177.92.14.201", "user_agent": "Mozilla/5.0"}}`)
	req := httptest.NewRequest(http.MethodPost, chargePath, nil)
	if err := c.ValidateRequest(req, charge); err != nil {
		t.Fatalf("valid charge rejected: %v", err)
	}
	for _, body := range [][]byte{mutate(t, charge, "signature", deleteField), mutate(t, charge, "installments", "4"), mutate(t, charge, "due_day", 32)} {
		if err := c.ValidateRequest(req, body); err == nil {
			t.Errorf("invalid charge accepted: %s", body)
		}
	}
	for target, ok := range map[string]bool{"/external_api/v1/bills?per_page=25&status=paid": true, "/external_api/v1/bills?per_page=1001": false, "/external_api/v1/nowhere": false} {
		if err := c.ValidateRequest(httptest.NewRequest(http.MethodGet, target, nil), nil); (err == nil) != ok {
			t.Errorf("GET %s: err = %v, want ok = %v", target, err, ok)
		}
	}
}
