package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"parcela"
	"parcela/bank"
)

// chunk is the rows of some billings, per table, as flat argument lists.
type chunk struct {
	rows   [5][]any
	counts [5]int
}

func (c *chunk) add(t int, args ...any) {
	c.rows[t] = append(c.rows[t], args...)
	c.counts[t]++
}

// generator makes realistic rows; it is deterministic apart from ids and
// the current time.
type generator struct {
	companies []*company
	cities    []string
	now       time.Time
	rng       *rand.Rand
	bank      *bank.Simulated
	nosso     int64
	sample    []string // reservoir of the benchmarked company's bill ids
	seen      int
	open      []openBill // reservoir of its pending and overdue bills
	seenOpen  int
}

const (
	sampleSize     = 100_000
	openSampleSize = 10_000
)

// openBill is a bill a payer would open the checkout of.
type openBill struct{ id, code string }

func newGenerator(cs []*company, cities []string, now time.Time) *generator {
	return &generator{companies: cs, cities: cities, now: now, rng: rand.New(rand.NewPCG(20261121, 1)), bank: bank.NewSimulated()}
}

var (
	firstNames = []string{"Maria", "José", "Ana", "João", "Francisca", "Antônio", "Adriana", "Carlos", "Juliana", "Paulo", "Márcia", "Lucas",
		"Fernanda", "Rafael", "Patrícia", "Bruno", "Aline", "Gabriel", "Camila", "Pedro"}
	lastNames = []string{"Silva", "Santos", "Oliveira", "Souza", "Rodrigues", "Ferreira", "Alves", "Pereira", "Lima", "Gomes", "Costa",
		"Ribeiro", "Martins", "Carvalho", "Almeida", "Lopes", "Soares", "Fernandes", "Vieira", "Barbosa"}
	streets = []string{"Rua das Flores", "Avenida Paulista", "Rua XV de Novembro", "Avenida Brasil", "Rua São João", "Rua Sete de Setembro",
		"Avenida Getúlio Vargas", "Rua Tiradentes"}
	neighborhoods = []string{"Centro", "Bela Vista", "Jardim América", "Vila Mariana", "Boa Viagem", "Savassi", "Moinhos de Vento", "Batel"}
	userAgents    = []string{"Mozilla/5.0 (X11; Linux x86_64)", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X)",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64)", "Mozilla/5.0 (Linux; Android 14; SM-S918B)"}
	dueDays  = []int{5, 10, 15, 20, 25}
	unaccent = strings.NewReplacer("á", "a", "ã", "a", "â", "a", "é", "e", "ê", "e", "í", "i", "ó", "o", "ô", "o", "ú", "u", "ç", "c")
)

func cpf(r *rand.Rand) string {
	var d [11]byte
	for i := range 9 {
		d[i] = byte(r.IntN(10))
	}
	for k := 9; k <= 10; k++ {
		s := 0
		for i := range k {
			s += int(d[i]) * (k + 1 - i)
		}
		v := s * 10 % 11
		if v == 10 {
			v = 0
		}
		d[k] = byte(v)
	}
	for i := range d {
		d[i] += '0'
	}
	return string(d[:])
}

func newID() string { return uuid.Must(uuid.NewV7()).String() }

func ms(t time.Time) int64 { return t.UnixMilli() }

const day = 24 * time.Hour

