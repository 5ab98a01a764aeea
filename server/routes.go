package server

import "net/http"

// routes is every route of the API, on one page.
func (s *Server) routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", s.handleHealthz)
	mux.HandleFunc("GET /readyz", s.handleReadyz)
	mux.HandleFunc("GET /openapi.yaml", s.handleOpenAPI)
}
