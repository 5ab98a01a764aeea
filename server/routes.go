package server

import (
	"net/http"

	"parcela"
	"parcela/docsite"
)

// routes is every route of the API, on one page. An operation whose
// contract takes a body is served by api, any other by apiNoBody.
func (s *Server) routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", s.handleHealthz)
	mux.HandleFunc("GET /readyz", s.handleReadyz)
	mux.HandleFunc("GET /openapi.yaml", s.handleOpenAPI)
	mux.Handle("GET /docs", docsite.Handler())
	mux.Handle("GET /docs/", docsite.Handler())

	const v1 = "/external_api/v1"
	mux.Handle("POST "+v1+"/products", s.api(s.handleCreateProduct))
	mux.Handle("GET "+v1+"/products", s.apiNoBody(s.handleListProducts))
	mux.Handle("GET "+v1+"/products/{id}", s.apiNoBody(s.handleGetProduct))
	mux.Handle("PATCH "+v1+"/products/{id}", s.apiUpdate(s.handleUpdateProduct, s.handleGetProduct))

	mux.Handle("POST "+v1+"/offers", s.api(s.handleCreateOffer))
	mux.Handle("GET "+v1+"/offers", s.apiNoBody(s.handleListOffers))
	mux.Handle("GET "+v1+"/offers/{id}", s.apiNoBody(s.handleGetOffer))
	mux.Handle("PATCH "+v1+"/offers/{id}", s.apiUpdate(s.handleUpdateOffer, s.handleGetOffer))

	mux.Handle("POST "+v1+"/orders", s.api(s.handleCreateOrder))
	mux.Handle("GET "+v1+"/orders/{id}", s.apiNoBody(s.handleGetOrder))
	mux.Handle("POST "+v1+"/orders/{id}/cancel", s.api(s.handleCancelOrder))
	mux.Handle("POST "+v1+"/orders/{id}/charge", s.api(s.handleCharge))

	mux.Handle("GET "+v1+"/billings/{id}", s.apiNoBody(s.handleGetBilling))
	mux.Handle("POST "+v1+"/billings/{id}/cancel", s.api(s.handleCancelBilling))

	mux.Handle("GET "+v1+"/bills", s.apiNoBody(s.handleListBills))
	mux.Handle("GET "+v1+"/bills/{id}", s.apiNoBody(s.handleGetBill))
	mux.Handle("PATCH "+v1+"/bills/{id}", s.apiUpdate(s.handleUpdateBill, s.handleGetBill))

	mux.Handle("GET "+v1+"/webhooks", s.apiNoBody(s.handleListWebhooks))
	mux.Handle("POST "+v1+"/webhooks", s.api(s.handleCreateWebhook))
	mux.Handle("GET "+v1+"/webhooks/{id}", s.apiNoBody(s.handleGetWebhook))
	mux.Handle("PATCH "+v1+"/webhooks/{id}", s.apiUpdate(s.handleUpdateWebhook, s.handleGetWebhook))
	mux.Handle("DELETE "+v1+"/webhooks/{id}", s.apiNoBody(s.handleDeleteWebhook))
	mux.Handle("POST "+v1+"/webhooks/{id}/rotate_secret", s.apiNoBody(s.handleRotateSecret))
	mux.Handle("GET "+v1+"/webhook_deliveries", s.apiNoBody(s.handleListDeliveries))
	mux.Handle("GET "+v1+"/webhook_deliveries/{id}", s.apiNoBody(s.handleGetDelivery))
	mux.Handle("POST "+v1+"/webhook_deliveries/{id}/retry", s.apiNoBody(s.handleRetryDelivery))

	// The sandbox plays the bank; production has no such routes (404).
	if s.env == parcela.Sandbox {
		mux.Handle("POST "+v1+"/sandbox/payments/{id}/pay", s.api(s.handleSandboxPay))
		mux.Handle("POST "+v1+"/sandbox/payments/{id}/expire", s.apiNoBody(s.handleSandboxExpire))
	}

	// Public: images are linked from e-mails and checkout pages.
	mux.HandleFunc("GET "+v1+"/payments/{id}/barcode.png", s.handlePaymentImage(barcodeImage))
	mux.HandleFunc("GET "+v1+"/payments/{id}/pix.png", s.handlePaymentImage(pixImage))
}
