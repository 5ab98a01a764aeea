package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// Contract checks requests and responses against Spec, for tests: a server
// test sends a request, then asks ValidateResponse whether the answer is one
// the document allows. The reading is strict: statuses the operation does
// not list are errors, formats (date-time, date, uuid, int64) are checked,
// and a response may carry no field its schema does not document. A
// Contract is read-only once loaded and safe for concurrent use.
type Contract struct {
	doc    *openapi3.T
	router routers.Router
	opts   *openapi3filter.Options
}

// webhookEvent names the schema of the notification body of each entity.
var webhookEvent = map[string]string{"order": "OrderWebhookEvent", "billing": "BillingWebhookEvent", "bill": "BillWebhookEvent"}

// LoadContract parses and validates Spec, checks it is strict OpenAPI 3.0
// (see CheckStrict), and builds its router. Servers are dropped so that
// paths match on any host and port (test servers).
func LoadContract() (*Contract, error) {
	if err := CheckStrict(Spec); err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(Spec)
	if err != nil {
		return nil, fmt.Errorf("api: loading openapi.yaml: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("api: openapi.yaml is invalid: %w", err)
	}
	doc.Servers = nil
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("api: routing openapi.yaml: %w", err)
	}
	return &Contract{doc: doc, router: router, opts: &openapi3filter.Options{
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
		IncludeResponseStatus: true,
		SkipSettingDefaults:   true,
		MultiError:            true,
		SchemaValidationOptions: []openapi3.SchemaValidationOption{
			openapi3.DisableSchemaErrorDetails(), // name the field, not the whole schema
			openapi3.EnableFormatValidation(),
			openapi3.WithStringFormatValidator("uuid", openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForUUIDOfRFC9562)),
		},
	}}, nil
}

// Doc is the loaded document (without servers). Do not modify it.
func (c *Contract) Doc() *openapi3.T { return c.doc }

// Operation names the operation req matches as "METHOD /path template"
// (GET /external_api/v1/bills/{id}), or "" when it matches none.
func (c *Contract) Operation(req *http.Request) string {
	route, _, err := c.router.FindRoute(req)
	if err != nil {
		return ""
	}
	return route.Method + " " + route.Path
}

// ValidateRequest checks a client request (path, query, headers, and body
// when not nil) against its operation; security is not checked. A body sent
// without Content-Type is taken as application/json.
func (c *Contract) ValidateRequest(req *http.Request, body []byte) error {
	req = req.Clone(req.Context())
	req.Body, req.ContentLength = nil, 0
	if body != nil {
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		if req.Header.Get("Content-Type") == "" {
			req.Header.Set("Content-Type", "application/json")
		}
	}
	in, err := c.input(req)
	if err != nil {
		return err
	}
	return openapi3filter.ValidateRequest(req.Context(), in)
}

// ValidateResponse checks a response (status, headers and body) to req
// against the operation req matches: JSON and problem+json bodies against
// their schemas, with no undocumented field; required headers
// (X-Request-Id, Retry-After); and that the status is listed. A request
// whose path exists under other methods only must be answered with the
// document's 405 (components.responses.MethodNotAllowed).
func (c *Contract) ValidateResponse(req *http.Request, status int, header http.Header, body []byte) error {
	in, err := c.input(req)
	if err != nil && c.pathExists(req) {
		return c.validateMethodNotAllowed(req, status, header, body)
	} else if err != nil {
		return err
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header, Options: c.opts}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(req.Context(), out); err != nil {
		return err
	}
	if err := sameRequestID(header, body); err != nil {
		return err
	}
	resp := in.Route.Operation.Responses.Status(status)
	if resp == nil || resp.Value == nil {
		return nil // ValidateResponse has refused unlisted statuses
	}
	media := resp.Value.Content.Get(header.Get("Content-Type"))
	if media == nil || media.Schema == nil || !strings.Contains(header.Get("Content-Type"), "json") {
		return nil
	}
	return undocumentedFields(media.Schema.Value, body)
}

// sameRequestID checks that a problem names the request it answers, as
// its X-Request-Id does, unless it is the stored answer of an earlier
// request with the same Idempotency-Key, replayed as it was written.
func sameRequestID(header http.Header, body []byte) error {
	if !strings.HasPrefix(header.Get("Content-Type"), "application/problem+json") || header.Get("Idempotent-Replayed") == "true" {
		return nil
	}
	var p struct {
		RequestID string `json:"request_id"`
	}
	if json.Unmarshal(body, &p) != nil {
		return nil // not JSON: the schema validation has said so
	}
	if id := header.Get("X-Request-Id"); p.RequestID != id {
		return fmt.Errorf("api: the problem's request_id %q is not its X-Request-Id %q", p.RequestID, id)
	}
	return nil
}

// pathExists tells whether the document has req's path under some method.
// (The router's own "method not allowed" is reported for some paths only.)
func (c *Contract) pathExists(req *http.Request) bool {
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := req.Clone(req.Context())
		probe.Method = m
		if _, _, err := c.router.FindRoute(probe); err == nil {
			return true
		}
	}
	return false
}

