package docsite_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"parcela/docsite"
)

// bundle is what a test gets from setup: the built site.
type bundle struct {
	t    *testing.T
	site *docsite.Site
}

func setup(t *testing.T) *bundle {
	t.Helper()
	site, err := docsite.New()
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{t: t, site: site}
}

// get requests target with the given headers (name, value pairs).
func (b *bundle) get(target string, header ...string) *http.Response {
	b.t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	b.site.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var srcOrHref = regexp.MustCompile(`(?:src|href)="([^"]+)"`)

func TestReferencePage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.get("/docs")
	page := body(t, r)
	if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /docs: %d %s", r.StatusCode, r.Header.Get("Content-Type"))
	}
	csp := r.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "img-src 'self' data:", "font-src 'self'", "connect-src 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "http") {
		t.Errorf("Content-Security-Policy allows another host: %s", csp)
	}
	// Every address the page loads is on the listener itself.
	var scripts []string
	for _, m := range srcOrHref.FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(m[1], "/") || strings.HasPrefix(m[1], "//") {
			t.Errorf("the page links off the listener: %s", m[1])
		}
		if strings.HasPrefix(m[1], "/docs/assets/") && strings.HasSuffix(strings.SplitN(m[1], "?", 2)[0], ".js") {
			scripts = append(scripts, m[1])
		}
	}
	if len(scripts) != 2 || !strings.Contains(scripts[0], "redoc.standalone.js?v=") {
		t.Fatalf("scripts %v, want Redoc then its set-up", scripts)
	}
	setupJS := body(t, b.get(scripts[1]))
	if !strings.Contains(setupJS, "Redoc.init('/openapi.yaml'") {
		t.Errorf("the reference does not render the listener's /openapi.yaml:\n%s", setupJS)
	}
	// Pages are revalidated: a new binary shows new content at once.
	if r.Header.Get("Cache-Control") != "no-cache" || r.Header.Get("ETag") == "" {
		t.Errorf("page caching: Cache-Control %q, ETag %q", r.Header.Get("Cache-Control"), r.Header.Get("ETag"))
	}
	if again := b.get("/docs", "If-None-Match", r.Header.Get("ETag")); again.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with the ETag: %d, want 304", again.StatusCode)
	}
}

// The vendored Redoc is the npm package's bundle, served for a year under
// a versioned address, compressed when the browser takes gzip.
func TestRedocBundle(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var src string
	for _, m := range srcOrHref.FindAllStringSubmatch(body(t, b.get("/docs")), -1) {
		if strings.Contains(m[1], "redoc.standalone.js") {
			src = m[1]
		}
	}
	r := b.get(src)
	js := body(t, r)
	sum := sha256.Sum256([]byte(js))
	if hex.EncodeToString(sum[:]) != "6beb5aea23b71d09122ee35de8f326e38aec050e774f3bfba1f34e5c36608986" {
		t.Error("assets/redoc.standalone.js is not bundles/redoc.standalone.js of redoc@2.5.2")
	}
	if r.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/javascript") {
		t.Errorf("bundle headers %v", r.Header)
	}
	// The bundle loads no fonts or styles from another host (its sidebar
	// logo, off cdn.redoc.ly, is refused by img-src).
	for _, host := range []string{"fonts.googleapis.com", "fonts.gstatic.com", "unpkg.com", "jsdelivr"} {
		if strings.Contains(js, host) {
			t.Errorf("the bundle mentions %s", host)
		}
	}
	etag := r.Header.Get("ETag")
	if b.get(src, "If-None-Match", etag).StatusCode != http.StatusNotModified {
		t.Error("If-None-Match with the ETag is not 304")
	}
	gz := b.get(src, "Accept-Encoding", "br, gzip")
	if gz.Header.Get("Content-Encoding") != "gzip" || gz.Header.Get("ETag") == etag || !strings.Contains(gz.Header.Get("Vary"), "Accept-Encoding") {
		t.Fatalf("gzip answer headers %v", gz.Header)
	}
	zr, err := gzip.NewReader(gz.Body)
	if err != nil {
		t.Fatal(err)
	}
	unzipped, _ := io.ReadAll(zr)
	if !bytes.Equal(unzipped, []byte(js)) {
		t.Error("the gzipped bundle differs from the bundle")
	}
	if r := b.get(src, "Accept-Encoding", "gzip;q=0"); r.Header.Get("Content-Encoding") != "" {
		t.Error("gzip sent to a client that refuses it")
	}
	// An address without this content's version is not cached for a year.
	if r := b.get("/docs/assets/redoc.standalone.js?v=stale"); r.StatusCode != 200 || r.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("stale version: %d %s", r.StatusCode, r.Header.Get("Cache-Control"))
	}
}

