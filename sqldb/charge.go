package sqldb

import (
	"context"
	"crypto/rand"
	"time"

	"github.com/google/uuid"

	"parcela"
)

// ChargeOrder charges a pending order: one transaction creates the billing,
// its bills and the first bill's payment, takes a seat, moves the order to
// in_progress and writes the events. Racing charges of one order leave one
// billing; the others get 409 invalid_state.
func (db *DB) ChargeOrder(ctx context.Context, a parcela.Auth, orderID string, req parcela.ChargeRequest) (*parcela.Order, error) {
	if db.Payments == nil {
		return nil, parcela.Errorf(parcela.EUNAVAILABLE, "no payment provider is configured")
	}
	// Numbers are handed out outside the transaction: on SQLite the writer
	// is a single connection that the transaction will hold.
	nosso, err := db.NextNossoNumero(ctx)
	if err != nil {
		return nil, err
	}
	var o *parcela.Order
	err = db.inTx(ctx, func(tx *Tx) error {
		var err error
		if o, err = loadOrder(ctx, tx.q, db, a, orderID); err != nil {
			return err
		}
		if o.Status != parcela.OrderPending {
			return parcela.Errorf(parcela.EINVALIDSTATE, "order is %s; only a pending order can be charged", o.Status)
		}
		c := o.Offer.Product.Company
		links := db.links(a.Environment)
		plan, err := parcela.PlanCharge(req, o, c, tx.Now, links.PublicURL+"/pay/"+c.Slug+"/offers/"+o.Offer.ID)
		if err != nil {
			return err
		}
		now := ms64(tx.Now)
		res, err := tx.exec(ctx, `UPDATE orders SET status = ?, updated_at = ? WHERE id = ? AND status = ?`,
			parcela.OrderInProgress, now, o.ID, parcela.OrderPending)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return parcela.Errorf(parcela.EINVALIDSTATE, "order was charged or canceled by another request")
		}
		res, err = tx.exec(ctx, `UPDATE offers SET seats_taken = seats_taken + 1 WHERE id = ? AND (seats IS NULL OR seats_taken < seats)`, o.Offer.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return &parcela.Error{Code: parcela.EINVALID, Message: "offer is sold out",
				Fields: []parcela.FieldError{{Field: "offer", Code: "not_sellable", Message: "the offer is sold out"}}}
		}
		o.Offer.SeatsTaken++
		o.Status, o.UpdatedAt = parcela.OrderInProgress, tx.Now
		billing, err := insertBilling(ctx, tx, a, o, plan)
		if err != nil {
			return err
		}
		first := billing.Bills[0]
		p, err := issuePayment(ctx, tx, c, first, plan.Method, first.DueDate, nosso, false)
		if err != nil {
			return err
		}
		first.Payments = []*parcela.Payment{p}
		o.Billings = append(o.Billings, billing)

		if err := writeEvent(ctx, tx, a.CompanyID, a.Environment, "order", o.ID, "in_progress", parcela.NewOrderForm(o, links)); err != nil {
			return err
		}
		if err := writeEvent(ctx, tx, a.CompanyID, a.Environment, "billing", billing.ID, "waiting_payment", parcela.NewBillingOrderForm(billing, links)); err != nil {
			return err
		}
		for _, b := range billing.Bills {
			b.Billing = billing
			if err := writeEvent(ctx, tx, a.CompanyID, a.Environment, "bill", b.ID, "pending", parcela.NewBillEndpointForm(b, c, tx.Now, links)); err != nil {
				return err
			}
		}
		return nil
	})
	if isUniqueViolation(err) {
		return nil, parcela.Errorf(parcela.EINVALIDSTATE, "order was charged by another request")
	}
	return o, err
}

