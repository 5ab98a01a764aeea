package server

import (
	"net/http"

	"parcela"
)

func (s *Server) handleCreateOrder(r *http.Request, body []byte) (int, any, error) {
	var req parcela.OrderRequest
	if err := decode(body, &req, false); err != nil {
		return 0, nil, err
	}
	o, err := s.db.CreateOrder(r.Context(), authOf(r), req)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, parcela.NewOrderForm(o, s.links()), nil
}

func (s *Server) handleGetOrder(r *http.Request, _ []byte) (int, any, error) {
	o, err := s.db.Order(r.Context(), authOf(r), pathID(r))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, parcela.NewOrderForm(o, s.links()), nil
}

func (s *Server) handleCancelOrder(r *http.Request, body []byte) (int, any, error) {
	var req struct {
		Reason *string `json:"reason"`
	}
	if err := decode(body, &req, true); err != nil {
		return 0, nil, err
	}
	reason, err := parcela.CancelReason(req.Reason)
	if err != nil {
		return 0, nil, err
	}
	o, err := s.db.CancelOrder(r.Context(), authOf(r), pathID(r), reason)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, parcela.NewOrderForm(o, s.links()), nil
}

func (s *Server) handleGetBilling(r *http.Request, _ []byte) (int, any, error) {
	b, err := s.db.Billing(r.Context(), authOf(r), pathID(r))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, parcela.NewBillingOrderForm(b, s.links()), nil
}

func (s *Server) handleCancelBilling(r *http.Request, body []byte) (int, any, error) {
	var req struct {
		CancelationReason *string `json:"cancelation_reason"`
	}
	if err := decode(body, &req, false); err != nil {
		return 0, nil, err
	}
	reason, err := parcela.BillingCancelReason(req.CancelationReason)
	if err != nil {
		return 0, nil, err
	}
	b, err := s.db.CancelBilling(r.Context(), authOf(r), pathID(r), reason)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, parcela.NewBillingOrderForm(b, s.links()), nil
}
