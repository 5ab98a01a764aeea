package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// Contract checks requests and responses against Spec, for tests: a server
// test sends a request, then asks ValidateResponse whether the answer is one
// the document allows. Statuses the operation does not list are errors. A
// Contract is read-only once loaded and safe for concurrent use.
type Contract struct {
	doc    *openapi3.T
	router routers.Router
	opts   *openapi3filter.Options
}

// webhookData names the schema of a webhook event's data for each entity.
var webhookData = map[string]string{"order": "Order", "billing": "BillingOrder", "bill": "BillEndpoint"}

// LoadContract parses and validates Spec and builds its router. Servers are
// dropped so that paths match on any host and port (test servers).
func LoadContract() (*Contract, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(Spec)
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
			openapi3.WithStringFormatValidator("uuid", openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForUUIDOfRFC9562)),
		},
	}}, nil
}

// Doc is the loaded document (without servers). Do not modify it.
func (c *Contract) Doc() *openapi3.T { return c.doc }

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
// their schemas, required headers (X-Request-Id, Retry-After), and that the
// status is listed.
func (c *Contract) ValidateResponse(req *http.Request, status int, header http.Header, body []byte) error {
	in, err := c.input(req)
	if err != nil {
		return err
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header, Options: c.opts}
	out.SetBodyBytes(body)
	return openapi3filter.ValidateResponse(req.Context(), out)
}

// ValidateSchema checks a JSON document against components.schemas[name]
// (for example "Order"), as a response.
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
	return nil
}

// ValidateWebhookEvent checks a webhook notification body: the WebhookEvent
// envelope, then data against the schema of its entity.
func (c *Contract) ValidateWebhookEvent(body []byte) error {
	if err := c.ValidateSchema("WebhookEvent", body); err != nil {
		return err
	}
	var ev struct {
		Entity string          `json:"entity"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		return fmt.Errorf("api: WebhookEvent: %w", err)
	}
	return c.ValidateSchema(webhookData[ev.Entity], ev.Data)
}

func (c *Contract) input(req *http.Request) (*openapi3filter.RequestValidationInput, error) {
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		return nil, fmt.Errorf("api: %s %s: %w", req.Method, req.URL.Path, err)
	}
	return &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: c.opts}, nil
}
