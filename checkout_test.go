package parcela

import (
	"testing"
	"time"
)

// cardOffer is an offer with an upfront configuration taking Pix and cards
// and a financed one whose down payment may be a card.
func cardOffer() (*Order, *Company) {
	c := NewCompany("Escola", "11222333000181", "escola")
	pct := DownPaymentPercentage
	one := 1
	o := &Offer{ID: "offer", AmountCents: 199000, Availability: "enabled", PaymentConfigurations: []*PaymentConfiguration{
		{ID: "upfront", PaymentType: Upfront, PaymentMethods: []string{MethodPix, MethodCreditCard}, Availability: "enabled", ExpiresIn: 72, MaxInstallments: 1},
		{ID: "card-only", PaymentType: Upfront, PaymentMethods: []string{MethodCreditCard}, Availability: "enabled", ExpiresIn: 72, MaxInstallments: 1},
		{ID: "boleto-only", PaymentType: Upfront, PaymentMethods: []string{MethodBoleto}, Availability: "enabled", ExpiresIn: 72, MaxInstallments: 1},
		{ID: "financed", PaymentType: Financed, PaymentMethods: []string{MethodBoleto}, AllowedDownPaymentMethods: []string{MethodPix, MethodCreditCard},
			Availability: "enabled", ExpiresIn: 72, MaxInstallments: 12, MaxDownPaymentInstallments: &one, DownPaymentType: &pct,
			DownPaymentValue: MustRate("0.2"), InterestRate: MustRate("0.0199"), MinInstallmentCents: 5000},
	}}
	return &Order{ID: "order", CustomerBirthdate: "1990-05-17", Offer: o}, &c
}

func chargeReq(config, method string, installments int) ChargeRequest {
	var r ChargeRequest
	r.PaymentConfigurationID, r.Installments = &config, &installments
	day, ip, ua := 10, "203.0.113.7", "test"
	r.DueDay = &day
	r.Payment = &struct {
		PaymentMethod *string `json:"payment_method"`
	}{&method}
	r.Signature = &struct {
		RemoteIP  *string `json:"remote_ip"`
		UserAgent *string `json:"user_agent"`
	}{&ip, &ua}
	return r
}

func TestPlanCardCharge(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 5, 10, 0, 0, 0, SaoPaulo)
	o, c := cardOffer()

	t.Run("same schedule as the charge", func(t *testing.T) {
		t.Parallel()
		card, err := PlanCardCharge(chargeReq("financed", MethodCreditCard, 5), o, c, now)
		if err != nil {
			t.Fatal(err)
		}
		pix, err := PlanCharge(chargeReq("financed", MethodPix, 5), o, c, now, "")
		if err != nil {
			t.Fatal(err)
		}
		if card.Method != MethodCreditCard || card.Configuration != o.Offer.PaymentConfigurations[3] {
			t.Fatalf("plan method %q configuration %v", card.Method, card.Configuration.ID)
		}
		if len(card.Schedule.Bills) != len(pix.Schedule.Bills) || card.Schedule.TotalCents != pix.Schedule.TotalCents {
			t.Fatalf("card schedule %+v, pix schedule %+v", card.Schedule, pix.Schedule)
		}
		for i := range card.Schedule.Bills {
			if card.Schedule.Bills[i] != pix.Schedule.Bills[i] {
				t.Errorf("bill %d: card %+v, pix %+v", i, card.Schedule.Bills[i], pix.Schedule.Bills[i])
			}
		}
	})
	t.Run("card-only upfront", func(t *testing.T) {
		t.Parallel()
		p, err := PlanCardCharge(chargeReq("card-only", MethodCreditCard, 1), o, c, now)
		if err != nil {
			t.Fatal(err)
		}
		if p.Schedule.TotalCents != 199000 || p.Configuration.PaymentMethods[0] != MethodCreditCard {
			t.Fatalf("plan %+v", p)
		}
	})
	for _, tt := range []struct {
		name, config string
		installments int
		field        string
	}{
		{"configuration without cards", "boleto-only", 1, "payment.payment_method"},
		{"unknown configuration", "nope", 1, "payment_configuration_id"},
		{"the charge's own rules still hold", "financed", 40, "installments"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := PlanCardCharge(chargeReq(tt.config, MethodCreditCard, tt.installments), o, c, now)
			e, ok := err.(*Error)
			if !ok || e.Code != EINVALID || !(&Validation{Fields: e.Fields}).Has(tt.field) {
				t.Fatalf("error = %v, want a validation error on %s", err, tt.field)
			}
		})
	}
	if o.Offer.PaymentConfigurations[2].AllowedDownPaymentMethods != nil || len(o.Offer.PaymentConfigurations[3].AllowedDownPaymentMethods) != 2 {
		t.Fatal("planning changed the offer's configurations")
	}
}

