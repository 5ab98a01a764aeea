package server

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"parcela"
)

// apiFunc is an API handler: it gets the request and its (size-checked,
// JSON) body and returns the status and value to render, or an error.
type apiFunc func(r *http.Request, body []byte) (int, any, error)

// api adapts an apiFunc of an operation that takes a JSON body:
// authentication, body limits, Idempotency-Key on POST, PATCH and DELETE, JSON or problem
// rendering.
func (s *Server) api(h apiFunc) http.Handler { return s.operation(h, true, nil) }

// apiUpdate adapts a PATCH as api does; get reads its entity as it stands,
// which answers the retry of a PATCH whose write committed but whose
// answer never came (answerUnanswered).
func (s *Server) apiUpdate(h, get apiFunc) http.Handler { return s.operation(h, true, get) }

// apiNoBody adapts an apiFunc of an operation that takes no body, as api
// does, except that a body sent is not read: the operation answers as
// without it, never 400, 413 or 415, which its contract does not list.
func (s *Server) apiNoBody(h apiFunc) http.Handler { return s.operation(h, false, nil) }

func (s *Server) operation(h apiFunc, takesBody bool, get apiFunc) http.Handler {
	return s.authenticate(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// No id but a UUID names anything: the rest are not looked up (a
		// NUL byte, say, must not reach the database).
		if id := r.PathValue("id"); id != "" {
			if !parcela.IsUUID(id) {
				writeError(w, r, parcela.NotFound(entityOf(r.Pattern)))
				return
			}
			if lower := parcela.LowerUUID(id); lower != id {
				r.SetPathValue("id", lower)
				// The path too, which a request's Idempotency-Key hash
				// reads: a retry naming the id in other letters was
				// refused as another request (an audit).
				r.URL.Path = strings.Replace(r.URL.Path, id, lower, 1)
				r.URL.RawPath = ""
			}
		}
		var body []byte
		if takesBody {
			var err error
			if body, err = readBody(w, r); err != nil {
				writeError(w, r, err)
				return
			}
		}
		key := r.Header.Get("Idempotency-Key")
		// Sent on two lines, the first would count: a key a client's
		// middleware added before the one it meant (its retry then ran
		// again), or an empty one that left the request without any.
		if r.Method != http.MethodGet && r.Method != http.MethodHead && len(r.Header.Values("Idempotency-Key")) > 1 {
			writeError(w, r, fieldErr("Idempotency-Key", "invalid", "must be sent once"))
			return
		}
		// Sent empty (or blank, which HTTP trims to empty), it is no key,
		// and a client whose key variable was unset believed its retries
		// safe while each made another order (an audit).
		if r.Method != http.MethodGet && r.Method != http.MethodHead && key == "" && len(r.Header.Values("Idempotency-Key")) == 1 {
			writeError(w, r, fieldErr("Idempotency-Key", "invalid", "must not be empty; leave the header out to send no key"))
			return
		}
		if r.Method == http.MethodGet || r.Method == http.MethodHead || key == "" {
			status, v, err := h(r, body)
			status, out := render(r, status, v, err)
			writeRaw(w, status, out)
			releaseBody(out)
			return
		}
		// A key is text, stored as such: bytes that are not UTF-8 (which
		// HTTP lets through) or control characters are no key, and its
		// length counts characters, as the API documents it.
		if !parcela.ValidText(key, parcela.SingleLine) {
			writeError(w, r, fieldErr("Idempotency-Key", "invalid", "must be UTF-8 text without control characters, line separators or direction overrides"))
			return
		}
		if parcela.TooLong(key, 255) {
			writeError(w, r, fieldErr("Idempotency-Key", "too_long", "must be at most 255 characters"))
			return
		}
		s.idempotent(w, r, h, get, body, key)
	}))
}

// render turns a handler's result into the status and bytes to write.
func render(r *http.Request, status int, v any, err error) (int, []byte) {
	if err == nil && v != nil {
		out, merr := marshal(v)
		if merr == nil {
			return status, out
		}
		err = fmt.Errorf("encode response: %w", merr)
	}
	if err == nil {
		return status, nil
	}
	return problemBytes(r, err)
}

func problemBytes(r *http.Request, err error) (int, []byte) {
	rec := &bufferWriter{header: http.Header{}}
	writeError(rec, r, err)
	return rec.status, rec.body
}

// writeRaw writes a rendered body; error statuses are problem documents.
func writeRaw(w http.ResponseWriter, status int, body []byte) {
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	ct := "application/json"
	if status >= 400 {
		ct = "application/problem+json"
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", retryUnavailable)
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// bufferWriter captures a response in memory.
type bufferWriter struct {
	header http.Header
	status int
	body   []byte
}

func (b *bufferWriter) Header() http.Header { return b.header }
func (b *bufferWriter) WriteHeader(s int)   { b.status = s }
func (b *bufferWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	b.body = append(b.body, p...)
	return len(p), nil
}

// pathID returns the {id} path value.
func pathID(r *http.Request) string { return r.PathValue("id") }

// idEntities names what the {id} after each collection is, as the store's
// not-found errors do, so a malformed id and a missing one answer alike.
var idEntities = map[string]string{
	"products": "product", "offers": "offer", "orders": "order", "billings": "billing", "bills": "bill",
	"webhooks": "webhook", "webhook_deliveries": "delivery", "payments": "payment",
}

// entityOf is the entity of a route pattern's {id}.
func entityOf(pattern string) string {
	before, _, _ := strings.Cut(pattern, "/{id}")
	return idEntities[before[strings.LastIndex(before, "/")+1:]]
}
