package parcela

import "net/url"

// The payer's pages. The API's forms point at them, and the web package
// serves them, so their paths are spelt here once.

// OfferURL is the offer's public purchase page.
func (l Links) OfferURL(companySlug, offerID string) string {
	return l.PublicURL + "/pay/" + url.PathEscape(companySlug) + "/offers/" + url.PathEscape(offerID)
}

// OrderURL is the order's page for its customer, opened with its access code.
func (l Links) OrderURL(orderID, accessCode string) string {
	return l.PublicURL + "/pay/orders/" + url.PathEscape(orderID) + "?code=" + url.QueryEscape(accessCode)
}

// CheckoutURL is the bill's checkout page, opened with its authentication code.
func (l Links) CheckoutURL(billID, authenticationCode string) string {
	return l.PublicURL + "/checkout/bills/" + url.PathEscape(billID) + "?code=" + url.QueryEscape(authenticationCode)
}

// PaymentURL is the page of one payment: its Pix or boleto codes.
func (l Links) PaymentURL(paymentID string) string {
	return l.PublicURL + "/checkout/payments/" + url.PathEscape(paymentID)
}

// PaymentImageURL is the PNG of a payment's code: the Pix QR code when pix
// is true, else the boleto's barcode (or a Pix payment's QR code).
func (l Links) PaymentImageURL(paymentID string, pix bool) string {
	name := "/barcode.png"
	if pix {
		name = "/pix.png"
	}
	return l.PublicURL + "/external_api/v1/payments/" + url.PathEscape(paymentID) + name
}