func TestBillNotPayable(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		bill, billing string
		typ           BillType
		want          string
	}{
		{BillPending, BillingWaitingPayment, BillTypeDownPayment, ""},
		{BillOverdue, BillingActive, BillTypeInstallment, ""},
		{BillPending, BillingActive, BillTypeInstallment, ""},
		{BillPaid, BillingActive, BillTypeInstallment, NotPayableBillPaid},
		{BillCanceled, BillingCanceled, BillTypeInstallment, NotPayableBillCanceled},
		{BillPending, BillingCanceled, BillTypeDownPayment, NotPayableBillingCanceled},
		{BillPending, BillingFinished, BillTypeInstallment, NotPayableBillingFinished},
		{BillPending, BillingWaitingPayment, BillTypeInstallment, NotPayableDownPaymentPending},
	} {
		b := &Bill{Status: tt.bill, Type: tt.typ, Billing: &Billing{Status: tt.billing}}
		if got := b.NotPayable(); got != tt.want {
			t.Errorf("bill %s, billing %s, %s: %q, want %q", tt.bill, tt.billing, tt.typ, got, tt.want)
		}
		if err := b.Payable(); (err == nil) != (tt.want == "") || err != nil && ErrorCode(err) != EINVALIDSTATE {
			t.Errorf("Payable = %v", err)
		}
	}
}

func TestBillLivePayment(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 5, 10, 0, 0, 0, SaoPaulo)
	expired := &Payment{ID: "old", Method: MethodPix, Status: PaymentUnpaid, ExpiresAt: now}
	live := &Payment{ID: "live", Method: MethodPix, Status: PaymentUnpaid, ExpiresAt: now.Add(time.Hour)}
	boleto := &Payment{ID: "boleto", Method: MethodBoleto, Status: PaymentExpired, ExpiresAt: now.Add(time.Hour)}
	b := &Bill{Payments: []*Payment{expired, boleto, live}}
	if p := b.LivePayment(MethodPix, now); p != live {
		t.Fatalf("live pix = %v", p)
	}
	if p := b.LivePayment(MethodBoleto, now); p != nil {
		t.Fatalf("live boleto = %v", p.ID)
	}
}

func TestMunicipalities(t *testing.T) {
	t.Parallel()
	cities, err := Municipalities()
	if err != nil {
		t.Fatal(err)
	}
	if len(cities) < 5500 {
		t.Fatalf("%d municipalities", len(cities))
	}
	var sp *City
	states := map[string]bool{}
	for i, c := range cities {
		states[c.State.Acronym] = true
		if c.IBGECode == "3550308" {
			sp = &cities[i]
		}
		if i > 0 && cities[i-1].State.Acronym > c.State.Acronym {
			t.Fatalf("not sorted by state at %d", i)
		}
	}
	if sp == nil || sp.Name != "São Paulo" || sp.State.Acronym != "SP" || sp.State.IBGECode != 35 || sp.State.Name != "São Paulo" {
		t.Fatalf("São Paulo = %+v", sp)
	}
	if len(states) != 27 {
		t.Fatalf("%d states", len(states))
	}
	order := map[string]int{}
	for i, c := range cities {
		order[c.Name+"/"+c.State.Acronym] = i
	}
	for _, pair := range [][2]string{{"Água Branca/AL", "Viçosa/AL"}, {"Campos do Jordão/SP", "Campos Novos Paulista/SP"}, {"Pará de Minas/MG", "Paraguaçu/MG"}} {
		if order[pair[0]] == 0 || order[pair[0]] > order[pair[1]] {
			t.Errorf("%s is not before %s", pair[0], pair[1])
		}
	}
}

func TestLinks(t *testing.T) {
	t.Parallel()
	l := Links{PublicURL: "https://pay.example.com"}
	for got, want := range map[string]string{
		l.OfferURL("escola-x", "o1"):        "https://pay.example.com/pay/escola-x/offers/o1",
		l.OrderURL("o1", "a+b"):             "https://pay.example.com/pay/orders/o1?code=a%2Bb",
		l.CheckoutURL("b1", "c1"):           "https://pay.example.com/checkout/bills/b1?code=c1",
		l.PaymentURL("p1"):                  "https://pay.example.com/checkout/payments/p1",
		l.PaymentImageURL("p1", true):       "https://pay.example.com/external_api/v1/payments/p1/pix.png",
		l.PaymentImageURL("p1", false):      "https://pay.example.com/external_api/v1/payments/p1/barcode.png",
		Links{}.CheckoutURL("b/1", "c&d=e"): "/checkout/bills/b%2F1?code=c%26d%3De",
	} {
		if got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
}

func TestBillMethods(t *testing.T) {
	t.Parallel()
	o, _ := cardOffer()
	upfront, financed := o.Offer.PaymentConfigurations[0], o.Offer.PaymentConfigurations[3]
	down, installment := &Bill{Type: BillTypeDownPayment}, &Bill{Type: BillTypeInstallment, Number: 1}
	for _, tt := range []struct {
		name string
		got  []string
		want []string
	}{
		{"upfront", upfront.BillMethods(down), []string{MethodPix, MethodCreditCard}},
		{"down payment", financed.BillMethods(down), []string{MethodPix, MethodCreditCard}},
		{"installment", financed.BillMethods(installment), []string{MethodBoleto}},
	} {
		if len(tt.got) != len(tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, tt.got, tt.want)
			continue
		}
		for i := range tt.got {
			if tt.got[i] != tt.want[i] {
				t.Errorf("%s: %v, want %v", tt.name, tt.got, tt.want)
			}
		}
	}
}
