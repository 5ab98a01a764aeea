package sqldb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"time"

	"github.com/google/uuid"

	"parcela"
)

// ChargeOrder charges a pending order: one transaction creates the billing,
// its bills and the first bill's payment, takes a seat, moves the order to
// in_progress and writes the events. Racing charges of one order leave one
// billing; the others get 409 invalid_state.
//
// On SQLite the single writer connection is held for the whole transaction,
// so everything that needs no lock (reading the order, planning, issuing the
// payment, rendering the events) happens before it, at the time the
// transaction will carry; inside, the guarded UPDATEs re-check what was read.
func (db *DB) ChargeOrder(ctx context.Context, a parcela.Auth, orderID string, req parcela.ChargeRequest) (*parcela.Order, error) {
	if db.Payments == nil {
		return nil, parcela.Errorf(parcela.EUNAVAILABLE, "no payment provider is configured")
	}
	nosso, err := db.NextNossoNumero(ctx)
	if err != nil {
		return nil, err
	}
	o, err := loadOrder(ctx, db.reader, db, a, orderID)
	if err != nil {
		return nil, err
	}
	if o.Status != parcela.OrderPending {
		return nil, parcela.Errorf(parcela.EINVALIDSTATE, "order is %s; only a pending order can be charged", o.Status)
	}
	now := db.Clock.Now()
	c := o.Offer.Product.Company
	links := db.links(a.Environment)
	plan, err := parcela.PlanCharge(req, o, c, now, links.PublicURL+"/pay/"+c.Slug+"/offers/"+o.Offer.ID)
	if err != nil {
		return nil, err
	}
	billing := newBilling(a, o, plan, now)
	first := billing.Bills[0]
	p, err := db.newPayment(ctx, c, first, plan.Method, first.DueDate, nosso, false, now)
	if err != nil {
		return nil, err
	}
	first.Payments = []*parcela.Payment{p}
	if o.Offer.Seats != nil {
		o.Offer.SeatsTaken++ // offers without a limit keep no count (takeSeat)
	}
	o.Status, o.UpdatedAt = parcela.OrderInProgress, now
	o.Billings = append(o.Billings, billing)
	events, err := chargeEvents(a, o, billing, c, now, links)
	if err != nil {
		return nil, err
	}

	err = db.inTxAt(ctx, now, func(tx *Tx) error {
		res, err := tx.exec(ctx, `UPDATE orders SET status = ?, updated_at = ? WHERE id = ? AND status = ?`,
			parcela.OrderInProgress, ms64(now), o.ID, parcela.OrderPending)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return parcela.Errorf(parcela.EINVALIDSTATE, "order was charged or canceled by another request")
		}
		if err := insertBilling(ctx, tx, billing); err != nil {
			return err
		}
		if err := insertPayment(ctx, tx, p); err != nil {
			return err
		}
		if err := writeEvents(ctx, tx, events); err != nil {
			return err
		}
		return takeSeat(ctx, tx, o.Offer)
	})
	if isUniqueViolation(err) {
		return nil, parcela.Errorf(parcela.EINVALIDSTATE, "order was charged by another request")
	}
	if err != nil {
		return nil, err
	}
	return o, nil
}

// takeSeat counts a sold seat on an offer with a seat limit, refusing the
// charge when none is left. Offers without a limit (most) keep no count, so
// their charges never queue on the offer's row: PostgreSQL would hold its
// lock from the UPDATE to the commit. They only share-lock it, so that a
// PATCH giving the offer a limit waits for them and then counts every seat
// (UpdateOffer). SQLite serializes writes anyway.
func takeSeat(ctx context.Context, tx *Tx, offer *parcela.Offer) error {
	if offer.Seats == nil {
		var seats sql.NullInt64
		if err := tx.queryRow(ctx, `SELECT seats FROM offers WHERE id = ?`+tx.db.lockRows("SHARE"), offer.ID).Scan(&seats); err != nil {
			return err
		}
		if !seats.Valid {
			return nil
		}
		// A PATCH gave the offer a limit since it was read.
		return parcela.Errorf(parcela.EINVALIDSTATE, "the offer's seats changed during the charge; retry it")
	}
	res, err := tx.exec(ctx, `UPDATE offers SET seats_taken = seats_taken + 1 WHERE id = ? AND seats_taken < seats`, offer.ID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return &parcela.Error{Code: parcela.EINVALID, Message: "offer is sold out",
			Fields: []parcela.FieldError{{Field: "offer", Code: "not_sellable", Message: "the offer is sold out"}}}
	}
	return nil
}

// chargeEvents renders the events of a charge, in the order they are listed.
func chargeEvents(a parcela.Auth, o *parcela.Order, billing *parcela.Billing, c *parcela.Company, now time.Time, links parcela.Links) ([]Event, error) {
	events := make([]Event, 0, 2+len(billing.Bills))
	add := func(entity, id, event string, data any) error {
		e, err := newEvent(a.CompanyID, a.Environment, entity, id, event, data, now)
		events = append(events, e)
		return err
	}
	if err := add("order", o.ID, "in_progress", parcela.NewOrderForm(o, links)); err != nil {
		return nil, err
	}
	if err := add("billing", billing.ID, "waiting_payment", parcela.NewBillingOrderForm(billing, links)); err != nil {
		return nil, err
	}
	for _, b := range billing.Bills {
		b.Billing = billing
		if err := add("bill", b.ID, "pending", parcela.NewBillEndpointForm(b, c, now, links)); err != nil {
			return nil, err
		}
	}
	return events, nil
}