// chunk generates n billings with their orders, addresses, bills and payments.
func (g *generator) chunk(ctx context.Context, n int) (*chunk, error) {
	c := &chunk{}
	for range n {
		co := g.companies[0]
		if len(g.companies) > 1 && g.rng.Float64() >= 0.8 {
			co = g.companies[1+g.rng.IntN(len(g.companies)-1)]
		}
		if err := g.billing(ctx, c, co); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (g *generator) billing(ctx context.Context, c *chunk, co *company) error {
	r := g.rng
	now := g.now
	// Charged between 14 months and 1 month ago, at a random time of day.
	charged := now.Add(-30*day - time.Duration(r.Int64N(int64(13*30*day))))
	dueDay := dueDays[r.IntN(len(dueDays))]
	sched, err := parcela.BuildSchedule(parcela.ScheduleInput{
		AmountCents: 120000, DownPaymentType: parcela.DownPaymentPercentage, DownPaymentValue: parcela.MustRate("0.2"),
		RegistrationFee: parcela.MustRate("0.05"), InterestRate: parcela.MustRate("0.0299"), Installments: installments,
		DueDay: dueDay, ChargedAt: charged, ExpiresIn: 72 * time.Hour,
	})
	if err != nil {
		return err
	}
	orderCreated := charged.Add(-time.Duration(r.Int64N(int64(2 * day))))

	// Canceled billings stop at some point after the down payment.
	canceled := r.Float64() < 0.07
	var cancelAt time.Time
	if canceled {
		end := charged.Add(11 * 30 * day)
		if end.After(now) {
			end = now
		}
		cancelAt = charged.Add(5*day + time.Duration(r.Int64N(int64(end.Sub(charged)-5*day))))
	}

	addressID := newID()
	c.add(tAddresses, addressID, fmt.Sprintf("%08d", 1000000+r.IntN(98999999)), streets[r.IntN(len(streets))], strconv.Itoa(1+r.IntN(3000)),
		nil, neighborhoods[r.IntN(len(neighborhoods))], g.cities[r.IntN(len(g.cities))], ms(orderCreated), ms(orderCreated))

	orderID, billingID := newID(), newID()
	first, last := firstNames[r.IntN(len(firstNames))], lastNames[r.IntN(len(lastNames))]
	birth := time.Date(1960+r.IntN(45), time.Month(1+r.IntN(12)), 1+r.IntN(28), 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
	email := strings.ToLower(fmt.Sprintf("%s.%s%d@example.com", first, last, r.IntN(10000)))
	email = unaccent.Replace(email)

	open, lastPaid := 0, time.Time{}
	for _, s := range sched.Bills {
		id := newID()
		due := s.DueDate
		eff := parcela.EffectiveDueDate(due)
		if s.Number == 0 {
			eff = due
		}
		issued := due.Add(-10 * day) // installments are issued inside the company's 10-day window
		if s.Number == 0 {
			issued = charged
		}
		status := parcela.BillPending
		var paidAt *time.Time
		updated := charged
		switch {
		case canceled && !eff.Before(cancelAt):
			status, updated = parcela.BillCanceled, cancelAt
		case s.Number == 0 || (eff.Before(now) && (canceled || r.Float64() < 0.93)):
			// Paid up to a week early, never before it was issued nor in the future.
			p := eff.Add(-time.Duration(r.Int64N(int64(7 * day))))
			if p.Before(issued) {
				p = issued.Add(time.Duration(r.Int64N(int64(eff.Sub(issued)))))
			}
			if p.After(now) {
				p = now.Add(-time.Minute)
			}
			status, paidAt, updated = parcela.BillPaid, &p, p
			if p.After(lastPaid) {
				lastPaid = p
			}
		case eff.Before(now):
			status, updated = parcela.BillOverdue, eff.Add(time.Hour)
		}
		if status == parcela.BillPending || status == parcela.BillOverdue {
			open++
		}
		code := authCode(r)
		c.add(tBills, id, co.id, co.env, billingID, orderID, s.Number, string(s.Type), status, s.AmountCents, ms(due), ms(eff), msOrNil(paidAt),
			code, s.Details.DownPaymentCents, s.Details.RegistrationFeeCents, s.Details.AmortizationCents, s.Details.InterestCents,
			ms(charged), ms(updated))
		if co.bench {
			g.seen++
			if len(g.sample) < sampleSize {
				g.sample = append(g.sample, id)
			} else if j := r.IntN(g.seen); j < sampleSize {
				g.sample[j] = id
			}
			if status == parcela.BillPending || status == parcela.BillOverdue {
				g.seenOpen++
				if len(g.open) < openSampleSize {
					g.open = append(g.open, openBill{id, code})
				} else if j := r.IntN(g.seenOpen); j < openSampleSize {
					g.open[j] = openBill{id, code}
				}
			}
		}

		// Payments: the paid one; for an overdue bill the expired boleto and
		// its re-issue; for a pending bill inside the issue window its boleto.
		method := parcela.MethodBoleto
		if s.Number == 0 && r.IntN(5) < 3 {
			method = parcela.MethodPix
		}
		switch status {
		case parcela.BillPaid:
			if err := g.payment(ctx, c, co, id, s.Number > 0, method, parcela.PaymentPaid, s.AmountCents, eff, issued, paidAt); err != nil {
				return err
			}
		case parcela.BillOverdue:
			if err := g.payment(ctx, c, co, id, s.Number > 0, method, parcela.PaymentExpired, s.AmountCents, eff, issued, nil); err != nil {
				return err
			}
			reissued := now.Add(-time.Duration(r.Int64N(int64(2 * day))))
			if reissued.Before(eff) {
				reissued = eff.Add(time.Hour)
			}
			if err := g.payment(ctx, c, co, id, s.Number > 0, method, parcela.PaymentUnpaid, s.AmountCents, reissued.Add(72*time.Hour), reissued, nil); err != nil {
				return err
			}
		case parcela.BillPending:
			if !issued.After(now) {
				if err := g.payment(ctx, c, co, id, s.Number > 0, method, parcela.PaymentUnpaid, s.AmountCents, eff, issued, nil); err != nil {
					return err
				}
			}
		}
	}

	billingStatus, orderStatus := parcela.BillingActive, parcela.OrderInProgress
	var reason any
	var finishedAt any
	updated := charged
	switch {
	case canceled:
		billingStatus, orderStatus, reason, updated = parcela.BillingCanceled, parcela.OrderCanceled, "customer_dropout", cancelAt
	case open == 0:
		billingStatus, orderStatus, finishedAt, updated = parcela.BillingFinished, parcela.OrderFinished, ms(lastPaid), lastPaid
	}
	c.add(tOrders, orderID, co.id, co.env, co.offerID, orderStatus, first+" "+last, birth, cpf(r), email,
		fmt.Sprintf("119%08d", r.IntN(100000000)), addressID, reason, ms(orderCreated), ms(updated))
	c.add(tBillings, billingID, co.id, co.env, orderID, co.financedID, sched.TotalCents, dueDay, installments, billingStatus, reason,
		finishedAt, fmt.Sprintf("203.0.113.%d", 1+r.IntN(254)), userAgents[r.IntN(len(userAgents))], ms(charged), ms(updated))
	co.billings++
	// The rows were added children first; the writer flushes every table in
	// foreign-key order.
	return nil
}

func (g *generator) payment(ctx context.Context, c *chunk, co *company, billID string, installment bool, method, status string, amount int64,
	expires, created time.Time, paidAt *time.Time) error {
	id := newID()
	// Installments of a bolepix configuration carry a Pix code too.
	req := parcela.IssueRequest{PaymentID: id, Method: method, AmountCents: amount, DueDate: expires, WithPix: installment,
		MerchantName: co.name, MerchantCity: "SAO PAULO", MerchantKey: co.pixKey}
	if method == parcela.MethodBoleto {
		g.nosso++
		req.NossoNumero = g.nosso
	}
	issued, err := g.bank.Issue(ctx, req)
	if err != nil {
		return err
	}
	pix := issued.PixCode
	if method == parcela.MethodPix {
		pix = nil // the code is the payment's barcode itself
	}
	var paidAmount int64
	updated := created
	if paidAt != nil {
		paidAmount, updated = amount, *paidAt
	} else if status == parcela.PaymentExpired {
		updated = expires
	}
	c.add(tPayments, id, co.id, co.env, billID, method, status, amount, paidAmount, msOrNil(paidAt), ms(expires), 1,
		strOrNil(issued.NossoNumero), strOrNil(issued.Barcode), strOrNil(issued.BarcodeDigits), strOrNil(pix), ms(created), ms(updated))
	return nil
}

func msOrNil(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMilli()
}

func strOrNil(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

const codeAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

func authCode(r *rand.Rand) string {
	var b [12]byte
	for i := range b {
		b[i] = codeAlphabet[r.IntN(len(codeAlphabet))]
	}
	return string(b[:])
}
