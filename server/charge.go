package server

import (
	"net/http"

	"parcela"
	"parcela/brcode"
)

func (s *Server) handleCharge(r *http.Request, body []byte) (int, any, error) {
	var req parcela.ChargeRequest
	if err := decode(body, &req, false); err != nil {
		return 0, nil, err
	}
	o, err := s.db.ChargeOrder(r.Context(), authOf(r), pathID(r), req)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, parcela.NewOrderForm(o, s.links()), nil
}

// handlePaymentImage serves a payment's code as PNG: the boleto's
// interleaved 2 of 5 barcode, or the Pix QR code. It is public (the image
// goes into e-mails and pages) and found by the payment's unguessable id.
func (s *Server) handlePaymentImage(pix bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, err := s.db.PaymentForImage(r.Context(), s.env, r.PathValue("id"))
		if err != nil {
			writeError(w, r, err)
			return
		}
		var png []byte
		switch {
		case pix && p.PixCode != nil:
			png, err = brcode.QRCodePNG(*p.PixCode, 512)
		case !pix && p.Method == parcela.MethodPix && p.Barcode != nil:
			png, err = brcode.QRCodePNG(*p.Barcode, 512)
		case !pix && p.BarcodeDigits != nil:
			png, err = brcode.BoletoBarcodePNG(*p.BarcodeDigits)
		default:
			writeError(w, r, parcela.NotFound("payment image"))
			return
		}
		if err != nil {
			writeError(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Cache-Control", "public, max-age=86400, immutable")
		w.Write(png)
	}
}
