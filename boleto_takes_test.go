package parcela

import "testing"

// What the pages show a boleto taking by its barcode (BoletoTakes) is what
// a notice without an amount settles (mover.pay, both through takesAt). A
// boleto whose linha carries no due date (factor 0000) was shown at its
// own amount while a notice settled it with the bill's fine and interest,
// its unreadable due date read as long past; it is never late now, as a
// bank charges no late fees on a boleto without a due date.
func TestBoletoWithoutADueDateIsShownAsItSettles(t *testing.T) {
	t.Parallel()
	o, c, bill, boleto, _ := lateInstallment(t)
	linha := *boleto.Barcode
	linha = linha[:33] + "0000" + linha[37:]
	boleto.Barcode = &linha
	if !boleto.BoletoDueDate().IsZero() {
		t.Fatal("scenario: the linha still carries a due date")
	}
	at := calSP(2027, 1, 19, 9, 0, 0, 0) // in its grace, before it expires
	shown := boleto.AmountCents - boleto.PaidAmountCents
	if late := bill.BoletoTakes(boleto, at, c); late > 0 {
		shown = late
	}
	m := newMover(Auth{CompanyID: c.ID, Environment: Sandbox}, at, Links{})
	if err := m.pay(o, o.Billings[0], bill, boleto, c, Settlement{}); err != nil {
		t.Fatal(err)
	}
	if boleto.PaidAmountCents != shown {
		t.Errorf("the page shows the boleto taking %d; a notice without an amount settled %d", shown, boleto.PaidAmountCents)
	}
}
