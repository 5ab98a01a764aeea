package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

func TestEveryOperationDeclaresTheCommonErrors(t *testing.T) {
	t.Parallel()
	forEachOperation(mustContract(t).Doc(), func(key string, op *openapi3.Operation) {
		want := []int{405, 500}
		if strings.Contains(key, " /external_api/") {
			want = append(want, 503)
		}
		for _, status := range want {
			if op.Responses.Status(status) == nil {
				t.Errorf("%s does not declare %d", key, status)
			}
		}
		if r := op.Responses.Status(405); r != nil && r.Ref != "#/components/responses/MethodNotAllowed" {
			t.Errorf("%s declares its own 405", key)
		}
	})
}

// A 429 and a 503 always carry Retry-After (server/auth.go tooMany,
// server/problem.go writeError), so every operation's declares it
// required: optional, a generated client reads it as maybe absent.
func TestRetryAfterIsRequired(t *testing.T) {
	t.Parallel()
	forEachOperation(mustContract(t).Doc(), func(key string, op *openapi3.Operation) {
		for _, status := range []int{429, 503} {
			r := op.Responses.Status(status)
			if r == nil {
				continue
			}
			h := r.Value.Headers["Retry-After"]
			if h == nil || !h.Value.Required {
				t.Errorf("%s: its %d's Retry-After is not declared required", key, status)
			}
		}
	})
}

// The other headers the server always sends with a status are declared
// required there: WWW-Authenticate on a 401 (server/auth.go), Allow on a
// 405 (server/middleware.go noRoute), and a
// payment image's Cache-Control and ETag on its 200 and 304
// (server/images.go).
func TestAlwaysSentHeadersAreRequired(t *testing.T) {
	t.Parallel()
	forEachOperation(mustContract(t).Doc(), func(key string, op *openapi3.Operation) {
		want := map[int][]string{401: {"WWW-Authenticate"}, 405: {"Allow"}}
		if strings.HasSuffix(key, ".png") {
			want[200] = []string{"Cache-Control", "ETag"}
			want[304] = []string{"Cache-Control", "ETag"}
		}
		for status, names := range want {
			r := op.Responses.Status(status)
			if r == nil {
				continue
			}
			for _, name := range names {
				if h := r.Value.Headers[name]; h == nil || !h.Value.Required {
					t.Errorf("%s: its %d's %s is not declared required", key, status, name)
				}
			}
		}
	})
}

// Every POST, PATCH and DELETE takes Idempotency-Key with its length
// limit, no GET does, and no two operations show the same example key.
func TestIdempotencyKeys(t *testing.T) {
	t.Parallel()
	seen := map[string]string{}
	forEachOperation(mustContract(t).Doc(), func(key string, op *openapi3.Operation) {
		p := op.Parameters.GetByInAndName("header", "Idempotency-Key")
		if !strings.HasPrefix(key, "POST ") && !strings.HasPrefix(key, "PATCH ") && !strings.HasPrefix(key, "DELETE ") {
			if p != nil {
				t.Errorf("%s takes Idempotency-Key", key)
			}
			return
		}
		if p == nil {
			t.Errorf("%s does not take Idempotency-Key", key)
			return
		}
		if s := p.Schema.Value; s.MaxLength == nil || *s.MaxLength != 255 || s.MinLength != 1 {
			t.Errorf("%s: Idempotency-Key is not 1 to 255 characters", key)
		}
		ex, _ := p.Example.(string)
		if ex == "" {
			t.Errorf("%s: Idempotency-Key has no example", key)
		} else if other, dup := seen[ex]; dup {
			t.Errorf("%s and %s show the same Idempotency-Key %s", key, other, ex)
		}
		seen[ex] = key
	})
}

