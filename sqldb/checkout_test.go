package sqldb_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"parcela"
	"parcela/bank"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// checkoutBundle is a company selling an offer that takes cards, Pix and
// boletos, on its own clock.
type checkoutBundle struct {
	t     *testing.T
	ctx   context.Context
	db    *sqldb.DB
	clock *parcela.TestClock
	app   *parcela.Services
	a     parcela.Auth
	c     *parcela.Company
	offer *parcela.Offer
}

// useAcquirer makes b's services charge cards of the sandbox through acq.
func (b *checkoutBundle) useAcquirer(acq parcela.CardAcquirer) {
	b.app = parcela.NewServices(b.db, bank.NewSimulated(), parcela.AcquirersByEnvironment{parcela.Sandbox: acq}, b.clock, sqldbtest.Links)
}

var checkoutStart = time.Date(2026, 11, 23, 10, 0, 0, 0, parcela.SaoPaulo) // a Monday

func checkoutSetup(t *testing.T, db *sqldb.DB) *checkoutBundle {
	t.Helper()
	b := &checkoutBundle{t: t, ctx: context.Background(), db: db, clock: parcela.NewTestClock(checkoutStart)}
	b.app = sqldbtest.Services(db, b.clock)
	b.c = sqldbtest.Company(t, db)
	b.a = parcela.Auth{CompanyID: b.c.ID, Environment: parcela.Sandbox}
	p, err := b.app.Catalog.CreateProduct(b.ctx, b.a, fromJSON[parcela.ProductInput](t, `{"name": "Curso", "full_amount_cents": 150000, "kind": "course"}`))
	if err != nil {
		t.Fatal(err)
	}
	b.offer, err = b.app.Catalog.CreateOffer(b.ctx, b.a, fromJSON[parcela.OfferRequest](t, `{"offer": {"name": "Turma", "product_id": "`+p.ID+`", "amount_cents": 120000},
		"payment_configurations": [
		{"payment_type": "financed", "financed_type": "bolepix", "payment_methods": ["boleto", "pix"],
		 "allowed_down_payment_methods": ["pix", "boleto", "credit_card"], "down_payment_type": "percentage", "down_payment_value": 0.2,
		 "interest_rate": 0.0199, "max_installments": 12, "expires_in_hours": 48},
		{"payment_type": "upfront", "payment_methods": ["pix", "boleto", "credit_card"], "expires_in_hours": 48}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// each runs fn on every engine, in parallel, each with its own bundle.
func eachCheckout(t *testing.T, fn func(t *testing.T, b *checkoutBundle)) {
	t.Helper()
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			fn(t, checkoutSetup(t, sqldbtest.Open(t, e, sqldb.Config{Enqueuer: quietEnqueuer{}})))
		})
	}
}

func (b *checkoutBundle) order() *parcela.Order {
	b.t.Helper()
	o, err := b.app.Orders.CreateOrder(b.ctx, b.a, fromJSON[parcela.OrderRequest](b.t, `{"order": {"offer_id": "`+b.offer.ID+`",
		"customer_name": "Maria da Silva", "customer_birthdate": "1990-05-17", "customer_document": "52998224725",
		"email": "maria@example.com", "phone": "11987654321", "address": {"zipcode": "01310100", "street": "Avenida Paulista",
		"number": "1000", "neighborhood": "Bela Vista", "city_ibge_code": "3550308"}}}`))
	if err != nil {
		b.t.Fatal(err)
	}
	return o
}

// charge creates an order and charges it: financed in installments bills
// with a down payment by method, or upfront (installments 1).
func (b *checkoutBundle) charge(installments int, method string) *parcela.Order {
	b.t.Helper()
	o := b.order()
	pc := b.offer.PaymentConfigurations[0].ID
	if installments == 1 {
		pc = b.offer.PaymentConfigurations[1].ID
	}
	req := fromJSON[parcela.ChargeRequest](b.t, fmt.Sprintf(`{"payment_configuration_id": %q, "due_day": 10, "installments": %d,
		"payment": {"payment_method": %q}, "signature": {"remote_ip": "203.0.113.7", "user_agent": "test"}}`, pc, installments, method))
	var err error
	if method == parcela.MethodCreditCard {
		o, err = b.app.Orders.ChargeOrderForCard(b.ctx, b.a, o.ID, req)
	} else {
		o, err = b.app.Orders.ChargeOrder(b.ctx, b.a, o.ID, req)
	}
	if err != nil {
		b.t.Fatal(err)
	}
	return o
}

// bill reads a bill as GET /bills/{id} does.
func (b *checkoutBundle) bill(id string) *parcela.Bill {
	b.t.Helper()
	bill, _, err := b.db.Bill(b.ctx, b.a, id)
	if err != nil {
		b.t.Fatal(err)
	}
	return bill
}

func card(number, cvv string) parcela.CardPayment {
	return parcela.CardPayment{Number: number, HolderName: "MARIA DA SILVA", ExpiryMonth: 12, ExpiryYear: 2030, CVV: cvv, Installments: 1}
}

func (b *checkoutBundle) payByCard(bill *parcela.Bill, c parcela.CardPayment) (*parcela.Payment, error) {
	return b.app.Checkout.PayByCard(b.ctx, parcela.Sandbox, bill.ID, bill.AuthenticationCode, c)
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if parcela.ErrorCode(err) != code {
		t.Fatalf("%s: %v, want %s", what, err, code)
	}
}

func TestPayerLookups(t *testing.T) {
	eachCheckout(t, func(t *testing.T, b *checkoutBundle) {
		other := sqldbtest.Company(t, b.db)
		offer, err := b.app.Checkout.PublicOffer(b.ctx, parcela.Sandbox, b.c.Slug, b.offer.ID)
		if err != nil || offer.Product.Company.Slug != b.c.Slug || offer.Product.Name != "Curso" || len(offer.PaymentConfigurations) != 2 {
			t.Fatalf("offer %+v, %v", offer, err)
		}
		for what, lookup := range map[string][3]string{
			"production":     {string(parcela.Production), b.c.Slug, b.offer.ID},
			"another's slug": {string(parcela.Sandbox), other.Slug, b.offer.ID},
			"no slug":        {string(parcela.Sandbox), "nobody-" + sqldbtest.Suffix(), b.offer.ID},
			"not an id":      {string(parcela.Sandbox), b.c.Slug, "x' OR '1'='1"},
			// A page's path may carry any bytes; PostgreSQL refused these
			// in a query, and the page answered 500.
			"slug not UTF-8": {string(parcela.Sandbox), "\xff", b.offer.ID},
			"slug with NUL":  {string(parcela.Sandbox), b.c.Slug + "\x00", b.offer.ID},
		} {
			_, err := b.app.Checkout.PublicOffer(b.ctx, parcela.Environment(lookup[0]), lookup[1], lookup[2])
			wantCode(t, what, err, parcela.ENOTFOUND)
		}

		o := b.charge(4, parcela.MethodPix)
		if len(o.AccessCode) != 26 {
			t.Fatalf("access code %q", o.AccessCode)
		}
		read, err := b.app.Checkout.OrderForPayer(b.ctx, parcela.Sandbox, o.ID, o.AccessCode)
		if err != nil || read.ID != o.ID || len(read.Billings) != 1 || len(read.Billings[0].Bills) != 4 || len(read.Billings[0].Bills[0].Payments) != 1 ||
			read.Offer.Product.Company.ID != b.c.ID {
			t.Fatalf("order for its payer: %v", err)
		}
		wrong := strings.Repeat("A", 26)
		for what, args := range map[string][3]string{
			"a wrong code": {string(parcela.Sandbox), o.ID, wrong}, "no code": {string(parcela.Sandbox), o.ID, ""},
			"another environment": {string(parcela.Production), o.ID, o.AccessCode}, "a prefix": {string(parcela.Sandbox), o.ID, o.AccessCode[:25]},
			"not an id": {string(parcela.Sandbox), "nope", o.AccessCode},
		} {
			_, err := b.app.Checkout.OrderForPayer(b.ctx, parcela.Environment(args[0]), args[1], args[2])
			wantCode(t, "order with "+what, err, parcela.ENOTFOUND)
			// The checkout's check of an order's code, for its link, agrees.
			wantCode(t, "order code check with "+what, b.app.Checkout.CheckOrderCode(b.ctx, parcela.Environment(args[0]), args[1], args[2]), parcela.ENOTFOUND)
		}
		if err := b.app.Checkout.CheckOrderCode(b.ctx, parcela.Sandbox, o.ID, o.AccessCode); err != nil {
			t.Fatalf("the order's own code: %v", err)
		}

		first := o.Billings[0].Bills[0]
		bill, offer, err := b.app.Checkout.BillForPayer(b.ctx, parcela.Sandbox, first.ID, first.AuthenticationCode)
		if err != nil || bill.ID != first.ID || offer.ID != b.offer.ID || offer.Product.Company.Slug != b.c.Slug || bill.Billing == nil || bill.Billing.PaymentConfiguration == nil ||
			bill.Billing.PaymentConfiguration.OfferID != b.offer.ID || len(bill.Payments) != 1 {
			t.Fatalf("bill for its payer: %+v, %v", bill, err)
		}
		_, _, err = b.app.Checkout.BillForPayer(b.ctx, parcela.Sandbox, first.ID, o.Billings[0].Bills[1].AuthenticationCode)
		wantCode(t, "a bill with another bill's code", err, parcela.ENOTFOUND)
		_, _, err = b.app.Checkout.BillForPayer(b.ctx, parcela.Production, first.ID, first.AuthenticationCode)
		wantCode(t, "a bill of another environment", err, parcela.ENOTFOUND)

		// A payment's page finds it by its id alone, in its environment;
		// anything else, bytes PostgreSQL refuses included, is not found.
		pay := first.Payments[0]
		if got, err := b.app.Payments.PublicPayment(b.ctx, parcela.Sandbox, pay.ID); err != nil || got.ID != pay.ID {
			t.Fatalf("payment by its id: %+v, %v", got, err)
		}
		for what, args := range map[string][2]string{
			"another environment": {string(parcela.Production), pay.ID}, "not an id": {string(parcela.Sandbox), "nope"},
			"not UTF-8": {string(parcela.Sandbox), "\xff"}, "a NUL": {string(parcela.Sandbox), pay.ID[:35] + "\x00"},
		} {
			_, err := b.app.Payments.PublicPayment(b.ctx, parcela.Environment(args[0]), args[1])
			wantCode(t, "payment of "+what, err, parcela.ENOTFOUND)
		}
	})
}

// A refused card, then an approved one, on one bill: the refused attempt
// stays with its reason, the approved one pays the bill as a Pix would
// (its open Pix canceled, the billing active, one bill.paid event), and
// GET /bills/{id} shows both.
func TestCardRefusedThenApproved(t *testing.T) {
	eachCheckout(t, func(t *testing.T, b *checkoutBundle) {
		o := b.charge(4, parcela.MethodPix)
		first := o.Billings[0].Bills[0]
		refused, err := b.payByCard(first, card("4000 0000 0000 9995", "123"))
		if err != nil || refused.Status != parcela.PaymentRefused || *refused.RefusedReason != parcela.RefusedInsufficientFunds {
			t.Fatalf("refused card: %+v, %v", refused, err)
		}
		if got := b.bill(first.ID); got.Status != parcela.BillPending || len(got.Payments) != 2 {
			t.Fatalf("after a refusal the bill is %s with %d payments", got.Status, len(got.Payments))
		}
		b.clock.Advance(time.Minute)
		c := card("4111111111111111", "321")
		c.Installments = 1
		paid, err := b.payByCard(first, c)
		if err != nil || paid.Status != parcela.PaymentPaid || paid.PaidAmountCents != first.AmountCents || paid.AmountCents != first.AmountCents {
			t.Fatalf("approved card: %+v, %v", paid, err)
		}
		got := b.bill(first.ID)
		var statuses []string
		for _, p := range got.Payments {
			s := p.Method + " " + p.Status
			if p.Card != nil {
				s += " " + string(p.Card.Brand) + " " + p.Card.LastFour
			}
			if p.RefusedReason != nil {
				s += " " + *p.RefusedReason
			}
			statuses = append(statuses, s)
		}
		want := "pix canceled|credit_card refused visa 9995 insufficient_funds|credit_card paid visa 1111"
		if strings.Join(statuses, "|") != want || got.Status != parcela.BillPaid || got.Billing.Status != parcela.BillingActive {
			t.Fatalf("bill %s, billing %s, payments %v; want %s", got.Status, got.Billing.Status, statuses, want)
		}
		events, err := b.db.Events(b.ctx, b.a, first.ID)
		if err != nil || len(events) != 2 || events[1].Event != parcela.BillPaid {
			t.Fatalf("bill events %v %v, want pending and one paid", eventNames(events), err)
		}
		_, err = b.payByCard(first, c)
		wantCode(t, "a card for a paid bill", err, parcela.EINVALIDSTATE)
		if got := b.bill(first.ID); len(got.Payments) != 3 {
			t.Fatalf("%d payments after a refused attempt on a paid bill", len(got.Payments))
		}
	})
}

// Card checks and methods: a card that fails its checks is no attempt; a
// bill whose configuration takes no card refuses one; installments as the
// configuration allows.
func TestCardChecks(t *testing.T) {
	eachCheckout(t, func(t *testing.T, b *checkoutBundle) {
		o := b.charge(4, parcela.MethodPix)
		first, installment := o.Billings[0].Bills[0], o.Billings[0].Bills[1]
		bad := card("4111111111111112", "12")
		_, err := b.payByCard(first, bad)
		wantCode(t, "a card failing Luhn", err, parcela.EINVALID)
		for _, f := range err.(*parcela.Error).Fields {
			if strings.Contains(f.Message, "4111") {
				t.Fatalf("a message repeats the card: %+v", f)
			}
		}
		c := card("4111111111111111", "123")
		c.Installments = 2 // the financed configuration's down payment: 1
		_, err = b.payByCard(first, c)
		wantCode(t, "two installments of a down payment", err, parcela.EINVALID)
		_, err = b.payByCard(installment, card("4111111111111111", "123"))
		wantCode(t, "a card for an installment that waits for its down payment", err, parcela.EINVALIDSTATE)
		if got := b.bill(first.ID); len(got.Payments) != 1 {
			t.Fatalf("%d payments after cards that failed their checks", len(got.Payments))
		}

		up := b.charge(1, parcela.MethodBoleto).Billings[0].Bills[0]
		c.Installments = 3 // upfront: up to the company's max_installments
		p, err := b.payByCard(up, c)
		if err != nil || p.Installments != 3 || p.Status != parcela.PaymentPaid {
			t.Fatalf("upfront in 3 card installments: %+v, %v", p, err)
		}
		o2, err := b.app.Orders.Order(b.ctx, b.a, up.OrderID)
		if err != nil || o2.Status != parcela.OrderFinished || o2.Billings[0].Status != parcela.BillingFinished {
			t.Fatalf("upfront paid by card: order %s, %v", o2.Status, err)
		}
	})
}

// Payments issued on demand: a Pix for an installment that had none, the
// same one again, and racing boleto issues leaving one.
func TestIssueOnDemand(t *testing.T) {
	eachCheckout(t, func(t *testing.T, b *checkoutBundle) {
		o := b.charge(4, parcela.MethodPix)
		bills := o.Billings[0].Bills
		issue := func(bill *parcela.Bill, method string) (*parcela.Payment, error) {
			return b.app.Checkout.IssuePayment(b.ctx, parcela.Sandbox, bill.ID, bill.AuthenticationCode, method)
		}
		_, err := issue(bills[1], parcela.MethodPix)
		wantCode(t, "an installment before the down payment", err, parcela.EINVALIDSTATE)
		_, err = issue(bills[0], parcela.MethodCreditCard)
		wantCode(t, "a card issued", err, parcela.EINVALID)
		if _, _, err := b.app.Payments.PayPayment(b.ctx, b.a, bills[0].Payments[0].ID, parcela.Settlement{}); err != nil {
			t.Fatal(err)
		}

		pix, err := issue(bills[1], parcela.MethodPix)
		if err != nil || pix.Method != parcela.MethodPix || pix.Status != parcela.PaymentUnpaid || pix.AmountCents != bills[1].AmountCents ||
			pix.Barcode == nil || !strings.HasPrefix(*pix.Barcode, "000201") || !pix.ExpiresAt.Equal(parcela.ExpiryAfter(bills[1].EffectiveDueDate)) {
			t.Fatalf("Pix on demand: %+v, %v", pix, err)
		}
		again, err := issue(bills[1], parcela.MethodPix)
		if err != nil || again.ID != pix.ID {
			t.Fatalf("a second Pix: %v, %v", again, err)
		}
		// The sweep leaves a bill with a live payment alone.
		b.clock.Set(bills[1].DueDate.AddDate(0, 0, -5))
		if n, err := b.app.Sweeps.Only(b.a.CompanyID).IssueDueInstallments(b.ctx); err != nil || n.Moved != 0 || len(n.Failed) != 0 {
			t.Fatalf("the sweep issued %+v (%v) for a bill with a live Pix", n, err)
		}

		errs := race(
			func() error { _, err := issue(bills[2], parcela.MethodBoleto); return err },
			func() error { _, err := issue(bills[2], parcela.MethodBoleto); return err },
		)
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("racing issues: %v", errs)
		}
		got := b.bill(bills[2].ID)
		if len(got.Payments) != 1 || got.Payments[0].Method != parcela.MethodBoleto || got.Payments[0].PixCode == nil {
			t.Fatalf("after racing issues, %d payments", len(got.Payments))
		}
	})
}

// The checkout offers a Pix or boleto only when asking for it gets one
// (Bill.CanIssueAt): a first bill charged as a boleto due on a Saturday
// gets a Pix through the end of Monday, its last payable day (its last
// millisecond included), and none in the settlement grace after it, where
// the page offered one that IssuePayment refused.
func TestCanIssueAtAgreesWithIssuePayment(t *testing.T) {
	eachCheckout(t, func(t *testing.T, b *checkoutBundle) {
		b.clock.Set(time.Date(2026, 11, 19, 10, 0, 0, 0, parcela.SaoPaulo)) // Thursday; due Saturday 10:00
		first := b.charge(1, parcela.MethodBoleto).Billings[0].Bills[0]
		for _, tt := range []struct {
			at   time.Time
			want bool
		}{
			{time.Date(2026, 11, 23, 23, 59, 59, 999_000_000, parcela.SaoPaulo), true},
			{time.Date(2026, 11, 24, 0, 0, 0, 0, parcela.SaoPaulo), false},
			{time.Date(2026, 11, 24, 12, 0, 0, 0, parcela.SaoPaulo), false},
		} {
			b.clock.Set(tt.at)
			bill := b.bill(first.ID)
			can := bill.CanIssueAt(bill.Billing.PaymentConfiguration, b.c, parcela.MethodPix, tt.at)
			_, err := b.app.Checkout.IssuePayment(b.ctx, parcela.Sandbox, first.ID, first.AuthenticationCode, parcela.MethodPix)
			if can != tt.want || (err == nil) != tt.want {
				t.Errorf("at %v: CanIssueAt %v, IssuePayment %v; want issuable %v", tt.at, can, err, tt.want)
			}
			if !bill.CanIssueAt(bill.Billing.PaymentConfiguration, b.c, parcela.MethodBoleto, tt.at) {
				t.Errorf("at %v: its live boleto is not offered", tt.at)
			}
		}
	})
}

// A first bill charged for a card lapses at its due date when nothing paid
// it: the sweep cancels the billing and the order, and the page may no
// longer take a card. A Pix issued for it on the checkout keeps it until
// that Pix expires.
func TestCardChargeLapses(t *testing.T) {
	eachCheckout(t, func(t *testing.T, b *checkoutBundle) {
		sweeps := b.app.Sweeps.Only(b.a.CompanyID)
		o := b.charge(4, parcela.MethodCreditCard)
		first := o.Billings[0].Bills[0]
		if len(first.Payments) != 0 || o.Status != parcela.OrderInProgress || !first.DueDate.Equal(checkoutStart.Add(48*time.Hour)) {
			t.Fatalf("card charge: order %s, first bill with %d payments due %v", o.Status, len(first.Payments), first.DueDate)
		}
		b.clock.Set(first.DueDate.Add(-time.Second))
		if n, err := sweeps.LapseFirstBills(b.ctx); err != nil || n.Moved != 0 || len(n.Failed) != 0 {
			t.Fatalf("lapsed %+v before the due date: %v", n, err)
		}
		b.clock.Set(first.DueDate)
		_, err := b.payByCard(first, card("4111111111111111", "123"))
		wantCode(t, "a card at the due date", err, parcela.EINVALIDSTATE)
		if n, err := sweeps.LapseFirstBills(b.ctx); err != nil || n.Moved != 1 || len(n.Failed) != 0 {
			t.Fatalf("lapsed %+v at the due date: %v", n, err)
		}
		read, err := b.app.Orders.Order(b.ctx, b.a, o.ID)
		if err != nil || read.Status != parcela.OrderCanceled || *read.CancelationReason != parcela.ReasonExpired ||
			read.Billings[0].Status != parcela.BillingCanceled || *read.Billings[0].CancelationReason != "down_payment_not_paid" {
			t.Fatalf("after lapsing: order %s, billing %s, %v", read.Status, read.Billings[0].Status, err)
		}
		if n, err := sweeps.LapseFirstBills(b.ctx); err != nil || n.Moved != 0 || len(n.Failed) != 0 {
			t.Fatalf("lapsed %+v again: %v", n, err)
		}

		b.clock.Set(checkoutStart)
		kept := b.charge(4, parcela.MethodCreditCard).Billings[0].Bills[0]
		pix, err := b.app.Checkout.IssuePayment(b.ctx, parcela.Sandbox, kept.ID, kept.AuthenticationCode, parcela.MethodPix)
		if err != nil || !pix.ExpiresAt.Equal(kept.DueDate) {
			t.Fatalf("Pix for a card charge: %+v, %v", pix, err)
		}
		boleto, err := b.app.Checkout.IssuePayment(b.ctx, parcela.Sandbox, kept.ID, kept.AuthenticationCode, parcela.MethodBoleto)
		if err != nil || !boleto.ExpiresAt.After(kept.DueDate) {
			t.Fatalf("boleto for a card charge: %+v, %v", boleto, err)
		}
		// Past the due date, the Pix expires; the boleto (grace) still pays the bill.
		b.clock.Set(kept.DueDate.Add(time.Hour))
		if n, err := sweeps.LapseFirstBills(b.ctx); err != nil || n.Moved != 0 || len(n.Failed) != 0 {
			t.Fatalf("lapsed %+v with a live boleto: %v", n, err)
		}
		if n, err := sweeps.ExpireDuePayments(b.ctx); err != nil || n.Moved != 1 || len(n.Failed) != 0 {
			t.Fatalf("expired %+v: %v", n, err)
		}
		if got := b.bill(kept.ID); got.Status != parcela.BillPending || got.Billing.Status != parcela.BillingWaitingPayment {
			t.Fatalf("the Pix's expiry moved the bill to %s, the billing to %s", got.Status, got.Billing.Status)
		}
		if _, _, err := b.app.Payments.PayPayment(b.ctx, b.a, boleto.ID, parcela.Settlement{}); err != nil {
			t.Fatalf("paying the boleto: %v", err)
		}
	})
}

// A card and a Pix paying one bill at the same instant settle it once:
// one of them is paid, the other refused (the Pix canceled, or the card's
// approval voided), and the bill has one bill.paid event.
func TestRaceCardAndPix(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		b := checkoutSetup(t, db)
		o := b.charge(3, parcela.MethodPix)
		first := o.Billings[0].Bills[0]
		errs := race(
			func() error { _, err := b.payByCard(first, card("5555555555554444", "123")); return err },
			func() error {
				_, _, err := b.app.Payments.PayPayment(b.ctx, b.a, first.Payments[0].ID, parcela.Settlement{})
				return err
			},
		)
		r := &raceRound{t: t, ctx: b.ctx, db: db, clock: b.clock, app: b.app, a: b.a, order: o}
		byCard, byPix := r.ok("card", errs[0]), r.ok("pix", errs[1])
		r.raceInvariants()
		if byCard == byPix {
			t.Fatalf("card ok %v, Pix ok %v: want one", byCard, byPix)
		}
		got := b.bill(first.ID)
		events, err := db.Events(b.ctx, b.a, first.ID)
		if err != nil || len(events) != 2 || events[1].Event != parcela.BillPaid || got.Status != parcela.BillPaid {
			t.Fatalf("bill %s, events %v %v", got.Status, eventNames(events), err)
		}
		for _, p := range got.Payments {
			paidBy := p.Method == parcela.MethodCreditCard && byCard || p.Method == parcela.MethodPix && byPix
			if (p.Status == parcela.PaymentPaid) != paidBy {
				t.Fatalf("%s payment %s (card ok %v)", p.Method, p.Status, byCard)
			}
		}
	})
}

// Two approved cards racing on one bill charge it once.
func TestRaceTwoCards(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		b := checkoutSetup(t, db)
		first := b.charge(1, parcela.MethodPix).Billings[0].Bills[0]
		pay := func() error { _, err := b.payByCard(first, card("6362970000457013", "123")); return err }
		errs := race(pay, pay)
		r := &raceRound{t: t, ctx: b.ctx, db: db, app: b.app, a: b.a, order: &parcela.Order{ID: first.OrderID}}
		if r.ok("card", errs[0]) == r.ok("card", errs[1]) {
			t.Fatalf("two cards: %v", errs)
		}
		r.raceInvariants()
	})
}

// countingAcquirer is the simulated acquirer, counting the voids it gets.
type countingAcquirer struct {
	bank.SimulatedAcquirer
	mu     sync.Mutex
	voided []string
}

func (a *countingAcquirer) Void(ctx context.Context, v parcela.CardVoid) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.voided = append(a.voided, v.PaymentID)
	return nil
}

// A card attempt is a payment intent until its change is stored: none is
// left after attempts that were recorded, and one left by an attempt that
// died between the acquirer's answer and its change is voided at the
// acquirer by the intents' recovery.
func TestCardAttemptsAreIntents(t *testing.T) {
	eachCheckout(t, func(t *testing.T, b *checkoutBundle) {
		acq := &countingAcquirer{}
		b.useAcquirer(acq)
		first := b.charge(3, parcela.MethodPix).Billings[0].Bills[0]
		if _, err := b.payByCard(first, card("4000000000000002", "123")); err != nil {
			t.Fatal(err)
		}
		if _, err := b.payByCard(first, card("4111111111111111", "123")); err != nil {
			t.Fatal(err)
		}
		if left, err := b.db.PaymentIntents(b.ctx, b.a); err != nil || len(left) != 0 {
			t.Fatalf("intents left after recorded attempts: %v %v", left, err)
		}

		died := &parcela.PaymentIntent{ID: parcela.NewID(), CompanyID: b.a.CompanyID, Environment: parcela.Sandbox, BillID: first.ID,
			Method: parcela.MethodCreditCard, AmountCents: 100, State: parcela.IntentIssuing, CreatedAt: b.clock.Now(), UpdatedAt: b.clock.Now()}
		if err := b.db.RecordIntent(b.ctx, died); err != nil {
			t.Fatal(err)
		}
		b.clock.Advance(parcela.IntentTimeout + time.Second)
		if r, err := b.app.Sweeps.Only(b.a.CompanyID).RecoverIntents(b.ctx); err != nil || r.Moved != 1 {
			t.Fatalf("recovered %+v: %v", r, err)
		}
		if len(acq.voided) != 1 || acq.voided[0] != died.ID {
			t.Fatalf("voided at the acquirer: %v, want %s", acq.voided, died.ID)
		}
	})
}

// lostAnswerStore is the store, except that a change recording a card
// attempt commits and then reports a failure, as when the connection is
// lost (or the payer's request canceled) while the COMMIT is under way:
// the use case cannot tell whether it committed.
type lostAnswerStore struct{ *sqldb.DB }

func (s lostAnswerStore) Apply(ctx context.Context, c *parcela.Change) error {
	if err := s.DB.Apply(ctx, c); err != nil {
		return err
	}
	for _, p := range c.NewPayments {
		if p.Method == parcela.MethodCreditCard {
			return &parcela.Error{Code: parcela.EUNAVAILABLE, Message: "the connection was lost during the commit"}
		}
	}
	return nil
}

// A card approval whose change committed is never released, even when the
// store could not confirm the commit: the bill shows it paid, so the money
// must stay with the seller. Only an attempt nothing recorded is voided.
func TestCardApprovalCommittedIsNotVoided(t *testing.T) {
	eachCheckout(t, func(t *testing.T, b *checkoutBundle) {
		acq := &countingAcquirer{}
		b.app = parcela.NewServices(lostAnswerStore{b.db}, bank.NewSimulated(), parcela.AcquirersByEnvironment{parcela.Sandbox: acq}, b.clock, sqldbtest.Links)
		first := b.charge(3, parcela.MethodPix).Billings[0].Bills[0]
		_, err := b.payByCard(first, card("4111111111111111", "123"))
		wantCode(t, "card", err, parcela.EUNAVAILABLE)
		got := b.bill(first.ID)
		var paid *parcela.Payment
		for _, p := range got.Payments {
			if p.Method == parcela.MethodCreditCard && p.Status == parcela.PaymentPaid {
				paid = p
			}
		}
		if got.Status != parcela.BillPaid || paid == nil {
			t.Fatalf("bill %s without a paid card payment: the change did not commit", got.Status)
		}
		if slices.Contains(acq.voided, paid.ID) {
			t.Fatalf("the approval of card payment %s, recorded as paying bill %s, was voided at the acquirer", paid.ID, got.ID)
		}
		if left, err := b.db.PaymentIntents(b.ctx, b.a); err != nil || len(left) != 0 {
			t.Fatalf("intents left: %v %v", left, err)
		}
	})
}

// settlingAcquirer is the simulated acquirer that lets a settlement in
// while it decides: the bank reports part of the bill's Pix paid between
// the card's pricing and its approval.
type settlingAcquirer struct {
	countingAcquirer
	settle func()
}

func (a *settlingAcquirer) Authorize(ctx context.Context, req parcela.CardAuthorization) (parcela.CardDecision, error) {
	a.settle()
	return a.SimulatedAcquirer.Authorize(ctx, req)
}

// A card approved for what the bill owed when it was priced, while part of
// the bill's Pix was settled, would charge the payer what the Pix already
// paid: its approval is voided, the attempt kept as canceled, and the bill
// stays open for the rest. The card used to pay the bill for the whole
// amount on top of the Pix's part.
func TestCardApprovedAfterAPartialSettlementIsVoided(t *testing.T) {
	eachCheckout(t, func(t *testing.T, b *checkoutBundle) {
		acq := &settlingAcquirer{}
		b.useAcquirer(acq)
		first := b.charge(3, parcela.MethodPix).Billings[0].Bills[0]
		pix := first.Payments[0]
		acq.settle = func() {
			part := int64(5000)
			if _, _, err := b.app.Payments.PayPayment(b.ctx, b.a, pix.ID, parcela.Settlement{PaidAmountCents: &part}); err != nil {
				t.Errorf("part of the Pix: %v", err)
			}
		}
		_, err := b.payByCard(first, card("4111111111111111", "123"))
		wantCode(t, "card", err, parcela.EINVALIDSTATE)
		got := b.bill(first.ID)
		var attempt *parcela.Payment
		for _, p := range got.Payments {
			if p.Method == parcela.MethodCreditCard {
				attempt = p
			}
		}
		if got.Status != parcela.BillPending || got.Received() != 5000 || attempt == nil || attempt.Status != parcela.PaymentCanceled {
			t.Fatalf("bill %s, received %d, card attempt %+v", got.Status, got.Received(), attempt)
		}
		if !slices.Contains(acq.voided, attempt.ID) {
			t.Fatalf("the approval of card payment %s was not voided: %v", attempt.ID, acq.voided)
		}
		// The payer pays the rest by card.
		acq.settle = func() {}
		p, err := b.payByCard(first, card("4111111111111111", "123"))
		if err != nil || p.Status != parcela.PaymentPaid || p.AmountCents != first.AmountCents-5000 {
			t.Fatalf("the rest by card: %+v, %v", p, err)
		}
	})
}

// A card priced an hour before an installment's due instant, approved an
// hour after it, while 1 cent of the bill's boleto was settled: the bill
// received money since the card was priced, so the approval is voided. The
// check measured what the bill owed at the decision, whose fine (begun in
// between) hid the cent received, and the card paid the bill on top of it.
func TestCardApprovedAcrossTheDueInstantAfterAPartialSettlementIsVoided(t *testing.T) {
	eachCheckout(t, func(t *testing.T, b *checkoutBundle) {
		acq := &settlingAcquirer{}
		b.useAcquirer(acq)
		installment, boleto := b.cardInstallmentWithBoleto(t)
		b.clock.Set(installment.EffectiveDueDate.Add(-time.Hour))
		acq.settle = func() {
			cents := int64(1)
			if _, _, err := b.app.Payments.PayPayment(b.ctx, b.a, boleto.ID, parcela.Settlement{PaidAmountCents: &cents}); err != nil {
				t.Errorf("part of the boleto: %v", err)
			}
			b.clock.Set(installment.EffectiveDueDate.Add(time.Hour))
		}
		paid, err := b.payByCard(installment, card("4111111111111111", "123"))
		got := b.bill(installment.ID)
		if err == nil {
			t.Fatalf("card approved for %d cents on a bill that received 1 cent since it was priced: bill %s, received in all %d",
				paid.AmountCents, got.Status, got.ReceivedInAll())
		}
		wantCode(t, "card", err, parcela.EINVALIDSTATE)
		if got.Status == parcela.BillPaid || got.ReceivedInAll() != 1 {
			t.Fatalf("after the voided card: bill %s, received %d, want open with the 1 cent", got.Status, got.ReceivedInAll())
		}
		for _, q := range got.Payments {
			if q.Method == parcela.MethodCreditCard && (q.Status != parcela.PaymentCanceled || q.PaidAmountCents != 0) {
				t.Fatalf("the voided card: %s, %d paid", q.Status, q.PaidAmountCents)
			}
		}
	})
}

// releaseRaceStore is the store, except that the first change recording a
// card attempt as canceled (its approval just voided at the acquirer) runs
// once the clock has passed the bill's due instant and another change
// moved the billing, so it conflicts and the attempt is decided again.
type releaseRaceStore struct {
	*sqldb.DB
	meanwhile func()
}

func (s *releaseRaceStore) Apply(ctx context.Context, c *parcela.Change) error {
	for _, p := range c.NewPayments {
		if f := s.meanwhile; f != nil && p.Method == parcela.MethodCreditCard && p.Status == parcela.PaymentCanceled {
			s.meanwhile = nil
			f()
		}
	}
	return s.DB.Apply(ctx, c)
}

// A card approval voided at the acquirer stays voided: the attempt is
// kept canceled even when a conflict has it decided again after the
// bill's due instant, when the fine makes the bill owe the card's amount
// again. It used to be recorded as paying the bill, with the money
// released to the payer.
func TestCardApprovalVoidedStaysVoided(t *testing.T) {
	eachCheckout(t, func(t *testing.T, b *checkoutBundle) {
		acq := &settlingAcquirer{}
		store := &releaseRaceStore{DB: b.db}
		b.app = parcela.NewServices(store, bank.NewSimulated(), parcela.AcquirersByEnvironment{parcela.Sandbox: acq}, b.clock, sqldbtest.Links)
		installment, boleto := b.cardInstallmentWithBoleto(t)
		settle := func(cents int64) {
			if _, _, err := b.app.Payments.PayPayment(b.ctx, b.a, boleto.ID, parcela.Settlement{PaidAmountCents: &cents}); err != nil {
				t.Errorf("part of the boleto: %v", err)
			}
		}
		// Priced an hour before the due instant; 1 cent of the boleto is
		// settled while the acquirer decides, so the approval is voided.
		b.clock.Set(installment.EffectiveDueDate.Add(-time.Hour))
		acq.settle = func() { settle(1) }
		store.meanwhile = func() {
			b.clock.Set(installment.EffectiveDueDate.Add(time.Hour))
			settle(1)
		}
		_, err := b.payByCard(installment, card("4111111111111111", "123"))
		got := b.bill(installment.ID)
		for _, p := range got.Payments {
			if p.Method == parcela.MethodCreditCard && slices.Contains(acq.voided, p.ID) && p.Status != parcela.PaymentCanceled {
				t.Fatalf("card payment %s voided at the acquirer is %s; bill %s", p.ID, p.Status, got.Status)
			}
		}
		wantCode(t, "card", err, parcela.EINVALIDSTATE)
		if got.Status == parcela.BillPaid || got.Received() != 2 {
			t.Fatalf("bill %s, received %d, want open with the boleto's 2 cents", got.Status, got.Received())
		}
	})
}

// dyingAcquirer approves a card and then the process dies, before the
// attempt's change is stored.
type dyingAcquirer struct {
	countingAcquirer
	approved []string
	die      bool
}

func (a *dyingAcquirer) Authorize(ctx context.Context, req parcela.CardAuthorization) (parcela.CardDecision, error) {
	d, err := a.SimulatedAcquirer.Authorize(ctx, req)
	if err == nil && d.Approved && a.die {
		a.mu.Lock()
		a.approved = append(a.approved, req.PaymentID)
		a.mu.Unlock()
		panic(crash{})
	}
	return d, err
}

// A process that dies after the acquirer approved a card and before the
// change recording it committed loses no money: the bill shows no card
// payment and stays open, its attempt's intent is left issuing, and the
// intents' recovery voids that very approval at the acquirer; the payer's
// next card pays the bill once.
func TestCardApprovedThenTheProcessDied(t *testing.T) {
	eachCheckout(t, func(t *testing.T, b *checkoutBundle) {
		acq := &dyingAcquirer{die: true}
		b.useAcquirer(acq)
		first := b.charge(3, parcela.MethodPix).Billings[0].Bills[0]
		if !survive(t, func() { _, _ = b.payByCard(first, card("4111111111111111", "123")) }) {
			t.Fatal("the card attempt did not reach the crash")
		}
		if len(acq.approved) != 1 {
			t.Fatalf("approved %v", acq.approved)
		}
		approved := acq.approved[0]
		got := b.bill(first.ID)
		for _, p := range got.Payments {
			if p.Method == parcela.MethodCreditCard {
				t.Fatalf("a card payment %s %s was stored though its change never ran", p.ID, p.Status)
			}
		}
		left, err := b.db.PaymentIntents(b.ctx, b.a)
		if err != nil || len(left) != 1 || left[0].ID != approved || left[0].State != parcela.IntentIssuing {
			t.Fatalf("intents after the crash: %+v %v, want %s issuing", left, err, approved)
		}
		// Not before the intents' timeout: the attempt may still be alive.
		if r, err := b.app.Sweeps.Only(b.a.CompanyID).RecoverIntents(b.ctx); err != nil || r.Moved != 0 || len(acq.voided) != 0 {
			t.Fatalf("recovered a fresh intent: %+v %v, voided %v", r, err, acq.voided)
		}
		b.clock.Advance(parcela.IntentTimeout + time.Second)
		if r, err := b.app.Sweeps.Only(b.a.CompanyID).RecoverIntents(b.ctx); err != nil || r.Moved != 1 {
			t.Fatalf("recovered %+v: %v", r, err)
		}
		if !slices.Equal(acq.voided, []string{approved}) {
			t.Fatalf("voided at the acquirer %v, want the approval %s", acq.voided, approved)
		}
		if left, err := b.db.PaymentIntents(b.ctx, b.a); err != nil || len(left) != 1 || left[0].State != parcela.IntentVoided {
			t.Fatalf("intents after recovery: %+v %v", left, err)
		}
		acq.die = false
		p, err := b.payByCard(first, card("4111111111111111", "123"))
		if err != nil || p.Status != parcela.PaymentPaid {
			t.Fatalf("the next card: %+v %v", p, err)
		}
		got = b.bill(first.ID)
		cards := 0
		for _, p := range got.Payments {
			if p.Method == parcela.MethodCreditCard {
				cards++
			}
		}
		if got.Status != parcela.BillPaid || cards != 1 || slices.Contains(acq.voided, p.ID) {
			t.Fatalf("bill %s with %d card payments, voided %v", got.Status, cards, acq.voided)
		}
	})
}

// cardInstallmentWithBoleto charges an offer whose installments take cards
// and boletos (its down payment by Pix, paid) and returns the first
// installment with a boleto issued for it on its checkout.
func (b *checkoutBundle) cardInstallmentWithBoleto(t *testing.T) (*parcela.Bill, *parcela.Payment) {
	t.Helper()
	p, err := b.app.Catalog.CreateProduct(b.ctx, b.a, fromJSON[parcela.ProductInput](t, `{"name": "Curso", "full_amount_cents": 150000, "kind": "course"}`))
	if err != nil {
		t.Fatal(err)
	}
	b.offer, err = b.app.Catalog.CreateOffer(b.ctx, b.a, fromJSON[parcela.OfferRequest](t, `{"offer": {"name": "Turma", "product_id": "`+p.ID+`", "amount_cents": 120000},
		"payment_configurations": [{"payment_type": "financed", "financed_type": "boleto", "payment_methods": ["boleto", "credit_card"],
		 "allowed_down_payment_methods": ["pix"], "down_payment_type": "percentage", "down_payment_value": 0.2,
		 "interest_rate": 0.0199, "max_installments": 12, "expires_in_hours": 48}]}`))
	if err != nil {
		t.Fatal(err)
	}
	o := b.charge(3, parcela.MethodPix)
	if _, _, err := b.app.Payments.PayPayment(b.ctx, b.a, o.Billings[0].Bills[0].Payments[0].ID, parcela.Settlement{}); err != nil {
		t.Fatal(err)
	}
	installment := o.Billings[0].Bills[1]
	boleto, err := b.app.Checkout.IssuePayment(b.ctx, parcela.Sandbox, installment.ID, installment.AuthenticationCode, parcela.MethodBoleto)
	if err != nil {
		t.Fatal(err)
	}
	return installment, boleto
}