func TestGuides(t *testing.T) {
	t.Parallel()
	b := setup(t)
	index := body(t, b.get("/docs/guides"))
	for _, g := range docsite.Guides {
		if !strings.Contains(index, `href="/docs/guides/`+g.Slug+`"`) {
			t.Errorf("the guides index does not link %s", g.Slug)
		}
		r := b.get("/docs/guides/" + g.Slug)
		page := body(t, r)
		if r.StatusCode != 200 || !strings.Contains(page, ">"+g.Title+"</h1>") {
			t.Errorf("guide %s: %d, no <h1> %q", g.Slug, r.StatusCode, g.Title)
		}
		if r.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("guide %s has no Content-Security-Policy", g.Slug)
		}
		if strings.Contains(page, "<script") {
			t.Errorf("guide %s runs a script", g.Slug)
		}
	}
	lifecycle := body(t, b.get("/docs/guides/payments-lifecycle"))
	for _, entity := range []string{"[*] --> pending: POST /orders", "[*] --> waiting_payment", "overdue --> paid", "unpaid --> expired"} {
		if !strings.Contains(lifecycle, strings.ReplaceAll(entity, ">", "&gt;")) {
			t.Errorf("the lifecycle guide lacks the state diagram line %q", entity)
		}
	}
	webhooks := body(t, b.get("/docs/guides/webhooks"))
	for _, lang := range []string{"language-go", "language-js", "language-python"} {
		if !strings.Contains(webhooks, lang) {
			t.Errorf("the webhooks guide has no %s example", lang)
		}
	}
}

// Every link between the site's pages leads somewhere: the page exists,
// and so does the anchor.
func TestInternalLinks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pages := []string{"/docs", "/docs/errors", "/docs/guides"}
	for _, g := range docsite.Guides {
		pages = append(pages, "/docs/guides/"+g.Slug)
	}
	for _, p := range pages {
		for _, m := range srcOrHref.FindAllStringSubmatch(body(t, b.get(p)), -1) {
			link := m[1]
			if !strings.HasPrefix(link, "/docs") || strings.HasPrefix(link, "/docs/assets/") {
				continue
			}
			target, anchor, _ := strings.Cut(link, "#")
			if target == "/docs" && anchor != "" {
				continue // an address inside the reference, resolved by Redoc
			}
			r := b.get(target)
			html := body(t, r)
			if r.StatusCode != 200 {
				t.Errorf("%s links %s: %d", p, link, r.StatusCode)
			} else if anchor != "" && !strings.Contains(html, `id="`+anchor+`"`) {
				t.Errorf("%s links %s: no such anchor", p, link)
			}
		}
	}
}

func TestUnknownAddresses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for target, status := range map[string]int{"/docs/nope": 404, "/docs/assets/nope.js": 404, "/docs/guides/nope": 404, "/docs/": 301} {
		if r := b.get(target); r.StatusCode != status {
			t.Errorf("GET %s: %d, want %d", target, r.StatusCode, status)
		}
	}
	rec := httptest.NewRecorder()
	b.site.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/docs", nil))
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /docs: %d, Allow %q", rec.Code, rec.Header().Get("Allow"))
	}
}

func TestHandlerIsBuiltOnce(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	docsite.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/docs/errors", nil))
	if rec.Code != 200 {
		t.Fatalf("GET /docs/errors through Handler: %d", rec.Code)
	}
	if docsite.Handler() != docsite.Handler() {
		t.Error("Handler builds a new site every call")
	}
}