func TestSandboxOperationsAreMarked(t *testing.T) {
	t.Parallel()
	forEachOperation(mustContract(t).Doc(), func(key string, op *openapi3.Operation) {
		sandboxPath := strings.Contains(key, " /external_api/v1/sandbox/")
		marked := op.Extensions[SandboxOnly] == true
		tagged := slices.Contains(op.Tags, "Sandbox")
		if sandboxPath != marked || sandboxPath != tagged {
			t.Errorf("%s: under /sandbox/ %v, %s %v, tag Sandbox %v", key, sandboxPath, SandboxOnly, marked, tagged)
		}
	})
}

func TestProductionDocumentHasNoSandboxOperations(t *testing.T) {
	t.Parallel()
	if got := ForListener(Spec, true, ""); &got[0] != &Spec[0] {
		t.Error("the sandbox listener does not serve the document as it is")
	}
	prod := ForListener(Spec, false, "")
	if again := ForListener(Spec, false, ""); &again[0] != &prod[0] {
		t.Error("the production document is not cached")
	}
	if err := CheckStrict(prod); err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(prod)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatal(err)
	}
	full := mustContract(t).Doc()
	forEachOperation(full, func(key string, op *openapi3.Operation) {
		method, path, _ := strings.Cut(key, " ")
		item := doc.Paths.Value(path)
		kept := item != nil && item.GetOperation(method) != nil
		if sandbox := op.Extensions[SandboxOnly] == true; kept == sandbox {
			t.Errorf("%s: sandbox-only %v, in the production document %v", key, sandbox, kept)
		}
	})
	for _, tag := range doc.Tags {
		if tag.Name == "Sandbox" {
			t.Error("the production document keeps the Sandbox tag")
		}
	}
	if len(doc.Tags) != len(full.Tags)-1 || doc.Info.Description != full.Info.Description {
		t.Errorf("%d tags of %d, or the description changed", len(doc.Tags), len(full.Tags))
	}
	if _, err := WithoutSandbox([]byte("- a list")); err == nil {
		t.Error("a document that is not a mapping was filtered")
	}
	if got := ForListener([]byte("{{"), false, "https://api.example.com"); string(got) != "{{" {
		t.Errorf("an unreadable document became %q", got)
	}
}

// Each listener's document names its public address as its one server:
// the source's servers are the default loopback listeners, both of them,
// and a deployment's reference showed every operation at
// http://127.0.0.1:8080, the sandbox's listed beside production's.
func TestListenerDocumentNamesItsPublicAddress(t *testing.T) {
	t.Parallel()
	for _, sandbox := range []bool{false, true} {
		url := "https://api.example.com"
		if sandbox {
			url = "https://sandbox.example.com:8443"
		}
		served := ForListener(Spec, sandbox, url)
		if again := ForListener(Spec, sandbox, url); &again[0] != &served[0] {
			t.Error("the listener's document is not cached")
		}
		if err := CheckStrict(served); err != nil {
			t.Fatal(err)
		}
		doc, err := openapi3.NewLoader().LoadFromData(served)
		if err != nil {
			t.Fatal(err)
		}
		if err := doc.Validate(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(doc.Servers) != 1 || doc.Servers[0].URL != url {
			t.Errorf("sandbox %v: servers %+v, want only %s", sandbox, doc.Servers, url)
		}
		full := mustContract(t).Doc()
		if all := len(doc.Paths.Map()) == len(full.Paths.Map()); all != sandbox || doc.Info.Description != full.Info.Description {
			t.Errorf("sandbox %v: %d paths of %d, or the description changed", sandbox, len(doc.Paths.Map()), len(full.Paths.Map()))
		}
	}
	if _, err := WithServer([]byte("- a list"), "https://api.example.com", false); err == nil {
		t.Error("a document that is not a mapping was given a server")
	}
}

// Integers a client sends are bounded in the document: a maximum, or int64
// when only the type bounds them.
func TestRequestIntegersAreBounded(t *testing.T) {
	t.Parallel()
	var check func(at string, s *openapi3.Schema, seen map[*openapi3.Schema]bool)
	check = func(at string, s *openapi3.Schema, seen map[*openapi3.Schema]bool) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		if s.Type.Is("integer") && s.Max == nil && s.Format != "int64" {
			t.Errorf("%s: an integer without maximum", at)
		}
		for name, p := range s.Properties {
			check(at+"."+name, p.Value, seen)
		}
		if s.Items != nil {
			check(at+"[]", s.Items.Value, seen)
		}
		for _, sub := range slices.Concat(s.AllOf, s.OneOf, s.AnyOf) {
			check(at, sub.Value, seen)
		}
	}
	forEachOperation(mustContract(t).Doc(), func(key string, op *openapi3.Operation) {
		for _, p := range op.Parameters {
			check(key+" "+p.Value.Name, p.Value.Schema.Value, map[*openapi3.Schema]bool{})
		}
		if op.RequestBody != nil {
			for _, media := range op.RequestBody.Value.Content {
				check(key+" body", media.Schema.Value, map[*openapi3.Schema]bool{})
			}
		}
	})
}

