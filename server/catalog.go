package server

import (
	"encoding/json"
	"net/http"

	"parcela"
)

func (s *Server) links() parcela.Links { return parcela.Links{PublicURL: s.publicURL} }

// productBody is {"product": {...}}.
type productBody struct {
	Product *parcela.ProductInput `json:"product"`
}

func decodeProduct(body []byte) (parcela.ProductInput, error) {
	var b productBody
	if err := decode(body, &b, false); err != nil {
		return parcela.ProductInput{}, err
	}
	if b.Product == nil {
		return parcela.ProductInput{}, fieldErr("product", "required", "is required: send {\"product\": {...}}")
	}
	return *b.Product, nil
}

func (s *Server) handleCreateProduct(r *http.Request, body []byte) (int, any, error) {
	in, err := decodeProduct(body)
	if err != nil {
		return 0, nil, err
	}
	return answer(r, http.StatusCreated, func(p *parcela.Product) any { return parcela.NewProductCreateForm(p) },
		func() (*parcela.Product, error) { return s.svc.Catalog.CreateProduct(r.Context(), authOf(r), in) })
}

func (s *Server) handleGetProduct(r *http.Request, _ []byte) (int, any, error) {
	p, err := s.svc.Catalog.Product(r.Context(), authOf(r), pathID(r))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, parcela.NewProductCreateForm(p), nil
}

func (s *Server) handleListProducts(r *http.Request, _ []byte) (int, any, error) {
	page, err := pageParams(r)
	if err != nil {
		return 0, nil, err
	}
	ps, total, err := s.svc.Catalog.Products(r.Context(), authOf(r), page)
	if err != nil {
		return 0, nil, err
	}
	out := make([]parcela.ProductCreateForm, 0, len(ps))
	for _, p := range ps {
		out = append(out, parcela.NewProductCreateForm(p))
	}
	return http.StatusOK, newPage(out, total, page.PerPage), nil
}

func (s *Server) handleUpdateProduct(r *http.Request, body []byte) (int, any, error) {
	in, err := decodeProduct(body)
	if err != nil {
		return 0, nil, err
	}
	// null removes the banner or a date, as the product shows them; an
	// absent field keeps it.
	cleared, err := patchNulls(body, "product", in, "banner_url", "start_date", "end_date")
	if err != nil {
		return 0, nil, err
	}
	in.ClearBannerURL, in.ClearStartDate, in.ClearEndDate = cleared["banner_url"], cleared["start_date"], cleared["end_date"]
	p, err := s.svc.Catalog.UpdateProduct(r.Context(), authOf(r), pathID(r), in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, parcela.NewProductCreateForm(p), nil
}

// offerForm renders an offer, whose address carries its company's slug.
func (s *Server) offerForm(o *parcela.Offer) parcela.OfferCreateForm {
	return parcela.NewOfferCreateForm(o, o.Product.Company.Slug, s.links())
}

func (s *Server) handleCreateOffer(r *http.Request, body []byte) (int, any, error) {
	var req parcela.OfferRequest
	if err := decode(body, &req, false); err != nil {
		return 0, nil, err
	}
	return answer(r, http.StatusCreated, func(o *parcela.Offer) any { return s.offerForm(o) },
		func() (*parcela.Offer, error) { return s.svc.Catalog.CreateOffer(r.Context(), authOf(r), req) })
}

func (s *Server) handleGetOffer(r *http.Request, _ []byte) (int, any, error) {
	o, err := s.svc.Catalog.Offer(r.Context(), authOf(r), pathID(r))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.offerForm(o), nil
}

func (s *Server) handleListOffers(r *http.Request, _ []byte) (int, any, error) {
	page, err := pageParams(r)
	if err != nil {
		return 0, nil, err
	}
	a := authOf(r)
	os, total, err := s.svc.Catalog.Offers(r.Context(), a, page)
	if err != nil {
		return 0, nil, err
	}
	out := make([]parcela.OfferCreateForm, 0, len(os))
	for _, o := range os {
		out = append(out, s.offerForm(o))
	}
	return http.StatusOK, newPage(out, total, page.PerPage), nil
}

func (s *Server) handleUpdateOffer(r *http.Request, body []byte) (int, any, error) {
	var req struct {
		Offer *parcela.OfferFields `json:"offer"`
		// Beside offer, as a creation sends them: refused, as inside it,
		// rather than ignored under a 200.
		PaymentConfigurations json.RawMessage `json:"payment_configurations"`
		// Beside offer, as a creation may send it.
		ExcludeFromCampaign *bool `json:"exclude_from_campaign"`
	}
	if err := decode(body, &req, false); err != nil {
		return 0, nil, err
	}
	if req.PaymentConfigurations != nil {
		return 0, nil, fieldErr("payment_configurations", "not_allowed", "cannot be changed; create a new offer")
	}
	if req.Offer == nil {
		return 0, nil, fieldErr("offer", "required", "is required: send {\"offer\": {...}}")
	}
	req.Offer.ExcludeFromCampaignBeside = req.ExcludeFromCampaign
	// null removes the seat limit or the expiry; an absent field keeps it.
	cleared, err := patchNulls(body, "offer", *req.Offer, "seats", "expires_at")
	if err != nil {
		return 0, nil, err
	}
	req.Offer.ClearSeats, req.Offer.ClearExpiresAt = cleared["seats"], cleared["expires_at"]
	o, err := s.svc.Catalog.UpdateOffer(r.Context(), authOf(r), pathID(r), *req.Offer)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.offerForm(o), nil
}