// newBilling builds the billing of a charge planned at now, with its bills.
func newBilling(a parcela.Auth, o *parcela.Order, plan *parcela.ChargePlan, now time.Time) *parcela.Billing {
	b := &parcela.Billing{
		ID: newID(), CompanyID: a.CompanyID, Environment: a.Environment, OrderID: o.ID, PaymentConfigurationID: plan.Configuration.ID,
		AmountCents: plan.Schedule.TotalCents, DueDay: plan.DueDay, Installments: plan.Installments, Status: parcela.BillingWaitingPayment,
		SignatureRemoteIP: plan.RemoteIP, SignatureUserAgent: plan.UserAgent, CreatedAt: now, UpdatedAt: now,
		PaymentConfiguration: plan.Configuration, Bills: make([]*parcela.Bill, 0, len(plan.Schedule.Bills)),
	}
	for _, s := range plan.Schedule.Bills {
		b.Bills = append(b.Bills, &parcela.Bill{
			ID: newID(), CompanyID: a.CompanyID, Environment: a.Environment, BillingID: b.ID, OrderID: o.ID, Number: s.Number, Type: s.Type,
			Status: parcela.BillPending, AmountCents: s.AmountCents, DueDate: s.DueDate, EffectiveDueDate: s.EffectiveDueDate(),
			AuthenticationCode: authenticationCode(), Details: s.Details, CreatedAt: now, UpdatedAt: now, Payments: []*parcela.Payment{},
		})
	}
	return b
}

// insertBilling stores a billing and its bills, the bills in one INSERT.
func insertBilling(ctx context.Context, tx *Tx, b *parcela.Billing) error {
	_, err := tx.exec(ctx, `INSERT INTO billings (id, company_id, environment, order_id, payment_configuration_id, amount_cents, due_day, installments,
		status, signature_remote_ip, signature_user_agent, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		b.ID, b.CompanyID, string(b.Environment), b.OrderID, b.PaymentConfigurationID, b.AmountCents, b.DueDay, b.Installments,
		b.Status, b.SignatureRemoteIP, b.SignatureUserAgent, ms64(b.CreatedAt), ms64(b.UpdatedAt))
	if err != nil {
		return err
	}
	args := make([]any, 0, 18*len(b.Bills))
	for _, bill := range b.Bills {
		d := bill.Details
		args = append(args, bill.ID, bill.CompanyID, string(bill.Environment), bill.BillingID, bill.OrderID, bill.Number, string(bill.Type), bill.Status,
			bill.AmountCents, ms64(bill.DueDate), ms64(bill.EffectiveDueDate), bill.AuthenticationCode, d.DownPaymentCents, d.RegistrationFeeCents,
			d.AmortizationCents, d.InterestCents, ms64(bill.CreatedAt), ms64(bill.UpdatedAt))
	}
	return tx.insertMany(ctx, `INSERT INTO bills (id, company_id, environment, billing_id, order_id, number, bill_type, status, amount_cents, due_date,
		effective_due_date, authentication_code, down_payment_cents, registration_fee_cents, amortization_cents, interest_cents, created_at, updated_at)`,
		`(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, 18, args)
}

// pixKeyNamespace derives each company's (simulated) Pix key.
var pixKeyNamespace = uuid.MustParse("0d7f4c1e-5b0a-4f43-9a51-7c2a9e3f6b21")

// issuePayment asks the provider for a payment of bill and stores it.
func issuePayment(ctx context.Context, tx *Tx, c *parcela.Company, bill *parcela.Bill, method string, expires time.Time, nosso int64, withPix bool) (*parcela.Payment, error) {
	p, err := tx.db.newPayment(ctx, c, bill, method, expires, nosso, withPix, tx.Now)
	if err != nil {
		return nil, err
	}
	return p, insertPayment(ctx, tx, p)
}

// newPayment asks the provider for a payment of bill, created at now.
func (db *DB) newPayment(ctx context.Context, c *parcela.Company, bill *parcela.Bill, method string, expires time.Time, nosso int64, withPix bool, now time.Time) (*parcela.Payment, error) {
	p := &parcela.Payment{
		ID: newID(), CompanyID: bill.CompanyID, Environment: bill.Environment, BillID: bill.ID, Method: method, Status: parcela.PaymentUnpaid,
		AmountCents: bill.AmountCents, ExpiresAt: expires.In(parcela.SaoPaulo), Installments: 1, CreatedAt: now, UpdatedAt: now,
	}
	city := "SAO PAULO"
	if c.Address != nil {
		city = c.Address.City.Name
	}
	issued, err := db.Payments.Issue(ctx, parcela.IssueRequest{
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
	return p, nil
}

func insertPayment(ctx context.Context, tx *Tx, p *parcela.Payment) error {
	_, err := tx.exec(ctx, `INSERT INTO payments (id, company_id, environment, bill_id, payment_method, status, amount_cents, expires_at, installments,
		nosso_numero, barcode, barcode_digits, pix_code, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, p.CompanyID, string(p.Environment), p.BillID, p.Method, p.Status, p.AmountCents, ms64(p.ExpiresAt), p.Installments,
		p.NossoNumero, p.Barcode, p.BarcodeDigits, p.PixCode, ms64(p.CreatedAt), ms64(p.UpdatedAt))
	return err
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
