package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// apiFunc is an API handler: it gets the request and its (size-checked,
// JSON) body and returns the status and value to render, or an error.
type apiFunc func(r *http.Request, body []byte) (int, any, error)

// api adapts an apiFunc: authentication, body limits, Idempotency-Key on
// POST, JSON or problem rendering.
func (s *Server) api(h apiFunc) http.Handler {
	return s.authenticate(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := readBody(w, r)
		if err != nil {
			writeError(w, r, err)
			return
		}
		key := r.Header.Get("Idempotency-Key")
		if r.Method != http.MethodPost || key == "" {
			status, out := s.call(h, r, body)
			writeRaw(w, status, out)
			return
		}
		if len(key) > 255 {
			writeError(w, r, fieldErr("Idempotency-Key", "too_long", "must be at most 255 characters"))
			return
		}
		a := authOf(r)
		sum := sha256.Sum256([]byte(r.Method + " " + r.URL.Path + "\n" + string(body)))
		replay, err := s.db.ClaimIdempotencyKey(r.Context(), a, key, hex.EncodeToString(sum[:]))
		if err != nil {
			writeError(w, r, err)
			return
		}
		if replay != nil {
			w.Header().Set("Idempotent-Replayed", "true")
			writeRaw(w, replay.Status, replay.Body)
			return
		}
		status, out := s.call(h, r, body)
		// A server error left nothing behind worth replaying: free the key
		// so the client's retry runs for real.
		ctx, cancel := detached(r)
		defer cancel()
		if status >= 500 {
			if err := s.db.ReleaseIdempotencyKey(ctx, a, key); err != nil {
				logger(r).Error("release idempotency key", "error", err.Error())
			}
		} else if err := s.db.CompleteIdempotencyKey(ctx, a, key, status, out); err != nil {
			logger(r).Error("store idempotent response", "error", err.Error())
		}
		writeRaw(w, status, out)
	}))
}

// call runs h and renders its result to bytes.
func (s *Server) call(h apiFunc, r *http.Request, body []byte) (int, []byte) {
	status, v, err := h(r, body)
	if err == nil && v != nil {
		out, merr := json.Marshal(v)
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
