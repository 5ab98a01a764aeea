package server

import (
	"net/http"

	"parcela"
)

func (s *Server) handleCharge(r *http.Request, body []byte) (int, any, error) {
	var req parcela.ChargeRequest
	if err := decode(body, &req, false); err != nil {
		return 0, nil, err
	}
	return answer(r, http.StatusOK, s.orderForm,
		func() (*parcela.Order, error) {
			return s.svc.Orders.ChargeOrder(r.Context(), authOf(r), pathID(r), req)
		})
}
