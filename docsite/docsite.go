// Package docsite is the documentation site every API listener serves under
// /docs: the API reference (the listener's own /openapi.yaml rendered by a
// vendored Redoc), the error catalogue that problem types link to, and the
// guides, written in Markdown and rendered when the site is built. Nothing
// is fetched from another host: the page's Content-Security-Policy allows
// the listener's own origin only.
package docsite

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// contentSecurityPolicy keeps every page on its own origin. Redoc needs
// inline styles (styled-components) and a blob: worker (search); images
// are limited to self and data: URLs, which also stops Redoc's sidebar logo
// from loading off cdn.redoc.ly.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self'; connect-src 'self'; worker-src blob:; child-src blob:; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Site is the built documentation: every page rendered once.
type Site struct {
	assets map[string]*asset
	pages  map[string]*asset // path → rendered HTML page
}

// New builds the site: it renders the reference page, the error catalogue
// and the guides.
func New() (*Site, error) {
	assets, err := loadAssets()
	if err != nil {
		return nil, fmt.Errorf("docsite: %w", err)
	}
	s := &Site{assets: assets, pages: map[string]*asset{}}
	if err := s.render(); err != nil {
		return nil, fmt.Errorf("docsite: %w", err)
	}
	return s, nil
}

// Handler is the site every listener mounts at GET /docs and GET /docs/,
// built on first use. The site is compiled into the binary and its tests
// build it, so a build error is a programming error: the handler answers
// 500 with it rather than taking the API down.
func Handler() http.Handler {
	site, err := built()
	if err != nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		})
	}
	return site
}

var built = sync.OnceValues(New)

// ServeHTTP answers the pages and the assets. Unknown paths are 404.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if r.URL.Path == "/docs/" {
		http.Redirect(w, r, "/docs", http.StatusMovedPermanently)
		return
	}
	if page, ok := s.pages[r.URL.Path]; ok {
		w.Header().Set("Content-Security-Policy", contentSecurityPolicy)
		w.Header().Set("Referrer-Policy", "no-referrer")
		page.serve(w, r, false)
		return
	}
	if name, ok := strings.CutPrefix(r.URL.Path, "/docs/assets/"); ok {
		if a, ok := s.assets[name]; ok {
			a.serve(w, r, r.URL.Query().Get("v") == a.version())
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusNotFound)
	fmt.Fprintf(w, "No page %s. The documentation starts at /docs.\n", r.URL.Path)
}
