package server

import (
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
	p, err := s.db.CreateProduct(r.Context(), authOf(r), in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, parcela.NewProductCreateForm(p), nil
}

func (s *Server) handleGetProduct(r *http.Request, _ []byte) (int, any, error) {
	p, err := s.db.Product(r.Context(), authOf(r), pathID(r))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, parcela.NewProductCreateForm(p), nil
}

func (s *Server) handleListProducts(r *http.Request, _ []byte) (int, any, error) {
	page, perPage, err := pageParams(r)
	if err != nil {
		return 0, nil, err
	}
	ps, total, err := s.db.Products(r.Context(), authOf(r), page, perPage)
	if err != nil {
		return 0, nil, err
	}
	out := make([]parcela.ProductCreateForm, 0, len(ps))
	for _, p := range ps {
		out = append(out, parcela.NewProductCreateForm(p))
	}
	return http.StatusOK, newPage(out, total, perPage), nil
}

func (s *Server) handleUpdateProduct(r *http.Request, body []byte) (int, any, error) {
	in, err := decodeProduct(body)
	if err != nil {
		return 0, nil, err
	}
	p, err := s.db.UpdateProduct(r.Context(), authOf(r), pathID(r), in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, parcela.NewProductCreateForm(p), nil
}

func (s *Server) offerForm(r *http.Request, o *parcela.Offer) (parcela.OfferCreateForm, error) {
	slug, err := s.db.CompanySlug(r.Context(), o.CompanyID)
	if err != nil {
		return parcela.OfferCreateForm{}, err
	}
	return parcela.NewOfferCreateForm(o, slug, s.links()), nil
}

func (s *Server) handleCreateOffer(r *http.Request, body []byte) (int, any, error) {
	var req parcela.OfferRequest
	if err := decode(body, &req, false); err != nil {
		return 0, nil, err
	}
	o, err := s.db.CreateOffer(r.Context(), authOf(r), req)
	if err != nil {
		return 0, nil, err
	}
	f, err := s.offerForm(r, o)
	return http.StatusCreated, f, err
}

func (s *Server) handleGetOffer(r *http.Request, _ []byte) (int, any, error) {
	o, err := s.db.Offer(r.Context(), authOf(r), pathID(r))
	if err != nil {
		return 0, nil, err
	}
	f, err := s.offerForm(r, o)
	return http.StatusOK, f, err
}

func (s *Server) handleListOffers(r *http.Request, _ []byte) (int, any, error) {
	page, perPage, err := pageParams(r)
	if err != nil {
		return 0, nil, err
	}
	a := authOf(r)
	os, total, err := s.db.Offers(r.Context(), a, page, perPage)
	if err != nil {
		return 0, nil, err
	}
	slug, err := s.db.CompanySlug(r.Context(), a.CompanyID)
	if err != nil {
		return 0, nil, err
	}
	out := make([]parcela.OfferCreateForm, 0, len(os))
	for _, o := range os {
		out = append(out, parcela.NewOfferCreateForm(o, slug, s.links()))
	}
	return http.StatusOK, newPage(out, total, perPage), nil
}

func (s *Server) handleUpdateOffer(r *http.Request, body []byte) (int, any, error) {
	var req struct {
		Offer *parcela.OfferFields `json:"offer"`
	}
	if err := decode(body, &req, false); err != nil {
		return 0, nil, err
	}
	if req.Offer == nil {
		return 0, nil, fieldErr("offer", "required", "is required: send {\"offer\": {...}}")
	}
	o, err := s.db.UpdateOffer(r.Context(), authOf(r), pathID(r), *req.Offer)
	if err != nil {
		return 0, nil, err
	}
	f, err := s.offerForm(r, o)
	return http.StatusOK, f, err
}
