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
	return answer(r, http.StatusCreated, s.orderForm,
		func() (*parcela.Order, error) { return s.svc.Orders.CreateOrder(r.Context(), authOf(r), req) })
}

func (s *Server) orderForm(o *parcela.Order) any { return parcela.NewOrderForm(o, s.links()) }

func (s *Server) handleGetOrder(r *http.Request, _ []byte) (int, any, error) {
	o, err := s.svc.Orders.Order(r.Context(), authOf(r), pathID(r))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, parcela.NewOrderForm(o, s.links()), nil
}

func (s *Server) handleCancelOrder(r *http.Request, body []byte) (int, any, error) {
	// cancelation_reason is taken too, as the billing's cancel and the
	// order's own field name it: ignored as an unknown field, it recorded
	// customer_dropout for the refunded_by_company its caller sent.
	var req struct {
		Reason            *string `json:"reason"`
		CancelationReason *string `json:"cancelation_reason"`
	}
	if err := decode(body, &req, true); err != nil {
		return 0, nil, err
	}
	field := "reason"
	if req.Reason == nil {
		req.Reason, field = req.CancelationReason, "cancelation_reason"
	} else if req.CancelationReason != nil && *req.CancelationReason != *req.Reason {
		var v parcela.Validation
		v.Add("cancelation_reason", "invalid", "must be the reason given, or left out")
		return 0, nil, v.Err()
	}
	reason, err := parcela.CancelReason(field, req.Reason)
	if err != nil {
		return 0, nil, err
	}
	return answer(r, http.StatusOK, s.orderForm,
		func() (*parcela.Order, error) {
			return s.svc.Orders.CancelOrder(r.Context(), authOf(r), pathID(r), reason)
		})
}

func (s *Server) handleGetBilling(r *http.Request, _ []byte) (int, any, error) {
	b, err := s.svc.Billings.Billing(r.Context(), authOf(r), pathID(r))
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
	return answer(r, http.StatusOK, func(b *parcela.Billing) any { return parcela.NewBillingOrderForm(b, s.links()) },
		func() (*parcela.Billing, error) {
			return s.svc.Billings.CancelBilling(r.Context(), authOf(r), pathID(r), reason)
		})
}
