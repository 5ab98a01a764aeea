package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"parcela"
	"parcela/bank"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// TestConcurrentModel: several actors fire random operations at the same
// few orders, bills, offers at once (two instances on one database), then
// the round quiesces and the sequential model's checker (mdl.check) runs,
// plus checks of seats, 5xx, and idempotent replays.
//
// PARCELA_CONC_SEEDS, PARCELA_CONC_SEED0, PARCELA_CONC_ROUNDS,
// PARCELA_CONC_WORKERS, PARCELA_CONC_OPS, PARCELA_CONC_ENGINE (sqlite|postgres).

// eachConcEngine runs fn on every engine the suite runs on (PostgreSQL too
// when PARCELA_TEST_POSTGRES_URL is set), or on PARCELA_CONC_ENGINE alone.
func eachConcEngine(t *testing.T, fn func(*testing.T, sqldb.Dialect)) {
	for _, e := range sqldbtest.Engines() {
		if only := os.Getenv("PARCELA_CONC_ENGINE"); only != "" && only != string(e) {
			continue
		}
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			fn(t, e)
		})
	}
}

type idemCall struct {
	desc   string
	method string
	path   string
	body   any
	key    string
	base   string
	ans    []resp
	at     time.Time
}

// recAcq records what the simulated acquirer approved and voided.
type recAcq struct {
	mu       sync.Mutex
	approved map[string]int64
	voided   map[string]bool
}

func (a *recAcq) Authorize(ctx context.Context, req parcela.CardAuthorization) (parcela.CardDecision, error) {
	d, err := bank.SimulatedAcquirer{}.Authorize(ctx, req)
	if err == nil && d.Approved {
		a.mu.Lock()
		a.approved[req.PaymentID] = req.AmountCents
		a.mu.Unlock()
	}
	return d, err
}

func (a *recAcq) Void(ctx context.Context, v parcela.CardVoid) error {
	a.mu.Lock()
	a.voided[v.PaymentID] = true
	a.mu.Unlock()
	return nil
}

type conc struct {
	*mdl
	acq      *recAcq
	app      *parcela.Services
	other    string
	mu       sync.Mutex
	offers   []string // ids
	limited  map[string]bool
	fins     map[string][2]string // offer → upfront, financed config
	orderOf  map[string]string    // order → offer
	idem     []*idemCall
	fivexx   []string
	oplog    []string
	webhooks []string
	product  string
	engine   sqldb.Dialect
	stable   [][2]string // webhook id, entity: never changed
}

func (c *conc) logf(format string, a ...any) {
	c.mu.Lock()
	c.oplog = append(c.oplog, fmt.Sprintf(format, a...))
	c.mu.Unlock()
}

func (c *conc) send(base, method, path string, body any, key string) resp {
	var h map[string]string
	if key != "" {
		h = map[string]string{"Idempotency-Key": key}
	}
	r := c.b.send(base, c.b.token, method, path, body, h)
	if r.Status >= 500 && !(r.Status == 503 && r.Header.Get("Retry-After") != "") {
		c.mu.Lock()
		c.fivexx = append(c.fivexx, fmt.Sprintf("%s %s → %d %s", method, path, r.Status, r.Body))
		c.mu.Unlock()
	}
	return r
}

// call sends once, or (dup) the same request with one key twice at once, to both instances.
func (c *conc) call(r *rand.Rand, desc, method, path string, body any) resp {
	base := c.b.sandbox.URL
	if r.Intn(2) == 0 {
		base = c.other
	}
	if r.Intn(3) != 0 {
		return c.send(base, method, path, body, "")
	}
	key := fmt.Sprintf("k-%d-%s", r.Int63(), sqldbtest.Suffix())
	ic := &idemCall{desc: desc, method: method, path: path, body: body, key: key, base: base, ans: make([]resp, 2), at: c.now()}
	var wg sync.WaitGroup
	for i := range 2 {
		b := base
		if i == 1 {
			if base == c.other {
				b = c.b.sandbox.URL
			} else {
				b = c.other
			}
		}
		wg.Go(func() { ic.ans[i] = c.send(b, method, path, body, key) })
	}
	wg.Wait()
	c.mu.Lock()
	c.idem = append(c.idem, ic)
	c.mu.Unlock()
	if ic.ans[0].Status == 409 {
		return ic.ans[1]
	}
	return ic.ans[0]
}