// Every example in the document is a valid instance of its schema under the
// strict reading the tests apply to real responses: formats, nulls, and no
// undocumented field.
func TestExamplesMatchTheirSchemas(t *testing.T) {
	t.Parallel()
	c := mustContract(t)
	opts := append([]openapi3.SchemaValidationOption{openapi3.VisitAsResponse(), openapi3.MultiErrors()}, c.opts.SchemaValidationOptions...)
	checked := 0
	check := func(at string, media *openapi3.MediaType) {
		if media.Schema == nil || media.Schema.Value.Type.Is("string") {
			return
		}
		examples := map[string]any{}
		if media.Example != nil {
			examples["example"] = media.Example
		}
		for name, ex := range media.Examples {
			examples[name] = ex.Value.Value
		}
		for name, ex := range examples {
			body, err := json.Marshal(ex)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(body, &v); err != nil {
				t.Fatal(err)
			}
			checked++
			if err := media.Schema.Value.VisitJSON(v, opts...); err != nil {
				t.Errorf("%s example %s: %v", at, name, err)
			}
			if err := undocumentedFields(media.Schema.Value, body); err != nil {
				t.Errorf("%s example %s: %v", at, name, err)
			}
		}
	}
	var visit func(key string, op *openapi3.Operation)
	visit = func(key string, op *openapi3.Operation) {
		if op.RequestBody != nil {
			for mt, media := range op.RequestBody.Value.Content {
				check(key+" request "+mt, media)
			}
		}
		for code, resp := range op.Responses.Map() {
			for mt, media := range resp.Value.Content {
				check(key+" "+code+" "+mt, media)
			}
		}
		for name, cb := range op.Callbacks {
			for expr, item := range cb.Value.Map() {
				for method, cop := range item.Operations() {
					visit(key+" callback "+name+" "+method+" "+expr, cop)
				}
			}
		}
	}
	forEachOperation(c.Doc(), visit)
	if checked < 100 {
		t.Errorf("only %d examples checked", checked)
	}
}

// The notifications are documented as callbacks of POST /webhooks, one per
// entity, with an example of each of its events.
func TestWebhookCallbacks(t *testing.T) {
	t.Parallel()
	c := mustContract(t)
	op := c.Doc().Paths.Value("/external_api/v1/webhooks").Post
	events := map[string][]string{
		"orderEvent":   {"in_progress", "finished", "canceled"},
		"billingEvent": {"waiting_payment", "active", "finished", "canceled"},
		"billEvent":    {"pending", "paid", "overdue", "canceled"},
	}
	if len(op.Callbacks) != len(events) {
		t.Errorf("callbacks %v", op.Callbacks)
	}
	for name, want := range events {
		cb := op.Callbacks[name]
		if cb == nil {
			t.Errorf("no callback %s", name)
			continue
		}
		post := cb.Value.Value("{$request.body#/url}").Post
		media := post.RequestBody.Value.Content.Get("application/json")
		var got []string
		for event, ex := range media.Examples {
			got = append(got, event)
			body, _ := json.Marshal(ex.Value.Value)
			if err := c.ValidateWebhookEvent(body); err != nil {
				t.Errorf("%s example %s: %v", name, event, err)
			}
			var env struct{ Event string }
			if err := json.Unmarshal(body, &env); err != nil || env.Event != event {
				t.Errorf("%s example %s shows event %s", name, event, env.Event)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s examples %v, want %v", name, got, want)
		}
		for _, h := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
			if post.Parameters.GetByInAndName("header", h) == nil {
				t.Errorf("%s does not document the header %s", name, h)
			}
		}
	}
}