// insertBilling stores the billing and its scheduled bills.
func insertBilling(ctx context.Context, tx *Tx, a parcela.Auth, o *parcela.Order, plan *parcela.ChargePlan) (*parcela.Billing, error) {
	b := &parcela.Billing{
		ID: newID(), CompanyID: a.CompanyID, Environment: a.Environment, OrderID: o.ID, PaymentConfigurationID: plan.Configuration.ID,
		AmountCents: plan.Schedule.TotalCents, DueDay: plan.DueDay, Installments: plan.Installments, Status: parcela.BillingWaitingPayment,
		SignatureRemoteIP: plan.RemoteIP, SignatureUserAgent: plan.UserAgent, CreatedAt: tx.Now, UpdatedAt: tx.Now,
		PaymentConfiguration: plan.Configuration,
	}
	now := ms64(tx.Now)
	_, err := tx.exec(ctx, `INSERT INTO billings (id, company_id, environment, order_id, payment_configuration_id, amount_cents, due_day, installments,
		status, signature_remote_ip, signature_user_agent, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		b.ID, b.CompanyID, string(b.Environment), b.OrderID, b.PaymentConfigurationID, b.AmountCents, b.DueDay, b.Installments,
		b.Status, b.SignatureRemoteIP, b.SignatureUserAgent, now, now)
	if err != nil {
		return nil, err
	}
	for _, s := range plan.Schedule.Bills {
		bill := &parcela.Bill{
			ID: newID(), CompanyID: a.CompanyID, Environment: a.Environment, BillingID: b.ID, OrderID: o.ID, Number: s.Number, Type: s.Type,
			Status: parcela.BillPending, AmountCents: s.AmountCents, DueDate: s.DueDate, EffectiveDueDate: s.EffectiveDueDate(),
			AuthenticationCode: authenticationCode(), Details: s.Details, CreatedAt: tx.Now, UpdatedAt: tx.Now, Payments: []*parcela.Payment{},
		}
		_, err := tx.exec(ctx, `INSERT INTO bills (id, company_id, environment, billing_id, order_id, number, bill_type, status, amount_cents, due_date,
			effective_due_date, authentication_code, down_payment_cents, registration_fee_cents, amortization_cents, interest_cents, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			bill.ID, bill.CompanyID, string(bill.Environment), bill.BillingID, bill.OrderID, bill.Number, string(bill.Type), bill.Status, bill.AmountCents,
			ms64(bill.DueDate), ms64(bill.EffectiveDueDate), bill.AuthenticationCode, s.Details.DownPaymentCents, s.Details.RegistrationFeeCents,
			s.Details.AmortizationCents, s.Details.InterestCents, now, now)
		if err != nil {
			return nil, err
		}
		b.Bills = append(b.Bills, bill)
	}
	return b, nil
}

// pixKeyNamespace derives each company's (simulated) Pix key.
var pixKeyNamespace = uuid.MustParse("0d7f4c1e-5b0a-4f43-9a51-7c2a9e3f6b21")

// issuePayment asks the provider for a payment of bill and stores it.
func issuePayment(ctx context.Context, tx *Tx, c *parcela.Company, bill *parcela.Bill, method string, expires time.Time, nosso int64, withPix bool) (*parcela.Payment, error) {
	p := &parcela.Payment{
		ID: newID(), CompanyID: bill.CompanyID, Environment: bill.Environment, BillID: bill.ID, Method: method, Status: parcela.PaymentUnpaid,
		AmountCents: bill.AmountCents, ExpiresAt: expires.In(parcela.SaoPaulo), Installments: 1, CreatedAt: tx.Now, UpdatedAt: tx.Now,
	}
	city := "SAO PAULO"
	if c.Address != nil {
		city = c.Address.City.Name
	}
	issued, err := tx.db.Payments.Issue(ctx, parcela.IssueRequest{
		PaymentID: p.ID, Method: method, AmountCents: p.AmountCents, DueDate: p.ExpiresAt, NossoNumero: nosso, WithPix: withPix,
		MerchantName: c.Name, MerchantCity: city, MerchantKey: uuid.NewSHA1(pixKeyNamespace, []byte(c.ID)).String(),
	})
	if err != nil {
		return nil, err
	}
	p.Barcode, p.BarcodeDigits, p.PixCode, p.NossoNumero = issued.Barcode, issued.BarcodeDigits, issued.PixCode, issued.NossoNumero
	if method == parcela.MethodPix {
		p.PixCode = nil // the code is the payment's barcode itself
	}
	_, err = tx.exec(ctx, `INSERT INTO payments (id, company_id, environment, bill_id, payment_method, status, amount_cents, expires_at, installments,
		nosso_numero, barcode, barcode_digits, pix_code, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, p.CompanyID, string(p.Environment), p.BillID, p.Method, p.Status, p.AmountCents, ms64(p.ExpiresAt), p.Installments,
		p.NossoNumero, p.Barcode, p.BarcodeDigits, p.PixCode, ms64(p.CreatedAt), ms64(p.UpdatedAt))
	return p, err
}

const codeAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

// authenticationCode is the bill's secret for its public checkout link.
func authenticationCode() string {
	b := make([]byte, 12)
	rand.Read(b)
	for i := range b {
		b[i] = codeAlphabet[int(b[i])%len(codeAlphabet)]
	}
	return string(b)
}

// PaymentForImage finds a payment of an environment by id alone, for the
// public image routes.
func (db *DB) PaymentForImage(ctx context.Context, env parcela.Environment, id string) (*parcela.Payment, error) {
	p, err := scanPayment(db.queryRow(ctx, paymentSelect+` WHERE p.id = ? AND p.environment = ?`, id, string(env)))
	if err != nil {
		return nil, parcela.NotFound("payment")
	}
	return p, nil
}