func TestConcurrentModel(t *testing.T) {
	t.Parallel()
	eachConcEngine(t, concurrentModel)
}

func concurrentModel(t *testing.T, engine sqldb.Dialect) {
	seeds := envInt("PARCELA_CONC_SEEDS", 2)
	first := envInt("PARCELA_CONC_SEED0", 1)
	rounds := envInt("PARCELA_CONC_ROUNDS", 10)
	workers := envInt("PARCELA_CONC_WORKERS", 5)
	ops := envInt("PARCELA_CONC_OPS", 4)
	for s := first; s < first+seeds; s++ {
		t.Run(fmt.Sprint("seed", s), func(t *testing.T) {
			b := setup(t, engine)
			m := &mdl{t: t, b: b, r: rand.New(rand.NewSource(int64(s))), status: map[string]string{}, conc: true}
			c := &conc{mdl: m, other: b.otherInstance(t).URL, limited: map[string]bool{}, fins: map[string][2]string{}, orderOf: map[string]string{}}
			c.acq = &recAcq{approved: map[string]int64{}, voided: map[string]bool{}}
			c.app = parcela.NewServices(b.db, bank.NewSimulated(), parcela.AcquirersByEnvironment{parcela.Sandbox: c.acq, parcela.Production: c.acq}, b.clock, sqldbtest.Links)
			b.sweeps = c.app.Sweeps.Only(b.company.ID)
			prod := b.product()["id"].(string)
			c.product = prod
			c.engine = engine
			for i := 0; i < 2; i++ {
				ob := offerBody(prod)
				pcs := ob["payment_configurations"].([]any)
				pcs[0].(map[string]any)["payment_methods"] = []string{"pix", "boleto", "credit_card"}
				pcs[1].(map[string]any)["payment_methods"] = []string{"boleto", "credit_card"}
				pcs[1].(map[string]any)["allowed_down_payment_methods"] = []string{"pix", "boleto", "credit_card"}
				if i == 0 {
					ob["offer"].(map[string]any)["seats"] = 3
				} else {
					delete(ob["offer"].(map[string]any), "seats")
				}
				offer := b.call("POST", "/external_api/v1/offers", ob).want(t, 201).JSON(t)
				id := offer["id"].(string)
				up, fin := configs(offer)
				c.offers = append(c.offers, id)
				c.fins[id] = [2]string{up, fin}
				c.limited[id] = i == 0
				if i == 1 {
					m.up, m.fin, m.offerID = up, fin, id
				}
				for j := 0; j < 3; j++ {
					o := b.call("POST", "/external_api/v1/orders", orderBody(id)).want(t, 201).JSON(t)
					m.orders = append(m.orders, o["id"].(string))
					c.orderOf[o["id"].(string)] = id
				}
			}
			for _, h := range []map[string]any{
				{"name": "bills", "url": "https://hooks.example.com/bills", "entity": "bill", "events": []string{"pending", "paid", "overdue", "canceled"}, "verb": "post"},
				{"name": "orders", "url": "https://hooks.example.com/orders", "entity": "order", "events": []string{"in_progress", "finished", "canceled"}, "verb": "post"},
				{"name": "billings", "url": "https://hooks.example.com/billings", "entity": "billing", "events": []string{"waiting_payment", "active", "finished", "canceled"}, "verb": "post"},
			} {
				w := b.call("POST", "/external_api/v1/webhooks", h).want(t, 201).JSON(t)
				c.stable = append(c.stable, [2]string{w["id"].(string), h["entity"].(string)})
			}
			m.check("setup")
			for round := 0; round < rounds; round++ {
				orders, bills := m.state()
				live := 0
				for _, o := range orders {
					if o["status"] == "pending" || o["status"] == "in_progress" {
						live++
					}
				}
				topped := live < 5
				for ; live < 5; live++ {
					id := c.offers[1] // the offer without a seat limit
					b.call("PATCH", "/external_api/v1/offers/"+id, map[string]any{"offer": map[string]any{"availability": "enabled", "seats": nil, "expires_at": nil}}).want(t, 200)
					b.call("PATCH", "/external_api/v1/products/"+c.product, map[string]any{"product": map[string]any{"availability": "enabled"}}).want(t, 200)
					o := b.call("POST", "/external_api/v1/orders", orderBody(id)).want(t, 201).JSON(t)
					m.orders = append(m.orders, o["id"].(string))
					c.orderOf[o["id"].(string)] = id
				}
				if topped {
					orders, bills = m.state()
				}
				// a hot order: most operations of the round aim at it and its bills
				var hotO, hotB []map[string]any
				var cands []map[string]any
				for _, o := range orders {
					if o["status"] == "pending" || o["status"] == "in_progress" {
						cands = append(cands, o)
					}
				}
				if len(cands) > 0 {
					h := cands[m.r.Intn(len(cands))]
					hotO = []map[string]any{h}
					for _, bl := range bills {
						for _, x := range h["billings"].([]any) {
							if bl["billing"].(map[string]any)["id"] == x.(map[string]any)["id"] {
								hotB = append(hotB, bl)
							}
						}
					}
				}
				var wg sync.WaitGroup
				startC := make(chan struct{})
				for w := 0; w < workers; w++ {
					r := rand.New(rand.NewSource(int64(s)*1000003 + int64(round)*101 + int64(w)))
					wg.Go(func() {
						<-startC
						for k := 0; k < ops; k++ {
							if hotO != nil && r.Intn(10) < 7 {
								c.op(r, hotO, hotB)
							} else {
								c.op(r, orders, bills)
							}
						}
					})
				}
				close(startC)
				wg.Wait()
				desc := fmt.Sprintf("round %d", round)
				if m.r.Intn(2) == 0 {
					b.sweep(t)
					desc = "sweep"
				}
				m.log = append(m.log, c.oplog...)
				c.oplog = nil
				m.check(desc)
				c.checkExtra(desc)
				if t.Failed() {
					t.Logf("sequence:\n  %s", strings.Join(m.log, "\n  "))
					return
				}
				if round == rounds-1 {
					counts := map[string]int{}
					for _, l := range m.log {
						f := strings.Fields(l)
						if len(f) < 2 {
							continue
						}
						st := ""
						if i := strings.Index(l, "→ "); i >= 0 {
							ff := strings.Fields(l[i+4:])
							st = ff[0]
							if len(ff) > 1 {
								code, _, _ := strings.Cut(ff[1], ":")
								st += "/" + code
							}
						}
						counts[f[0]+" "+f[1]+" "+st]++
					}
					t.Logf("ops %v", counts)
				}
				if m.r.Intn(2) == 0 {
					b.clock.Set(b.clock.Now().Add(time.Duration(1+m.r.Intn(24*6)) * time.Hour))
					m.log = append(m.log, "jump to "+b.clock.Now().In(parcela.SaoPaulo).Format(time.DateTime))
				}
			}
		})
	}
}

