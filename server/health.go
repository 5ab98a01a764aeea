package server

import (
	"context"
	"net/http"
	"time"

	"parcela"
)

func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, r, http.StatusOK, map[string]string{"status": "ok"})
}

// handleReadyz is ready only when the database answers and takes writes:
// a full disk or a read-only database takes the instance out of rotation.
func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.svc.Health.Ready(ctx); err != nil {
		writeError(w, r, &parcela.Error{Code: parcela.EUNAVAILABLE, Message: "the database does not take writes", Cause: err})
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	w.Write(s.openAPI)
}