func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	c := mustContract(t)
	problem := []byte(`{"type": "https://api.parcela.test/docs/errors#method_not_allowed", "title": "Method not allowed",
		"status": 405, "detail": "PUT is not allowed on /external_api/v1/bills; use GET", "code": "method_not_allowed",
		"request_id": "req_4f7c1d0a2b9e4c519a3f6e2d"}`)
	req := httptest.NewRequest(http.MethodPut, "/external_api/v1/bills", nil)
	h := jsonHeader("application/problem+json")
	h.Set("Allow", "GET")
	h.Set("X-Request-Id", "req_4f7c1d0a2b9e4c519a3f6e2d")
	if err := c.ValidateResponse(req, 405, h, problem); err != nil {
		t.Fatalf("405 rejected: %v", err)
	}
	if err := c.ValidateResponse(req, 404, h, problem); err == nil {
		t.Error("a wrong method answered 404 accepted")
	}
	if err := c.ValidateResponse(req, 405, jsonHeader("application/problem+json"), problem); err == nil {
		t.Error("405 without Allow accepted")
	}
	if err := c.ValidateResponse(req, 405, h, mutate(t, problem, "code", deleteField)); err == nil {
		t.Error("405 without a problem body accepted")
	}
	withID := httptest.NewRequest(http.MethodDelete, "/external_api/v1/orders/c26c1c54-25a6-49dd-834c-4fd5e039e1f7", nil)
	if err := c.ValidateResponse(withID, 405, h, problem); err != nil {
		t.Errorf("405 on a path with an id rejected: %v", err)
	}
	if err := c.ValidateResponse(httptest.NewRequest(http.MethodPut, "/nowhere", nil), 405, h, problem); err == nil {
		t.Error("405 for a path the document does not have accepted")
	}
}

// An operation that takes Idempotency-Key replays its stored answer with
// Idempotent-Replayed: true, so each of its successes declares the header,
// a PATCH's and a DELETE's as a POST's.
func TestReplayedAnswersDeclareTheHeader(t *testing.T) {
	t.Parallel()
	forEachOperation(mustContract(t).Doc(), func(key string, op *openapi3.Operation) {
		if op.Parameters.GetByInAndName("header", "Idempotency-Key") == nil {
			return
		}
		for code, resp := range op.Responses.Map() {
			if !strings.HasPrefix(code, "2") {
				continue
			}
			if h := resp.Value.Headers["Idempotent-Replayed"]; h == nil || h.Ref != "#/components/headers/IdempotentReplayed" {
				t.Errorf("%s %s does not declare Idempotent-Replayed", key, code)
			}
		}
	})
}

// The Payment codes table names barcode_image_url for every boleto and
// Pix, and PaymentOrder sent readers to it: a payment inside an order (the
// charge's answer) has no such field, and an integrator looked for the
// Pix's QR code there. The schema says so while the form lacks it.
func TestPaymentOrderSaysItHasNoBarcodeImageURL(t *testing.T) {
	t.Parallel()
	schemas := mustContract(t).Doc().Components.Schemas
	order, bill := schemas["PaymentOrder"].Value, schemas["PaymentBill"].Value
	if _, ok := order.Properties["barcode_image_url"]; ok {
		return
	}
	if !strings.Contains(order.Description, "no `barcode_image_url`") {
		t.Errorf("PaymentOrder lacks barcode_image_url and does not say so: %s", order.Description)
	}
	if len(bill.AllOf) == 0 || !strings.Contains(mustContract(t).Doc().Info.Description, "has no such field") {
		t.Error("the Payment codes section does not say which form carries barcode_image_url")
	}
}