func (c *conc) op(r *rand.Rand, orders, bills []map[string]any) {
	var unpaid, closed []map[string]any
	var open []map[string]any
	for _, bl := range bills {
		if bl["status"] == "pending" || bl["status"] == "overdue" {
			open = append(open, bl)
		}
		for _, x := range bl["payments"].([]any) {
			p := x.(map[string]any)
			if p["status"] == "unpaid" {
				unpaid = append(unpaid, p)
			} else if p["status"] != "paid" {
				closed = append(closed, p)
			}
		}
	}
	var pending []map[string]any
	for _, o := range orders {
		if o["status"] == "pending" {
			pending = append(pending, o)
		}
	}
	const api = "/external_api/v1"
	switch k := r.Intn(100); {
	case k >= 0 && k < 18 && len(orders) > 0: // charge
		o := orders[r.Intn(len(orders))]
		if len(pending) > 0 && r.Intn(4) > 0 {
			o = pending[r.Intn(len(pending))]
		}
		c.mu.Lock()
		cfg := c.fins[c.orderOf[o["id"].(string)]]
		c.mu.Unlock()
		method := []string{"boleto", "pix"}[r.Intn(2)]
		body := chargeBody(cfg[0], method, 1)
		if r.Intn(2) == 0 {
			body = chargeBody(cfg[1], method, 2+r.Intn(11))
		}
		body["due_day"] = 1 + r.Intn(28)
		res := c.call(r, "charge", "POST", api+"/orders/"+o["id"].(string)+"/charge", body)
		c.logf("charge %s %s → %d %s", short(o["id"]), method, res.Status, errCode(res))
	case k >= 18 && k < 40 && len(unpaid) > 0: // pay
		p := unpaid[r.Intn(len(unpaid))]
		body := map[string]any{}
		amt := mcents(p["amount_cents"]) - mcents(p["paid_amount_cents"])
		switch r.Intn(4) {
		case 0:
			if amt > 1 {
				body["paid_amount_cents"] = 1 + r.Int63n(amt-1)
			}
		case 1:
			body["paid_amount_cents"] = amt + 1 + r.Int63n(500)
		case 2:
			created := parseTS(c.t, p["created_at"])
			if span := c.now().Sub(created); span > 0 {
				body["paid_at"] = created.Add(time.Duration(r.Int63n(int64(span)))).Truncate(time.Millisecond).Format(time.RFC3339Nano)
			}
		}
		if r.Intn(3) == 0 {
			// a bank's notice with its identity; the same identity names the same settlement
			n := r.Intn(3)
			body = map[string]any{"notice_id": fmt.Sprintf("N-%s-%d", p["id"], n)}
			if n > 0 {
				body["paid_amount_cents"] = int64(n) * 1000
			}
		}
		res := c.call(r, "pay", "POST", api+"/sandbox/payments/"+p["id"].(string)+"/pay", body)
		c.logf("pay %s(%s bill %s) %v → %d %s", short(p["id"]), p["payment_method"], short(p["bill_id"]), body, res.Status, errCode(res))
	case k >= 40 && k < 46 && len(closed) > 0: // late notice of a closed payment
		p := closed[r.Intn(len(closed))]
		at := parseTS(c.t, p["expires_at"]).Add(-time.Millisecond)
		if created := parseTS(c.t, p["created_at"]); r.Intn(2) == 0 && at.After(created) {
			at = created.Add(time.Duration(r.Int63n(int64(at.Sub(created)))))
		}
		if now := c.now(); at.After(now) {
			at = now
		}
		body := map[string]any{"paid_at": at.Truncate(time.Millisecond).Format(time.RFC3339Nano)}
		if r.Intn(3) == 0 {
			body["paid_amount_cents"] = 1 + r.Int63n(mcents(p["amount_cents"]))
		}
		if r.Intn(2) == 0 {
			body["notice_id"] = fmt.Sprintf("L-%s-%d", p["id"], r.Intn(2))
			delete(body, "paid_amount_cents")
		}
		res := c.call(r, "late pay", "POST", api+"/sandbox/payments/"+p["id"].(string)+"/pay", body)
		c.logf("late pay %s(%s) → %d %s", short(p["id"]), p["status"], res.Status, errCode(res))
	case k >= 46 && k < 49 && len(unpaid) > 0: // expire
		p := unpaid[r.Intn(len(unpaid))]
		res := c.call(r, "expire", "POST", api+"/sandbox/payments/"+p["id"].(string)+"/expire", nil)
		c.logf("expire %s → %d %s", short(p["id"]), res.Status, errCode(res))
	case k >= 49 && k < 56 && len(bills) > 0: // waive
		bl := bills[r.Intn(len(bills))]
		if len(open) > 0 && r.Intn(5) > 0 {
			bl = open[r.Intn(len(open))]
		}
		var until any
		switch r.Intn(3) {
		case 0:
			until = nil
		case 1:
			until = c.now().Add(time.Duration(r.Intn(40*24)) * time.Hour).Truncate(time.Millisecond).Format(time.RFC3339Nano)
		case 2:
			until = c.now().Add(-time.Duration(r.Intn(10*24)) * time.Hour).Truncate(time.Millisecond).Format(time.RFC3339Nano)
		}
		res := c.call(r, "waive", "PATCH", api+"/bills/"+bl["id"].(string), map[string]any{"bill": map[string]any{"disable_penalties_until": until}})
		c.logf("waive %s until %v → %d %s", short(bl["id"]), until, res.Status, errCode(res))
	case k >= 56 && k < 57 && len(orders) > 0: // cancel order
		o := orders[r.Intn(len(orders))]
		res := c.call(r, "cancel order", "POST", api+"/orders/"+o["id"].(string)+"/cancel", map[string]any{"reason": "customer_dropout"})
		c.logf("cancel order %s → %d %s", short(o["id"]), res.Status, errCode(res))
	case k >= 57 && k < 60 && len(orders) > 0: // cancel billing
		o := orders[r.Intn(len(orders))]
		bls := o["billings"].([]any)
		if len(bls) == 0 {
			return
		}
		bl := bls[len(bls)-1].(map[string]any)
		res := c.call(r, "cancel billing", "POST", api+"/billings/"+bl["id"].(string)+"/cancel", map[string]any{"cancelation_reason": "refunded_by_company"})
		c.logf("cancel billing %s → %d %s", short(bl["id"]), res.Status, errCode(res))
	case k >= 60 && k < 72 && len(open) > 0 && r.Intn(3) == 0: // card
		bl := open[r.Intn(len(open))]
		ctx := context.Background()
		card := parcela.CardPayment{Number: "4111 1111 1111 1111", HolderName: "MARIA DA SILVA", ExpiryMonth: 12, ExpiryYear: 2030, CVV: "123", Installments: 1}
		if r.Intn(4) == 0 {
			card.Number = "4000 0000 0000 0002"
		}
		if shown, _, err := c.app.Checkout.BillForPayer(ctx, parcela.Sandbox, bl["id"].(string), bl["authentication_code"].(string)); err == nil && r.Intn(3) > 0 {
			card.ShownCents = shown.Outstanding(c.now(), c.b.company)
		}
		p, err := c.app.Checkout.PayByCard(ctx, parcela.Sandbox, bl["id"].(string), bl["authentication_code"].(string), card)
		res := "ok"
		if err != nil {
			res = "err " + parcela.ErrorCode(err) + ": " + err.Error()
			if parcela.ErrorCode(err) == "" || parcela.ErrorCode(err) == "internal" {
				c.mu.Lock()
				c.fivexx = append(c.fivexx, "card "+res)
				c.mu.Unlock()
			}
		} else {
			res = fmt.Sprintf("ok %s %s %d", short(p.ID), p.Status, p.AmountCents)
		}
		c.logf("card bill %s shown %d → %s", short(bl["id"]), card.ShownCents, res)
	case k >= 60 && k < 72 && len(open) > 0: // checkout
		bl := open[r.Intn(len(open))]
		meth := []string{"pix", "boleto"}[r.Intn(2)]
		p, err := c.app.Checkout.IssuePayment(context.Background(), parcela.Sandbox, bl["id"].(string), bl["authentication_code"].(string), meth)
		res := "ok"
		if err != nil {
			res = "err " + parcela.ErrorCode(err) + ": " + err.Error()
			if parcela.ErrorCode(err) == "" || parcela.ErrorCode(err) == "internal" {
				c.mu.Lock()
				c.fivexx = append(c.fivexx, "checkout "+res)
				c.mu.Unlock()
			}
		} else {
			res = "ok " + short(p.ID)
		}
		c.logf("checkout %s bill %s → %s", meth, short(bl["id"]), res)
	case k >= 72 && k < 80: // PATCH offer
		c.mu.Lock()
		id := c.offers[r.Intn(len(c.offers))]
		c.mu.Unlock()
		var body map[string]any
		switch r.Intn(8) {
		case 0:
			body = map[string]any{"offer": map[string]any{"seats": nil}}
		case 1, 2:
			body = map[string]any{"offer": map[string]any{"seats": 1 + r.Intn(5)}}
		case 3:
			body = map[string]any{"offer": map[string]any{"name": "Turma " + sqldbtest.Suffix()}}
		case 4:
			body = map[string]any{"offer": map[string]any{"availability": []string{"enabled", "enabled", "enabled", "disabled"}[r.Intn(4)]}}
		case 5:
			body = map[string]any{"offer": map[string]any{"expires_at": c.now().Add(time.Duration(1+r.Intn(600)) * time.Minute).Truncate(time.Millisecond).Format(time.RFC3339Nano)}}
		case 6:
			body = map[string]any{"offer": map[string]any{"expires_at": nil}}
		case 7:
			av := []string{"enabled", "enabled", "disabled"}[r.Intn(3)]
			res := c.call(r, "patch product", "PATCH", api+"/products/"+c.product, map[string]any{"product": map[string]any{"availability": av}})
			c.logf("patch product %s → %d %s", av, res.Status, errCode(res))
			return
		}
		res := c.call(r, "patch offer", "PATCH", api+"/offers/"+id, body)
		if res.Status == 200 {
			c.mu.Lock()
			c.limited[id] = res.JSON(c.t)["seats"] != nil
			c.mu.Unlock()
		}
		c.logf("patch offer %s %v → %d %s", short(id), body, res.Status, errCode(res))
	case k >= 80 && k < 88: // new order
		c.mu.Lock()
		id := c.offers[r.Intn(len(c.offers))]
		c.mu.Unlock()
		res := c.call(r, "order", "POST", api+"/orders", orderBody(id))
		if res.Status == 201 {
			oid := res.JSON(c.t)["id"].(string)
			c.mu.Lock()
			if _, ok := c.orderOf[oid]; !ok {
				c.orders = append(c.orders, oid)
				c.orderOf[oid] = id
			}
			c.mu.Unlock()
		}
		c.logf("new order of %s → %d %s", short(id), res.Status, errCode(res))
	case k >= 88 && k < 94: // sweep, concurrently
		ctx := context.Background()
		for _, f := range []func(context.Context) (parcela.SweepReport, error){c.b.sweeps.ExpireDuePayments, c.b.sweeps.MarkOverdue,
			c.b.sweeps.IssueDueInstallments, c.b.sweeps.RecoverIntents, c.b.sweeps.LapseFirstBills} {
			rep, err := f(ctx)
			if err != nil {
				c.mu.Lock()
				c.fivexx = append(c.fivexx, "sweep: "+err.Error())
				c.mu.Unlock()
			}
			for _, fl := range rep.Failed {
				c.mu.Lock()
				c.fivexx = append(c.fivexx, fmt.Sprintf("sweep %s failed on %s: %v", fl.Sweep, fl.Row.ID, fl.Err))
				c.mu.Unlock()
			}
		}
		c.logf("sweep")
	case k >= 94 && k < 97 && os.Getenv("PARCELA_CONC_TICK") != "": // time passes while requests run
		d := time.Duration(1+r.Intn(8*60)) * time.Minute
		c.b.clock.Advance(d)
		c.logf("tick %v → %s", d, c.now().In(parcela.SaoPaulo).Format(time.DateTime))
	case k >= 94: // webhooks
		switch {
		case r.Intn(2) == 0 || len(c.webhooks) == 0:
			res := c.call(r, "webhook", "POST", api+"/webhooks", map[string]any{"name": "ERP", "url": "https://hooks.example.com/" + sqldbtest.Suffix(), "entity": "bill", "events": []string{"paid"}, "verb": "post"})
			if res.Status == 201 {
				c.mu.Lock()
				c.webhooks = append(c.webhooks, res.JSON(c.t)["id"].(string))
				c.mu.Unlock()
			}
			c.logf("webhook create → %d %s", res.Status, errCode(res))
		default:
			c.mu.Lock()
			id := c.webhooks[r.Intn(len(c.webhooks))]
			c.mu.Unlock()
			if r.Intn(2) == 0 {
				res := c.call(r, "webhook del", "DELETE", api+"/webhooks/"+id, nil)
				c.logf("webhook delete %s → %d %s", short(id), res.Status, errCode(res))
			} else {
				res := c.call(r, "webhook patch", "PATCH", api+"/webhooks/"+id, map[string]any{"url": "https://hooks.example.com/" + sqldbtest.Suffix()})
				c.logf("webhook patch %s → %d %s", short(id), res.Status, errCode(res))
			}
		}
	}
}

