package parcela

import (
	"net/netip"
	"strings"
	"testing"
	"time"
)

// chargeSetup is an order for the offer of offerRequest, by a customer born
// on birthdate, and its company.
type chargeSetup struct {
	company  *Company
	order    *Order
	upfront  string // configuration ids
	financed string
}

func setupCharge(t *testing.T, birthdate string) chargeSetup {
	t.Helper()
	c := NewCompany("Escola X", "11222333000181", "escola-x")
	offer, err := BuildOffer(offerRequest(t, nil), &c, testProduct(), calSP(2026, time.January, 1, 0, 0, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	offer.PaymentConfigurations[0].ID, offer.PaymentConfigurations[1].ID = "upfront-id", "financed-id"
	return chargeSetup{company: &c, order: &Order{CustomerBirthdate: birthdate, Offer: offer}, upfront: "upfront-id", financed: "financed-id"}
}

func chargeRequest(configuration, method string, installments int, ip, userAgent string) ChargeRequest {
	req := ChargeRequest{PaymentConfigurationID: &configuration, DueDay: new(10), Installments: &installments}
	req.Payment = &struct {
		PaymentMethod *string `json:"payment_method"`
	}{&method}
	req.Signature = &struct {
		RemoteIP  *string `json:"remote_ip"`
		UserAgent *string `json:"user_agent"`
	}{&ip, &userAgent}
	return req
}

func TestPlanChargeSignature(t *testing.T) {
	t.Parallel()
	s := setupCharge(t, "1990-05-17")
	now := calSP(2026, time.March, 5, 10, 0, 0, 0)
	tests := []struct {
		ip, ua string
		field  string // "" when valid
		stored string
	}{
		{"203.0.113.7", "Mozilla/5.0", "", "203.0.113.7"},
		{"2001:db8::1", "curl/8", "", "2001:db8::1"},
		{"2001:0db8:0000:0000:0000:0000:0000:0001", "curl/8", "", "2001:db8::1"},
		{"::ffff:203.0.113.7", "curl/8", "", "::ffff:203.0.113.7"},
		{"fe80::1%eth0", "curl/8", "signature.remote_ip", ""},
		{"fe80::1%25eth0", "curl/8", "signature.remote_ip", ""},
		{"203.0.113.7:443", "curl/8", "signature.remote_ip", ""},
		{"203.0.113.7\x00", "curl/8", "signature.remote_ip", ""},
		{"0000:0000:0000:0000:0000:ffff:203.000.113.007", "curl/8", "signature.remote_ip", ""},
		{strings.Repeat("0", 40) + "::1", "curl/8", "signature.remote_ip", ""},
		{"example.com", "curl/8", "signature.remote_ip", ""},
		{"203.0.113.7", "Mozilla\x00", "signature.user_agent", ""},
		{"203.0.113.7", "Mozilla\r\nX-Injected: 1", "signature.user_agent", ""},
		{"203.0.113.7", strings.Repeat("a", 1025), "signature.user_agent", ""},
	}
	for _, tt := range tests {
		p, err := PlanCharge(chargeRequest(s.financed, MethodPix, 4, tt.ip, tt.ua), s.order, s.company, now, "https://checkout")
		if tt.field == "" {
			if err != nil || p.RemoteIP != tt.stored {
				t.Errorf("ip %q ua %q: %v, stored %q", tt.ip, tt.ua, err, p.RemoteIP)
			}
			continue
		}
		if e, ok := err.(*Error); !ok || e.Code != EINVALID || e.Fields[0].Field != tt.field {
			t.Errorf("ip %q ua %q: err = %v, want one on %s", tt.ip, tt.ua, err, tt.field)
		}
	}
}

func TestPlanChargeFinancingNeedsAnAdult(t *testing.T) {
	t.Parallel()
	// The customer turns 18 on 5 March 2026. The clock moves from the
	// evening before, when only the upfront configuration can be charged,
	// past midnight in São Paulo, when the financed one can too.
	s := setupCharge(t, "2008-03-05")
	clock := NewTestClock(calSP(2026, time.March, 4, 23, 0, 0, 0))
	for _, step := range []struct {
		advance time.Duration
		adult   bool
	}{{0, false}, {59 * time.Minute, false}, {time.Minute, true}, {24 * time.Hour, true}} {
		clock.Advance(step.advance)
		_, err := PlanCharge(chargeRequest(s.financed, MethodPix, 4, "203.0.113.7", "curl/8"), s.order, s.company, clock.Now(), "https://checkout")
		if step.adult && err != nil {
			t.Errorf("at %v: financed charge of an adult: %v", clock.Now(), err)
		}
		if e, _ := err.(*Error); !step.adult && (e == nil || e.Fields[0].Field != "payment_configuration_id" || e.Fields[0].Code != "not_allowed") {
			t.Errorf("at %v: financed charge of a minor: err = %v, want not_allowed on payment_configuration_id", clock.Now(), err)
		}
		if _, err := PlanCharge(chargeRequest(s.upfront, MethodPix, 1, "203.0.113.7", "curl/8"), s.order, s.company, clock.Now(), "https://checkout"); err != nil {
			t.Errorf("at %v: upfront charge: %v", clock.Now(), err)
		}
	}
}

func TestPlanChargeInstallmentFloor(t *testing.T) {
	t.Parallel()
	s := setupCharge(t, "1990-05-17")
	now := calSP(2026, time.March, 5, 10, 0, 0, 0)
	// 96000 cents in 11 installments are about 10250 each: above the
	// company's 5000 when the offer was made, below the 20000 it asks now.
	if _, err := PlanCharge(chargeRequest(s.financed, MethodPix, 12, "203.0.113.7", "curl/8"), s.order, s.company, now, ""); err != nil {
		t.Fatal(err)
	}
	s.company.MinInstallmentCents = 20000
	_, err := PlanCharge(chargeRequest(s.financed, MethodPix, 12, "203.0.113.7", "curl/8"), s.order, s.company, now, "")
	if e, ok := err.(*Error); !ok || e.Fields[0].Field != "installments" || !strings.Contains(e.Message, "20000") {
		t.Errorf("err = %v, want one on installments naming the 20000 floor", err)
	}
	if _, err := PlanCharge(chargeRequest(s.financed, MethodPix, 4, "203.0.113.7", "curl/8"), s.order, s.company, now, ""); err != nil {
		t.Errorf("4 installments of about 33500: %v", err)
	}
}

func TestPlanChargeFirstPaymentExpiry(t *testing.T) {
	t.Parallel()
	s := setupCharge(t, "1990-05-17")
	// Charged Thursday 5 March 2026 at 10:00, 72 h to pay: due Sunday 8 March
	// at 10:00. A Pix expires then; a boleto is payable all of Monday and
	// waits for the bank's notice on Tuesday, expiring as Tuesday ends, or
	// without grace as Monday ends.
	now := calSP(2026, time.March, 5, 10, 0, 0, 0)
	for _, tt := range []struct {
		method string
		grace  int
		want   time.Time
	}{
		{MethodPix, 1, calSP(2026, time.March, 8, 10, 0, 0, 0)},
		{MethodBoleto, 1, calEndOfDay(2026, time.March, 10).Add(time.Millisecond)},
		{MethodBoleto, 0, calSP(2026, time.March, 10, 0, 0, 0, 0)},
	} {
		s.company.BoletoGraceBusinessDays = tt.grace
		p, err := PlanCharge(chargeRequest(s.financed, tt.method, 4, "203.0.113.7", "curl/8"), s.order, s.company, now, "")
		if err != nil {
			t.Fatal(err)
		}
		if !p.FirstPaymentExpiresAt.Equal(tt.want) || !p.Schedule.Bills[0].DueDate.Equal(calSP(2026, time.March, 8, 10, 0, 0, 0)) {
			t.Errorf("%s, grace %d: expires %v (bill due %v), want %v", tt.method, tt.grace, p.FirstPaymentExpiresAt, p.Schedule.Bills[0].DueDate, tt.want)
		}
	}
}

// A page's consent record from any browser passes the charge's check,
// where an empty, overlong or non-UTF-8 User-Agent, or a link-local
// address with its zone, was refused and the payer told only to try again.
func TestBrowserSignaturePassesTheCharge(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("Mozilla/5.0 ", 200)
	for _, tc := range []struct {
		name, addr, ua, wantUA string
	}{
		{"a browser", "203.0.113.9", "Mozilla/5.0 (X11; Linux x86_64)", "Mozilla/5.0 (X11; Linux x86_64)"},
		{"none sent", "203.0.113.9", "", "(nenhum User-Agent enviado)"},
		{"blank", "203.0.113.9", "   ", "(nenhum User-Agent enviado)"},
		{"overlong", "2001:db8::1", long, strings.TrimSpace(CutText(long, MaxUserAgentLength))},
		{"not UTF-8, a tab", "203.0.113.9", "Navegador\xff\tà", "Navegador\uFFFD à"},
		{"a direction override", "203.0.113.9", "Navegador\u202e1.0", "Navegador 1.0"},
		// Single-line text refuses them since it was made to (ValidText):
		// a browser sending one could not buy.
		{"a line separator", "203.0.113.9", "Navegador\u20281.0", "Navegador 1.0"},
		{"a paragraph separator", "203.0.113.9", "Navegador\u20291.0", "Navegador 1.0"},
		{"a zone", "fe80::1%eth0", "Mozilla/5.0", "Mozilla/5.0"},
	} {
		ip, ua := BrowserSignature(netip.MustParseAddr(tc.addr), tc.ua)
		var v Validation
		gotIP, gotUA := checkSignature(&v, &ip, &ua)
		if err := v.Err(); err != nil {
			t.Errorf("%s: refused: %v", tc.name, err)
		}
		if gotUA != tc.wantUA || gotIP != netip.MustParseAddr(tc.addr).WithZone("").String() {
			t.Errorf("%s: recorded %q from %q", tc.name, gotUA, gotIP)
		}
	}
}
