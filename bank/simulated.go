// Package bank holds parcela's built-in payment provider: a simulated bank
// that issues real-format FEBRABAN boletos and Pix BR Codes. It serves the
// sandbox; production uses it only when the operator says so
// (PARCELA_PRODUCTION_PROVIDER=simulated), since no bank pays its codes.
package bank

import (
	"context"
	"fmt"
	"strings"

	"parcela"
	"parcela/brcode"
)

// Simulated issues payment codes locally; nothing leaves the process.
type Simulated struct {
	BankCode string // 3 digits, printed at the start of every boleto
	Agency   string // 4 digits
	Account  string // up to 7 digits
}

// NewSimulated returns the simulated bank with its default identity.
func NewSimulated() *Simulated {
	return &Simulated{BankCode: "001", Agency: "0001", Account: "1234567"}
}

// Issue builds the boleto (linha digitável and barcode) or the Pix code.
// The codes follow from the request alone (the Pix txid from the payment
// id), so issuing a request again returns the same payment.
func (s *Simulated) Issue(ctx context.Context, r parcela.IssueRequest) (parcela.IssuedPayment, error) {
	var out parcela.IssuedPayment
	switch r.Method {
	case parcela.MethodBoleto:
		nosso := fmt.Sprintf("%011d", r.NossoNumero)
		free, err := brcode.FreeField(s.Agency, nosso, s.Account)
		if err != nil {
			return out, err
		}
		b := brcode.Boleto{BankCode: s.BankCode, CurrencyCode: '9', DueDate: r.DueDate.In(parcela.SaoPaulo), AmountCents: r.AmountCents, FreeField: free}
		digits, err := b.Barcode()
		if err != nil {
			return out, err
		}
		linha, err := b.LinhaDigitavel()
		if err != nil {
			return out, err
		}
		out.Barcode, out.BarcodeDigits, out.NossoNumero = &linha, &digits, &nosso
		if r.WithPix {
			code, err := s.pix(r)
			if err != nil {
				return out, err
			}
			out.PixCode = &code
		}
	case parcela.MethodPix:
		code, err := s.pix(r)
		if err != nil {
			return out, err
		}
		out.Barcode, out.PixCode = &code, &code
	default:
		return out, fmt.Errorf("the simulated bank cannot issue %q payments", r.Method)
	}
	return out, nil
}

func (s *Simulated) pix(r parcela.IssueRequest) (string, error) {
	city := r.MerchantCity
	if city == "" {
		city = "SAO PAULO"
	}
	// The txid identifies the charge: the payment id without dashes, cut to
	// the 25 characters BR Codes allow.
	txid := strings.ReplaceAll(r.PaymentID, "-", "")
	if len(txid) > 25 {
		txid = txid[len(txid)-25:]
	}
	return brcode.Pix{Key: r.MerchantKey, MerchantName: r.MerchantName, MerchantCity: city, AmountCents: r.AmountCents, TxID: txid}.Payload()
}

// Cancel voids a payment. Nothing the simulated bank issues leaves the
// process, and only parcela's own sandbox pay action settles its codes
// (against parcela's payment, never a voided one), so there is nothing to
// undo.
func (s *Simulated) Cancel(ctx context.Context, r parcela.CancelRequest) error {
	return ctx.Err()
}