func (c *conc) checkExtra(desc string) {
	t := c.t
	for _, s := range c.fivexx {
		t.Errorf("[%s] 5xx: %s", desc, s)
	}
	c.fivexx = nil
	// idempotent pairs answer alike, and a replay now answers the same
	for _, ic := range c.idem {
		var firstBody []byte
		firstStatus := 0
		for _, a := range ic.ans {
			if a.Status == 409 && strings.Contains(string(a.Body), "idempotency_in_flight") {
				continue
			}
			if a.Status >= 500 {
				continue
			}
			if firstStatus == 0 {
				firstStatus, firstBody = a.Status, a.Body
			} else if a.Status != firstStatus || string(a.Body) != string(firstBody) {
				t.Errorf("[%s] %s %s with one key answered %d %s and %d %s", desc, ic.desc, ic.path, firstStatus, firstBody, a.Status, a.Body)
			}
		}
		if firstStatus == 0 || firstStatus == 409 || c.now().Sub(ic.at) > 23*time.Hour { // keys are kept 24 h
			continue
		}
		again := c.send(ic.base, ic.method, ic.path, ic.body, ic.key)
		if again.Status != firstStatus || string(again.Body) != string(firstBody) {
			t.Errorf("[%s] %s %s replay answered %d %s, first %d %s", desc, ic.desc, ic.path, again.Status, again.Body, firstStatus, firstBody)
		}
	}
	c.idem = nil
	// seats
	for _, id := range c.offers {
		o := c.get("/offers/" + id)
		live := 0
		for oid, of := range c.orderOf {
			if of != id {
				continue
			}
			st := c.status[oid]
			if st == "in_progress" || st == "finished" {
				live++
			}
		}
		taken := int(mcents(o["seats_taken"]))
		if o["seats"] != nil {
			if taken != live {
				t.Errorf("[%s] offer %s seats_taken %d, orders charged and not canceled %d", desc, short(id), taken, live)
			}
			if seats := int(mcents(o["seats"])); taken > seats {
				t.Errorf("[%s] offer %s seats_taken %d above seats %d", desc, short(id), taken, seats)
			}
		} else if taken != 0 {
			t.Errorf("[%s] offer %s without limit seats_taken %d", desc, short(id), taken)
		}
	}
	// money: an open bill owes more than it received; billings add up
	_, bills := c.state()
	for _, bl := range bills {
		st := bl["status"]
		if (st == "pending" || st == "overdue") && bl["received_amount_cents"] != nil && mcents(bl["received_amount_cents"]) >= mcents(bl["current_amount_cents"]) {
			t.Errorf("[%s] open bill %s received %v, owes %v", desc, short(bl["id"]), bl["received_amount_cents"], bl["current_amount_cents"])
		}
		paid := 0
		for _, x := range bl["payments"].([]any) {
			if x.(map[string]any)["status"] == "paid" {
				paid++
			}
		}
		if paid > 0 && st != "paid" && st != "canceled" {
			t.Errorf("[%s] bill %s %v has %d paid payments", desc, short(bl["id"]), st, paid)
		}
	}
	// cards: what the acquirer keeps is what paid card payments received
	cards := map[string]map[string]any{}
	for _, bl := range bills {
		for _, x := range bl["payments"].([]any) {
			if p := x.(map[string]any); p["payment_method"] == "credit_card" {
				cards[p["id"].(string)] = p
			}
		}
	}
	c.acq.mu.Lock()
	for id, amt := range c.acq.approved {
		kept := !c.acq.voided[id]
		p := cards[id]
		switch {
		case kept && p == nil:
			t.Errorf("[%s] card approval %s of %d cents kept at the acquirer, no payment records it", desc, short(id), amt)
		case kept && (p["status"] != "paid" || mcents(p["paid_amount_cents"]) != amt):
			t.Errorf("[%s] card approval %s of %d cents kept, its payment %v received %v", desc, short(id), amt, p["status"], p["paid_amount_cents"])
		case !kept && p != nil && mcents(p["paid_amount_cents"]) > 0:
			t.Errorf("[%s] card approval %s voided, its payment %v received %v", desc, short(id), p["status"], p["paid_amount_cents"])
		}
	}
	for id, p := range cards {
		if _, ok := c.acq.approved[id]; !ok && mcents(p["paid_amount_cents"]) > 0 {
			t.Errorf("[%s] card payment %s received %v the acquirer never approved", desc, short(id), p["paid_amount_cents"])
		}
	}
	c.acq.mu.Unlock()
	// every event of a stable webhook's entity has exactly one delivery to it
	evs, err := c.b.db.CompanyEvents(context.Background(), parcela.Auth{CompanyID: c.b.company.ID, Environment: parcela.Sandbox})
	if err != nil {
		t.Fatal(err)
	}
	for _, sw := range c.stable {
		want := map[string]string{}
		for _, e := range evs {
			if e.Entity == sw[1] {
				want[e.ID] = e.Event
			}
		}
		got := map[string]int{}
		for page := 1; ; page++ {
			l := c.get(fmt.Sprintf("/webhook_deliveries?per_page=100&page=%d&webhook_id=%s", page, sw[0]))
			res := l["results"].([]any)
			for _, x := range res {
				d := x.(map[string]any)
				got[d["event_id"].(string)]++
				if want[d["event_id"].(string)] != d["event"] {
					t.Errorf("[%s] delivery of event %v (%v) to the %s webhook: the event is %q", desc, d["event_id"], d["event"], sw[1], want[d["event_id"].(string)])
				}
			}
			if len(res) < 100 {
				break
			}
		}
		for id, ev := range want {
			if got[id] != 1 {
				t.Errorf("[%s] %s event %s %s has %d deliveries to its webhook", desc, sw[1], short(id), ev, got[id])
			}
		}
	}
	// the bills' listing shows each bill as its GET does
	byID := map[string]map[string]any{}
	for _, bl := range bills {
		byID[bl["id"].(string)] = bl
	}
	for _, x := range c.get("/bills?per_page=1000")["results"].([]any) {
		l := x.(map[string]any)
		g := byID[l["id"].(string)]
		if g == nil {
			t.Errorf("[%s] listed bill %v is of no order", desc, l["id"])
			continue
		}
		if d := jsonDiff("", l, g); len(d) > 0 {
			t.Errorf("[%s] listed bill %s differs from its GET: %v", desc, short(l["id"]), d)
		}
	}
	// every delivery has exactly one job
	q := "SELECT CAST(args AS TEXT) FROM river_job WHERE queue = $1"
	if c.engine == sqldb.SQLite {
		q = "SELECT CAST(args AS TEXT) FROM river_job WHERE queue = ?"
	}
	rows, err := c.b.db.SQLDB().QueryContext(context.Background(), q, c.b.enq.SandboxDeliveryQueue())
	if err != nil {
		t.Fatal(err)
	}
	jobOf := map[string]int{}
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			t.Fatal(err)
		}
		for _, id := range uuidRE.FindAllString(a, -1) { // SQLite keeps args packed, the ids readable
			jobOf[id]++
		}
	}
	rows.Close()
	nd := 0
	for page := 1; ; page++ {
		res := c.get(fmt.Sprintf("/webhook_deliveries?per_page=100&page=%d", page))["results"].([]any)
		for _, x := range res {
			id := x.(map[string]any)["id"].(string)
			nd++
			if jobOf[id] != 1 {
				t.Errorf("[%s] delivery %s has %d jobs", desc, short(id), jobOf[id])
			}
		}
		if len(res) < 100 {
			break
		}
	}
	if len(jobOf) != nd {
		t.Errorf("[%s] %d deliveries, jobs for %d", desc, nd, len(jobOf))
	}
	// webhooks listing vs GET
	var l []any
	if err := json.Unmarshal(c.b.call("GET", "/external_api/v1/webhooks", nil).want(t, 200).Body, &l); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, x := range l {
		ids = append(ids, x.(map[string]any)["id"].(string))
		g := c.b.call("GET", "/external_api/v1/webhooks/"+x.(map[string]any)["id"].(string), nil)
		if g.Status != 200 {
			t.Errorf("[%s] listed webhook %v GET %d", desc, x.(map[string]any)["id"], g.Status)
		}
	}
	sort.Strings(ids)
}
