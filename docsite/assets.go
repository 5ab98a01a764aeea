package docsite

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"net/http"
	"path"
	"strings"
	"time"
)

// The files under assets/ are served at /docs/assets/. redoc.standalone.js
// is Redoc 2.5.2 (MIT, redoc.LICENSE; bundled third-party notices in
// redoc.standalone.js.LICENSE.txt), byte for byte the bundles/ file of the
// npm package redoc@2.5.2: vendored so that the docs need no third-party
// host at run time.
//
//go:embed assets
var assetFiles embed.FS

// asset is a static file with what caching needs: a strong ETag from its
// content, and a gzipped copy when that is smaller.
type asset struct {
	name, contentType, etag string
	body, gzipped           []byte
}

// version is the short content hash that asset URLs carry (?v=), so a
// changed file gets a new URL and an unchanged one may be cached for a year.
func (a *asset) version() string { return a.etag[1:13] }

func (a *asset) url() string { return "/docs/assets/" + a.name + "?v=" + a.version() }

func newAsset(name, contentType string, body []byte) *asset {
	sum := sha256.Sum256(body)
	a := &asset{name: name, contentType: contentType, body: body, etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
	// Compressing into memory cannot fail; without gzip the asset is
	// served as it is.
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(body); err == nil && zw.Close() == nil && buf.Len() < len(body) {
		a.gzipped = buf.Bytes()
	}
	return a
}

func loadAssets() (map[string]*asset, error) {
	entries, err := assetFiles.ReadDir("assets")
	if err != nil {
		return nil, err
	}
	out := map[string]*asset{}
	for _, e := range entries {
		body, err := assetFiles.ReadFile("assets/" + e.Name())
		if err != nil {
			return nil, err
		}
		out[e.Name()] = newAsset(e.Name(), contentTypeOf(e.Name()), body)
	}
	return out, nil
}

func contentTypeOf(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	}
	return "text/plain; charset=utf-8"
}

// serve writes the asset with its ETag (answering If-None-Match with 304)
// and the cache policy: immutable for a year when the URL names this
// content's version, revalidated every time otherwise (pages).
func (a *asset) serve(w http.ResponseWriter, r *http.Request, immutable bool) {
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Add("Vary", "Accept-Encoding")
	if immutable {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	body, etag := a.body, a.etag
	if a.gzipped != nil && acceptsGzip(r) {
		body, etag = a.gzipped, strings.TrimSuffix(a.etag, `"`)+`-gzip"`
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("ETag", etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") && strings.ReplaceAll(params, " ", "") != "q=0" {
			return true
		}
	}
	return false
}
