package server_test

import (
	"net/http"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"parcela"
	"parcela/sqldb/sqldbtest"
)

// Each listener's /openapi.yaml, the document /docs renders, names that
// listener's public address as its one server. It named the source's
// loopback defaults, production's and the sandbox's together, so a
// deployment's reference showed every operation at http://127.0.0.1:8080.
func TestServedDocumentNamesTheListenersPublicAddress(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		for env, base := range map[parcela.Environment]string{parcela.Production: b.production.URL, parcela.Sandbox: b.sandbox.URL} {
			r := b.send(base, "", "GET", "/openapi.yaml", nil, nil).want(t, http.StatusOK)
			doc, err := openapi3.NewLoader().LoadFromData(r.Body)
			if err != nil {
				t.Fatal(err)
			}
			var urls []string
			for _, s := range doc.Servers {
				urls = append(urls, s.URL)
			}
			if want := sqldbtest.Links[env].PublicURL; len(urls) != 1 || urls[0] != want {
				t.Errorf("%s: servers %v, want only %s", env, urls, want)
			}
		}
	})
}
