package server

import (
	"net/http"

	"parcela"
)

func (s *Server) handleListWebhooks(r *http.Request, _ []byte) (int, any, error) {
	// A company has at most MaxWebhooks: the listing is one page, and a
	// page or filter sent to it would be ignored without a word.
	if _, err := readQuery(r); err != nil {
		return 0, nil, err
	}
	ws, err := s.svc.Webhooks.Webhooks(r.Context(), authOf(r))
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
	return answer(r, http.StatusCreated, webhookSecretForm,
		func() (*parcela.Webhook, error) { return s.svc.Webhooks.CreateWebhook(r.Context(), authOf(r), req) })
}

// webhookSecretForm shows a webhook with its secret, once.
func webhookSecretForm(w *parcela.Webhook) any {
	return parcela.WebhookSecretForm{WebhookForm: parcela.NewWebhookForm(w), Secret: w.Secret}
}

func (s *Server) handleGetWebhook(r *http.Request, _ []byte) (int, any, error) {
	w, err := s.svc.Webhooks.Webhook(r.Context(), authOf(r), pathID(r))
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
	if _, err := patchNulls(body, "", req); err != nil {
		return 0, nil, err
	}
	w, err := s.svc.Webhooks.UpdateWebhook(r.Context(), authOf(r), pathID(r), req)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, parcela.NewWebhookForm(w), nil
}

func (s *Server) handleDeleteWebhook(r *http.Request, _ []byte) (int, any, error) {
	if err := s.svc.Webhooks.DeleteWebhook(r.Context(), authOf(r), pathID(r)); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

func (s *Server) handleRotateSecret(r *http.Request, _ []byte) (int, any, error) {
	return answer(r, http.StatusOK, webhookSecretForm,
		func() (*parcela.Webhook, error) {
			return s.svc.Webhooks.RotateWebhookSecret(r.Context(), authOf(r), pathID(r))
		})
}

func (s *Server) handleListDeliveries(r *http.Request, _ []byte) (int, any, error) {
	q, err := readQuery(r, "webhook_id", "page", "per_page")
	if err != nil {
		return 0, nil, err
	}
	page, err := q.page()
	if err != nil {
		return 0, nil, err
	}
	webhookID, err := q.one("webhook_id")
	if err != nil {
		return 0, nil, err
	}
	a := authOf(r)
	ds, total, err := s.svc.Webhooks.Deliveries(r.Context(), a, webhookID, page)
	if err != nil {
		return 0, nil, err
	}
	out := make([]parcela.DeliveryForm, 0, len(ds))
	for _, d := range ds {
		out = append(out, parcela.NewDeliveryForm(d))
	}
	return http.StatusOK, newPage(out, total, page.PerPage), nil
}

func (s *Server) handleGetDelivery(r *http.Request, _ []byte) (int, any, error) {
	return answer(r, http.StatusOK, func(d *parcela.Delivery) any { return parcela.NewDeliveryForm(d) },
		func() (*parcela.Delivery, error) {
			return s.svc.Webhooks.Delivery(r.Context(), authOf(r), pathID(r))
		})
}

func (s *Server) handleRetryDelivery(r *http.Request, _ []byte) (int, any, error) {
	return answer(r, http.StatusOK, func(d *parcela.Delivery) any { return parcela.NewDeliveryForm(d) },
		func() (*parcela.Delivery, error) {
			return s.svc.Webhooks.RetryDelivery(r.Context(), authOf(r), pathID(r))
		})
}
