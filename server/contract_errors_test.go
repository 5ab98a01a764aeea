package server_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"parcela"
)

// Every operation answers the errors it declares that any request can
// provoke, each as the document describes it (send checks every answer):
// 401 without a token, 404 for an id that does not exist, 422 for an
// Idempotency-Key past 255 characters or a per_page past 1000, 400, 413
// and 415 for a body that is not JSON, too large or not sent as JSON, and
// 405 for a method its path does not take.
func TestEveryOperationAnswersItsDeclaredErrors(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		big := `{"x": "` + strings.Repeat("x", 1<<20) + `"}`
		plain := map[string]string{"Content-Type": "text/plain"}
		for _, p := range []string{"/healthz", "/readyz", "/openapi.yaml"} {
			b.send(b.sandbox.URL, "", "GET", p, nil, nil).want(t, http.StatusOK)
		}
		for path, item := range b.contract.Doc().Paths.Map() {
			concrete := strings.NewReplacer("{id}", parcela.NewID()).Replace(path)
			methods := item.Operations()
			// Allow names every method the path takes, HEAD with GET (the
			// mux answers it as GET without the body).
			var allow []string
			for _, m := range []string{"GET", "POST", "PATCH", "PUT", "DELETE"} {
				if methods[m] != nil {
					allow = append(allow, m)
					if m == "GET" {
						allow = append(allow, "HEAD")
					}
				}
			}
			for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
				if methods[m] == nil {
					r := b.send(b.sandbox.URL, b.token, m, concrete, nil, nil).want(t, http.StatusMethodNotAllowed)
					if got := r.Header.Get("Allow"); path != "/openapi.yaml" && got != strings.Join(allow, ", ") {
						t.Errorf("%s %s: Allow %q, want %q", m, path, got, strings.Join(allow, ", "))
					}
					break
				}
			}
			for method, op := range methods {
				declares := func(status int) bool { return op.Responses.Status(status) != nil }
				public := op.Security != nil && len(*op.Security) == 0
				var body any
				if op.RequestBody != nil {
					if media := op.RequestBody.Value.Content.Get("application/json"); media != nil && media.Example != nil {
						raw, _ := json.Marshal(media.Example)
						body = raw
					} else if media != nil && len(media.Examples) > 0 {
						names := make([]string, 0, len(media.Examples))
						for name := range media.Examples {
							names = append(names, name)
						}
						slices.Sort(names)
						raw, _ := json.Marshal(media.Examples[names[0]].Value.Value)
						body = raw
					}
				}
				t.Run(method+" "+path, func(t *testing.T) {
					if declares(401) {
						b.send(b.sandbox.URL, "", method, concrete, body, nil).want(t, http.StatusUnauthorized)
					} else if !public {
						t.Errorf("%s %s needs a token but does not declare 401", method, path)
					}
					if op.Parameters.GetByInAndName("header", "Idempotency-Key") != nil {
						long := map[string]string{"Idempotency-Key": strings.Repeat("k", 256)}
						wantField(t, b.send(b.sandbox.URL, b.token, method, concrete, body, long).want(t, http.StatusUnprocessableEntity), "Idempotency-Key")
					}
					if p := op.Parameters.GetByInAndName("query", "per_page"); p != nil {
						// The declared maximum is served; one more is refused.
						most := int(*p.Schema.Value.Max)
						b.send(b.sandbox.URL, b.token, method, concrete+"?per_page="+strconv.Itoa(most), nil, nil).want(t, http.StatusOK)
						wantField(t, b.send(b.sandbox.URL, b.token, method, concrete+"?per_page="+strconv.Itoa(most+1), nil, nil).want(t, http.StatusUnprocessableEntity), "per_page")
					}
					if strings.Contains(path, "{id}") {
						if !declares(404) {
							t.Errorf("%s %s takes an id but does not declare 404", method, path)
						}
						b.send(b.sandbox.URL, b.token, method, concrete, body, nil).want(t, http.StatusNotFound)
					}
					if op.RequestBody == nil {
						return
					}
					for status, send := range map[int]func() resp{
						http.StatusBadRequest:            func() resp { return b.send(b.sandbox.URL, b.token, method, concrete, "{", nil) },
						http.StatusRequestEntityTooLarge: func() resp { return b.send(b.sandbox.URL, b.token, method, concrete, big, nil) },
						http.StatusUnsupportedMediaType:  func() resp { return b.send(b.sandbox.URL, b.token, method, concrete, "x=1", plain) },
					} {
						if !declares(status) {
							t.Errorf("%s %s takes a body but does not declare %d", method, path, status)
						}
						send().want(t, status)
					}
				})
			}
		}
	})
}

// wantField fails unless the problem r names field first.
func wantField(t *testing.T, r resp, field string) {
	t.Helper()
	var p struct{ Errors []struct{ Field string } }
	if err := json.Unmarshal(r.Body, &p); err != nil || len(p.Errors) == 0 || p.Errors[0].Field != field {
		t.Errorf("%d %s, not a problem with %s", r.Status, r.Body, field)
	}
}