func (c *Contract) validateMethodNotAllowed(req *http.Request, status int, header http.Header, body []byte) error {
	if status != http.StatusMethodNotAllowed {
		return fmt.Errorf("api: %s %s: the path does not take %s, yet the answer is %d, not 405", req.Method, req.URL.Path, req.Method, status)
	}
	resp := c.doc.Components.Responses["MethodNotAllowed"].Value
	var errs []string
	for name, h := range resp.Headers {
		if h.Value.Required && header.Get(name) == "" {
			errs = append(errs, "header "+name+" is missing")
		}
	}
	if header.Get("Allow") == "" {
		errs = append(errs, "header Allow is missing")
	}
	if ct := header.Get("Content-Type"); resp.Content.Get(ct) == nil {
		errs = append(errs, "Content-Type "+ct+" is not application/problem+json")
	}
	if err := c.ValidateSchema("Problem", body); err != nil {
		errs = append(errs, err.Error())
	}
	if err := sameRequestID(header, body); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return fmt.Errorf("api: %s %s → 405: %s", req.Method, req.URL.Path, strings.Join(errs, "; "))
	}
	return nil
}

// ValidateSchema checks a JSON document against components.schemas[name]
// (for example "Order"), as a response: formats checked, no undocumented
// field.
func (c *Contract) ValidateSchema(name string, body []byte) error {
	ref := c.doc.Components.Schemas[name]
	if ref == nil {
		return fmt.Errorf("api: no schema %q", name)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("api: %s: %w", name, err)
	}
	opts := append([]openapi3.SchemaValidationOption{openapi3.VisitAsResponse(), openapi3.MultiErrors()}, c.opts.SchemaValidationOptions...)
	if err := ref.Value.VisitJSON(v, opts...); err != nil {
		return fmt.Errorf("api: %s: %w", name, err)
	}
	if err := undocumentedFields(ref.Value, body); err != nil {
		return fmt.Errorf("api: %s: %w", name, err)
	}
	return nil
}

// ValidateWebhookEvent checks a webhook notification body against the
// event schema of its entity (OrderWebhookEvent, BillingWebhookEvent or
// BillWebhookEvent): the envelope, the event names the entity allows, and
// data as the entity's GET form.
func (c *Contract) ValidateWebhookEvent(body []byte) error {
	var ev struct {
		Entity string `json:"entity"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		return fmt.Errorf("api: webhook event: %w", err)
	}
	name, ok := webhookEvent[ev.Entity]
	if !ok {
		return fmt.Errorf("api: webhook event of unknown entity %q", ev.Entity)
	}
	return c.ValidateSchema(name, body)
}

func (c *Contract) input(req *http.Request) (*openapi3filter.RequestValidationInput, error) {
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		return nil, fmt.Errorf("api: %s %s: %w", req.Method, req.URL.Path, err)
	}
	return &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: c.opts}, nil
}

// undocumentedFields reports the fields of a JSON body that schema s does
// not declare, at any depth. Objects whose schema declares no properties
// (free-form ones such as a product's metadata) may hold anything.
func undocumentedFields(s *openapi3.Schema, body []byte) error {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil // not JSON: the schema validation has said so
	}
	var found []string
	walkUndocumented(s, v, "", &found)
	if len(found) == 0 {
		return nil
	}
	slices.Sort(found)
	return fmt.Errorf("undocumented fields: %s", strings.Join(slices.Compact(found), ", "))
}

func walkUndocumented(s *openapi3.Schema, v any, at string, found *[]string) {
	if s == nil {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		props, _ := ObjectProperties(s, v)
		if len(props) == 0 { // a free-form object
			return
		}
		for k, child := range v {
			p, ok := props[k]
			if !ok {
				*found = append(*found, at+k)
				continue
			}
			walkUndocumented(p, child, at+k+".", found)
		}
	case []any:
		if s.Items == nil {
			for _, sub := range s.AllOf {
				walkUndocumented(sub.Value, v, at, found)
			}
			return
		}
		for i, child := range v {
			walkUndocumented(s.Items.Value, child, fmt.Sprintf("%s%d.", at, i), found)
		}
	}
}

// ObjectProperties returns every property s declares for object v, and
// which of them it requires, through allOf and through the oneOf/anyOf
// branch v matches.
func ObjectProperties(s *openapi3.Schema, v map[string]any) (props map[string]*openapi3.Schema, required map[string]bool) {
	props, required = map[string]*openapi3.Schema{}, map[string]bool{}
	var add func(s *openapi3.Schema)
	add = func(s *openapi3.Schema) {
		for name, p := range s.Properties {
			props[name] = p.Value
		}
		for _, name := range s.Required {
			required[name] = true
		}
		for _, sub := range s.AllOf {
			add(sub.Value)
		}
		for _, sub := range append(slices.Clone(s.OneOf), s.AnyOf...) {
			if sub.Value.IsMatchingJSONObject(v) {
				add(sub.Value)
				break
			}
		}
	}
	add(s)
	return props, required
}

// ResponseSchema is the schema of the body the operation req matches
// declares for status in contentType, or nil when it declares none.
func (c *Contract) ResponseSchema(req *http.Request, status int, contentType string) *openapi3.Schema {
	route, _, err := c.router.FindRoute(req)
	if err != nil {
		return nil
	}
	resp := route.Operation.Responses.Status(status)
	if resp == nil || resp.Value == nil {
		return nil
	}
	media := resp.Value.Content.Get(contentType)
	if media == nil || media.Schema == nil {
		return nil
	}
	return media.Schema.Value
}
