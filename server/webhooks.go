package server

import (
	"net/http"

	"parcela"
)

func (s *Server) handleListWebhooks(r *http.Request, _ []byte) (int, any, error) {
	ws, err := s.db.Webhooks(r.Context(), authOf(r))
	if err != nil {
		return 0, nil, err
	}
	out := make([]parcela.WebhookForm, 0, len(ws))
	for _, w := range ws {
		out = append(out, parcela.NewWebhookForm(w))
	}
	return http.StatusOK, out, nil
}

func (s *Server) handleCreateWebhook(r *http.Request, body []byte) (int, any, error) {
	var req parcela.WebhookRequest
	if err := decode(body, &req, false); err != nil {
		return 0, nil, err
	}
	w, err := s.db.CreateWebhook(r.Context(), authOf(r), req)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, parcela.WebhookSecretForm{WebhookForm: parcela.NewWebhookForm(w), Secret: w.Secret}, nil
}

func (s *Server) handleGetWebhook(r *http.Request, _ []byte) (int, any, error) {
	w, err := s.db.Webhook(r.Context(), authOf(r), pathID(r))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, parcela.NewWebhookForm(w), nil
}

func (s *Server) handleUpdateWebhook(r *http.Request, body []byte) (int, any, error) {
	var req parcela.WebhookRequest
	if err := decode(body, &req, false); err != nil {
		return 0, nil, err
	}
	w, err := s.db.UpdateWebhook(r.Context(), authOf(r), pathID(r), req)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, parcela.NewWebhookForm(w), nil
}

func (s *Server) handleDeleteWebhook(r *http.Request, _ []byte) (int, any, error) {
	if err := s.db.DeleteWebhook(r.Context(), authOf(r), pathID(r)); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

func (s *Server) handleRotateSecret(r *http.Request, _ []byte) (int, any, error) {
	w, err := s.db.RotateWebhookSecret(r.Context(), authOf(r), pathID(r))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, parcela.WebhookSecretForm{WebhookForm: parcela.NewWebhookForm(w), Secret: w.Secret}, nil
}

func (s *Server) handleListDeliveries(r *http.Request, _ []byte) (int, any, error) {
	page, perPage, err := pageParams(r)
	if err != nil {
		return 0, nil, err
	}
	a := authOf(r)
	webhookID := r.URL.Query().Get("webhook_id")
	if webhookID != "" {
		if _, err := s.db.Webhook(r.Context(), a, webhookID); err != nil {
			return 0, nil, err
		}
	}
	ds, total, err := s.db.Deliveries(r.Context(), a, webhookID, page, perPage)
	if err != nil {
		return 0, nil, err
	}
	out := make([]parcela.DeliveryForm, 0, len(ds))
	for _, d := range ds {
		out = append(out, parcela.NewDeliveryForm(d))
	}
	return http.StatusOK, newPage(out, total, perPage), nil
}

func (s *Server) handleRetryDelivery(r *http.Request, _ []byte) (int, any, error) {
	a := authOf(r)
	if err := s.db.RetryDelivery(r.Context(), a, pathID(r)); err != nil {
		return 0, nil, err
	}
	d, err := s.db.Delivery(r.Context(), a, pathID(r))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, parcela.NewDeliveryForm(d), nil
}
