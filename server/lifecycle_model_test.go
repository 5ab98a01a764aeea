package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
)

// TestModelLifecycle drives orders through random sequences of what
// integrators, payers, banks and time do to them (charges of every kind,
// payments in full, in part, over, back-dated and late notices, expiries,
// waivers, cancelations, the checkout's Pix and boleto, jumps across due
// dates, month ends, 31 December and weekends, with the sweeps) and, after
// every step, checks the API's answers against a model of the contract:
// the statuses of orders, billings and bills agree; amounts add up and a
// penalty is owed only as the rules say, to the cent; a bill has at most
// one live payment of a method; every status change is one event, in
// order, carrying what a GET answers; the listing's filters agree with
// the bills. An outside audit wrote it (about 12,900 steps, no defect
// found); it runs a few seeds here, and more with
// PARCELA_MODEL_SEEDS, PARCELA_MODEL_SEED0 and PARCELA_MODEL_STEPS
// (PARCELA_MODEL_LOG prints each seed's sequence). A failure prints the
// sequence that led to it.

type mdl struct {
	t       *testing.T
	b       *bundle
	r       *rand.Rand
	up      string
	offerID string
	fin     string
	orders  []string
	// last snapshot: entity id → status
	status  map[string]string
	nEvents int
	log     []string
	steps   int
	conc    bool // the concurrent model: an order's embedded offer may change after its event
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func TestModelLifecycle(t *testing.T) {
	t.Parallel()
	seeds := envInt("PARCELA_MODEL_SEEDS", 4)
	first := envInt("PARCELA_MODEL_SEED0", 1)
	steps := envInt("PARCELA_MODEL_STEPS", 50)
	for s := first; s < first+seeds; s++ {
		t.Run(fmt.Sprint("seed", s), func(t *testing.T) {
			t.Parallel()
			b := setup(t, sqldb.SQLite)
			m := &mdl{t: t, b: b, r: rand.New(rand.NewSource(int64(s))), status: map[string]string{}}
			ob := offerBody(b.product()["id"].(string))
			delete(ob["offer"].(map[string]any), "seats")
			offer := b.call("POST", "/external_api/v1/offers", ob).want(t, 201).JSON(t)
			m.up, m.fin = configs(offer)
			m.offerID = offer["id"].(string)
			for i := 0; i < 3; i++ {
				o := b.call("POST", "/external_api/v1/orders", orderBody(offer["id"].(string))).want(t, 201).JSON(t)
				m.orders = append(m.orders, o["id"].(string))
			}
			m.check("setup")
			for i := 0; i < steps; i++ {
				desc := m.step()
				m.log = append(m.log, desc)
				m.steps++
				m.check(desc)
				if t.Failed() {
					t.Logf("sequence:\n  %s", strings.Join(m.log, "\n  "))
					return
				}
			}
			counts := map[string]int{}
			for _, e := range m.b.eventLog(t) {
				counts[e]++
			}
			resCounts := map[string]int{}
			for _, l := range m.log {
				f := strings.Fields(l)
				if len(f) > 0 {
					key := f[0]
					if i := strings.Index(l, "→ "); i >= 0 {
						key += " " + strings.Fields(l[i+4:])[0]
					}
					resCounts[key]++
				}
			}
			t.Logf("events %v\nops %v", counts, resCounts)
			if os.Getenv("PARCELA_MODEL_LOG") != "" {
				t.Logf("sequence:\n  %s", strings.Join(m.log, "\n  "))
				for id, st := range m.status {
					t.Logf("final %s %s", short(id), st)
				}
			}
		})
	}
}

func (m *mdl) now() time.Time { return m.b.clock.Now() }

func (m *mdl) get(path string) map[string]any {
	m.t.Helper()
	return m.b.call("GET", "/external_api/v1"+path, nil).want(m.t, 200).JSON(m.t)
}

func parseTS(t *testing.T, v any) time.Time {
	t.Helper()
	s, _ := v.(string)
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("timestamp %v: %v", v, err)
	}
	return ts
}

func mcents(v any) int64 { f, _ := v.(float64); return int64(f) }

// allBills returns every bill (bill-endpoint form) of every charged order.
func (m *mdl) state() (orders []map[string]any, bills []map[string]any) {
	for _, id := range m.orders {
		o := m.get("/orders/" + id)
		orders = append(orders, o)
		for _, bl := range o["billings"].([]any) {
			for _, x := range bl.(map[string]any)["bills"].([]any) {
				bills = append(bills, m.get("/bills/"+x.(map[string]any)["id"].(string)))
			}
		}
	}
	return
}

func (m *mdl) step() string {
	t, b, r := m.t, m.b, m.r
	orders, bills := m.state()
	var open []map[string]any
	var unpaid []map[string]any // payments
	for _, bl := range bills {
		if bl["status"] == "pending" || bl["status"] == "overdue" {
			open = append(open, bl)
		}
		for _, p := range bl["payments"].([]any) {
			if p.(map[string]any)["status"] == "unpaid" {
				unpaid = append(unpaid, p.(map[string]any))
			}
		}
	}
	var pending []map[string]any
	live := 0
	for _, o := range orders {
		if o["status"] == "pending" {
			pending = append(pending, o)
		}
		if o["status"] == "pending" || o["status"] == "in_progress" {
			live++
		}
	}
	if live < 2 && r.Intn(3) == 0 {
		o := b.call("POST", "/external_api/v1/orders", orderBody(m.offerID)).want(t, 201).JSON(t)
		m.orders = append(m.orders, o["id"].(string))
		return "new order " + short(o["id"])
	}
	if len(unpaid) > 0 && r.Intn(100) < 18 { // a diligent payer: the live payment closest to expiry, or an installment's
		var best map[string]any
		for _, q := range unpaid {
			if e := parseTS(t, q["expires_at"]); m.now().Before(e) && (best == nil || e.Before(parseTS(t, best["expires_at"]))) {
				best = q
			}
		}
		if best != nil {
			body := map[string]any{}
			if r.Intn(4) == 0 {
				body["paid_amount_cents"] = mcents(best["amount_cents"]) / 2
			}
			res := b.call("POST", "/external_api/v1/sandbox/payments/"+best["id"].(string)+"/pay", body)
			if res.Status != 200 {
				t.Errorf("diligent pay refused: %d %s", res.Status, res.Body)
			}
			return fmt.Sprintf("pay %s(%s of bill %s) diligent %v → %d %s", short(best["id"]), best["payment_method"], short(best["bill_id"]), body, res.Status, errCode(res))
		}
	}
	var closed []map[string]any
	for _, bl := range open {
		for _, x := range bl["payments"].([]any) {
			if p := x.(map[string]any); p["status"] == "expired" || p["status"] == "canceled" {
				closed = append(closed, p)
			}
		}
	}
	if len(closed) > 0 && r.Intn(100) < 8 { // a bank's late notice of a closed code, dated in its time
		p := closed[r.Intn(len(closed))]
		created, exp := parseTS(t, p["created_at"]), parseTS(t, p["expires_at"])
		at := exp.Add(-time.Millisecond)
		if r.Intn(2) == 0 && exp.Sub(created) > 0 {
			at = created.Add(time.Duration(r.Int63n(int64(exp.Sub(created)))))
		}
		if at.After(m.now()) {
			at = m.now()
		}
		body := map[string]any{"paid_at": at.Truncate(time.Millisecond).Format(time.RFC3339Nano)}
		if r.Intn(3) == 0 {
			body["paid_amount_cents"] = mcents(p["amount_cents"]) / 3
		}
		res := b.call("POST", "/external_api/v1/sandbox/payments/"+p["id"].(string)+"/pay", body)
		return fmt.Sprintf("late notice %s(%s %s of bill %s) %v → %d %s", short(p["id"]), p["status"], p["payment_method"], short(p["bill_id"]), body, res.Status, errCode(res))
	}
	if len(open) > 0 && r.Intn(100) < 8 { // the payer asks the checkout for a Pix or a boleto
		bl := open[r.Intn(len(open))]
		meth := []string{"pix", "boleto"}[r.Intn(2)]
		p, err := b.app.Checkout.IssuePayment(context.Background(), parcela.Sandbox, bl["id"].(string), bl["authentication_code"].(string), meth)
		res := "ok"
		if err != nil {
			res = "err " + parcela.ErrorCode(err) + ": " + err.Error()
		} else {
			res = "ok " + short(p.ID)
		}
		return fmt.Sprintf("checkout %s on bill %s(%s %s) → %s", meth, short(bl["id"]), bl["status"], bl["bill_type"], res)
	}
	switch k := r.Intn(100); {
	case k < 14: // charge
		o := orders[r.Intn(len(orders))]
		if len(pending) > 0 && r.Intn(5) > 0 {
			o = pending[r.Intn(len(pending))]
		}
		method := []string{"boleto", "pix"}[r.Intn(2)]
		dueDay := 1 + r.Intn(31)
		body := chargeBody(m.up, method, 1)
		kind := "upfront"
		if r.Intn(3) > 0 {
			kind = "financed"
			body = chargeBody(m.fin, method, 2+r.Intn(11))
		}
		body["due_day"] = dueDay
		res := b.call("POST", "/external_api/v1/orders/"+o["id"].(string)+"/charge", body)
		if o["status"] == "pending" && res.Status != 200 && res.Status != 422 {
			t.Errorf("charge of a pending order: %d %s", res.Status, res.Body)
		}
		if o["status"] != "pending" && res.Status == 200 {
			t.Errorf("charge of a %v order succeeded", o["status"])
		}
		return fmt.Sprintf("charge %s %s %s due_day=%d installments=%v → %d", short(o["id"]), kind, method, dueDay, body["installments"], res.Status)
	case k < 40 && len(unpaid) > 0: // pay
		p := unpaid[r.Intn(len(unpaid))]
		var liveP []map[string]any
		for _, q := range unpaid {
			if m.now().Before(parseTS(t, q["expires_at"])) {
				liveP = append(liveP, q)
			}
		}
		if len(liveP) > 0 && r.Intn(7) > 0 {
			p = liveP[r.Intn(len(liveP))]
		}
		body := map[string]any{}
		mode := "full"
		amt := mcents(p["amount_cents"]) - mcents(p["paid_amount_cents"])
		switch r.Intn(4) {
		case 0:
			mode = "partial"
			if amt > 1 {
				body["paid_amount_cents"] = 1 + r.Int63n(amt-1)
			}
		case 1:
			mode = "backdated"
			created := parseTS(t, p["created_at"])
			span := m.now().Sub(created)
			if span > 0 {
				body["paid_at"] = created.Add(time.Duration(r.Int63n(int64(span)))).Truncate(time.Millisecond).Format(time.RFC3339Nano)
			}
		case 2:
			mode = "over"
			body["paid_amount_cents"] = amt + 1 + r.Int63n(500)
		}
		res := b.call("POST", "/external_api/v1/sandbox/payments/"+p["id"].(string)+"/pay", body)
		exp := parseTS(t, p["expires_at"])
		if mode == "full" && m.now().Before(exp) && res.Status != 200 {
			// payment unpaid, not expired: the bank's notice must be taken
			var bill map[string]any
			for _, bl := range bills {
				if bl["id"] == p["bill_id"] {
					bill = bl
				}
			}
			if bill != nil && (bill["status"] == "pending" || bill["status"] == "overdue") {
				t.Errorf("pay of a live payment of an open bill refused: %d %s", res.Status, res.Body)
			}
		}
		return fmt.Sprintf("pay %s(%s of bill %s) %s %v → %d %s", short(p["id"]), p["payment_method"], short(p["bill_id"]), mode, body, res.Status, errCode(res))
	case k < 44 && len(unpaid) > 0: // expire
		p := unpaid[r.Intn(len(unpaid))]
		res := b.call("POST", "/external_api/v1/sandbox/payments/"+p["id"].(string)+"/expire", nil)
		return fmt.Sprintf("expire %s(%s of bill %s) → %d %s", short(p["id"]), p["payment_method"], short(p["bill_id"]), res.Status, errCode(res))
	case k < 49 && len(bills) > 0: // waive
		bl := bills[r.Intn(len(bills))]
		if len(open) > 0 && r.Intn(7) > 0 {
			bl = open[r.Intn(len(open))]
		}
		var until any
		switch r.Intn(4) {
		case 0:
			until = nil
		case 1:
			until = m.now().Add(time.Duration(r.Intn(40*24)) * time.Hour).Truncate(time.Millisecond).Format(time.RFC3339Nano)
		case 2:
			until = parseTS(t, bl["due_date"]).Add(time.Duration(r.Intn(20*24)) * time.Hour).Format(time.RFC3339Nano)
		case 3:
			until = m.now().Add(-time.Duration(r.Intn(10*24)) * time.Hour).Truncate(time.Millisecond).Format(time.RFC3339Nano)
		}
		res := b.call("PATCH", "/external_api/v1/bills/"+bl["id"].(string), map[string]any{"bill": map[string]any{"disable_penalties_until": until}})
		return fmt.Sprintf("waive bill %s(%s) until %v → %d %s", short(bl["id"]), bl["status"], until, res.Status, errCode(res))
	case k < 50: // cancel order
		o := orders[r.Intn(len(orders))]
		res := b.call("POST", "/external_api/v1/orders/"+o["id"].(string)+"/cancel", map[string]any{"reason": "customer_dropout"})
		if (o["status"] == "pending" || o["status"] == "in_progress") && res.Status != 200 {
			t.Errorf("cancel of a %v order: %d %s", o["status"], res.Status, res.Body)
		}
		return fmt.Sprintf("cancel order %s(%s) → %d %s", short(o["id"]), o["status"], res.Status, errCode(res))
	case k < 54: // cancel billing
		o := orders[r.Intn(len(orders))]
		bls := o["billings"].([]any)
		if len(bls) == 0 {
			return "noop"
		}
		bl := bls[len(bls)-1].(map[string]any)
		res := b.call("POST", "/external_api/v1/billings/"+bl["id"].(string)+"/cancel", map[string]any{"cancelation_reason": "refunded_by_company"})
		return fmt.Sprintf("cancel billing %s(%s) → %d %s", short(bl["id"]), bl["status"], res.Status, errCode(res))
	case k < 60:
		b.sweep(t)
		return "sweep"
	default: // time jump
		now := m.now()
		var to time.Time
		what := ""
		switch r.Intn(8) {
		case 0:
			to, what = now.Add(time.Duration(1+r.Intn(12))*time.Hour), "hours"
		case 1:
			to, what = now.Add(time.Duration(1+r.Intn(4))*24*time.Hour), "days"
		case 2: // around a due date of an open bill
			if len(open) == 0 {
				to, what = now.Add(24*time.Hour), "day"
				break
			}
			bl := open[r.Intn(len(open))]
			field := []string{"due_date", "effective_due_date"}[r.Intn(2)]
			d := parseTS(t, bl[field])
			to = d.Add([]time.Duration{-time.Minute, time.Millisecond, time.Minute, 25 * time.Hour, 49 * time.Hour}[r.Intn(5)])
			what = "around " + field + " of " + short(bl["id"])
		case 3: // month end
			y, mo, _ := now.In(parcela.SaoPaulo).Date()
			end := time.Date(y, mo+1, 1, 0, 0, 0, 0, parcela.SaoPaulo)
			to = end.Add([]time.Duration{-time.Minute, time.Millisecond, 2 * time.Hour}[r.Intn(3)])
			what = "month end"
		case 4: // 31 December
			y := now.In(parcela.SaoPaulo).Year()
			d := time.Date(y, 12, 31, 12, 0, 0, 0, parcela.SaoPaulo)
			if !d.After(now) {
				d = d.AddDate(1, 0, 0)
			}
			to = d.Add([]time.Duration{0, 12*time.Hour - time.Minute, 12*time.Hour + time.Minute, 36 * time.Hour}[r.Intn(4)])
			what = "31 December"
		case 5: // weekend
			d := now.In(parcela.SaoPaulo)
			for d.Weekday() != time.Saturday {
				d = d.AddDate(0, 0, 1)
			}
			to = time.Date(d.Year(), d.Month(), d.Day(), 10, 0, 0, 0, parcela.SaoPaulo).AddDate(0, 0, r.Intn(3))
			what = "weekend"
		default:
			to, what = now.Add(time.Duration(5+r.Intn(25))*24*time.Hour), "weeks"
		}
		if !to.After(now) {
			to = now.Add(time.Hour)
		}
		b.clock.Set(to)
		sw := r.Intn(3) > 0
		if sw {
			b.sweep(t)
		}
		return fmt.Sprintf("jump %s to %s sweep=%v", what, to.In(parcela.SaoPaulo).Format("2006-01-02 15:04:05.000 Mon"), sw)
	}
}

func short(v any) string {
	s, _ := v.(string)
	if len(s) > 8 {
		return s[len(s)-6:]
	}
	return s
}

func errCode(r resp) string {
	if r.Status < 300 {
		return ""
	}
	var p map[string]any
	_ = json.Unmarshal(r.Body, &p) // a body that is no problem reads as <nil>
	return fmt.Sprintf("%v:%v", p["code"], p["detail"])
}

var moves = map[string]map[string][]string{
	"order":   {"pending": {"in_progress", "canceled"}, "in_progress": {"finished", "canceled"}},
	"billing": {"": {"waiting_payment"}, "waiting_payment": {"active", "finished", "canceled"}, "active": {"finished", "canceled"}},
	"bill":    {"": {"pending"}, "pending": {"paid", "overdue", "canceled"}, "overdue": {"paid", "canceled"}},
}

func (m *mdl) check(desc string) {
	t := m.t
	swept := desc == "sweep" || strings.HasSuffix(desc, "sweep=true") || desc == "sweep(fallback)"
	billingStatus := map[string]string{}
	now := m.now()
	orders, bills := m.state()
	cur := map[string]string{}
	kind := map[string]string{}
	getForm := map[string]map[string]any{}
	billsOf := map[string][]map[string]any{}
	for _, bl := range bills {
		bid := bl["billing"].(map[string]any)["id"].(string)
		billsOf[bid] = append(billsOf[bid], bl)
		cur[bl["id"].(string)] = bl["status"].(string)
		kind[bl["id"].(string)] = "bill"
		getForm[bl["id"].(string)] = bl
	}
	for _, o := range orders {
		oid := o["id"].(string)
		cur[oid] = o["status"].(string)
		kind[oid] = "order"
		getForm[oid] = o
		os := o["status"]
		bls := o["billings"].([]any)
		if os == "pending" && len(bls) != 0 {
			t.Errorf("[%s] pending order %s has billings", desc, short(oid))
		}
		for _, x := range bls {
			bl := x.(map[string]any)
			blid := bl["id"].(string)
			getBl := m.get("/billings/" + blid)
			cur[blid] = getBl["status"].(string)
			billingStatus[blid] = getBl["status"].(string)
			kind[blid] = "billing"
			getForm[blid] = getBl
			bs := bl["status"]
			ob := o["billings"].([]any)[len(o["billings"].([]any))-1].(map[string]any)
			_ = ob
			mine := billsOf[blid]
			allPaid, anyOpen, firstPaid := true, false, false
			var sum int64
			for i, b := range mine {
				sum += mcents(b["original_amount_cents"])
				if b["status"] != "paid" {
					allPaid = false
				}
				if b["status"] == "pending" || b["status"] == "overdue" {
					anyOpen = true
				}
				if i == 0 && b["status"] == "paid" {
					firstPaid = true
				}
				if i == 0 && b["bill_type"] != "down_payment" || i > 0 && b["bill_type"] != "installment" {
					t.Errorf("[%s] bill %d of billing %s has type %v", desc, i, short(blid), b["bill_type"])
				}
			}
			if len(mine) > 0 && mcents(bl["amount_cents"]) != sum {
				t.Errorf("[%s] billing %s amount %v, its bills' original amounts sum %d", desc, short(blid), bl["amount_cents"], sum)
			}
			if (bs == "finished") != allPaid {
				t.Errorf("[%s] billing %s %v, every bill paid=%v", desc, short(blid), bs, allPaid)
			}
			if (os == "finished") != (bs == "finished") {
				t.Errorf("[%s] order %s %v, billing %v", desc, short(oid), os, bs)
			}
			if os == "canceled" && bs != "canceled" {
				t.Errorf("[%s] order %s canceled, its billing %v", desc, short(oid), bs)
			}
			if bs == "canceled" && os != "canceled" {
				t.Errorf("[%s] billing %s canceled, its order %v", desc, short(blid), os)
			}
			if swept && bs == "waiting_payment" && len(mine) > 0 {
				liveFirst := false
				for _, x := range mine[0]["payments"].([]any) {
					if p := x.(map[string]any); p["status"] == "unpaid" { // live, or kept for the bank's notice (design)
						liveFirst = true
					}
				}
				if !liveFirst {
					pj, _ := json.MarshalIndent(mine[0]["payments"], "", " ")
					t.Errorf("[%s] billing %s waits on a first bill %s (%v, due %v) with no live payment after the sweep: %s", desc, short(blid), short(mine[0]["id"]), mine[0]["status"], mine[0]["due_date"], pj)
				}
			}
			if bs == "canceled" && anyOpen {
				t.Errorf("[%s] billing %s canceled with open bills", desc, short(blid))
			}
			if bs == "canceled" && bl["cancelation_reason"] == nil {
				t.Errorf("[%s] billing %s canceled without a reason", desc, short(blid))
			}
			if bs == "active" && !firstPaid {
				t.Errorf("[%s] billing %s active, down payment %v", desc, short(blid), mine[0]["status"])
			}
			if bs == "waiting_payment" && firstPaid {
				t.Errorf("[%s] billing %s waiting_payment with its down payment paid", desc, short(blid))
			}
			if bs != "finished" && bl["finished_at"] != nil {
				t.Errorf("[%s] billing %s %v with finished_at %v", desc, short(blid), bs, bl["finished_at"])
			}
			if bs == "finished" && bl["finished_at"] == nil {
				t.Errorf("[%s] billing %s finished with no finished_at", desc, short(blid))
			}
			if !reflect.DeepEqual(stripKeys(getBl, "bills"), stripKeys(bl, "bills")) {
				t.Errorf("[%s] GET /billings/%s differs from the order's billing", desc, short(blid))
			}
		}
	}
	// bills
	for i, bl := range bills {
		id := short(bl["id"])
		st := bl["status"]
		orig := mcents(bl["original_amount_cents"])
		curAmt := mcents(bl["current_amount_cents"])
		eff := parseTS(t, bl["effective_due_date"])
		due := parseTS(t, bl["due_date"])
		var waiver time.Time
		if bl["disable_penalties_until"] != nil {
			waiver = parseTS(t, bl["disable_penalties_until"])
		}
		if mcents(bl["amount_cents"]) != orig {
			t.Errorf("[%s] bill %s amount %d original %d", desc, id, mcents(bl["amount_cents"]), orig)
		}
		if (st == "paid") != (bl["paid_at"] != nil) {
			t.Errorf("[%s] bill %s %v paid_at %v", desc, id, st, bl["paid_at"])
		}
		if bl["paid_at"] != nil && parseTS(t, bl["paid_at"]).After(now) {
			t.Errorf("[%s] bill %s paid_at %v in the future", desc, id, bl["paid_at"])
		}
		if eff.Before(due) {
			t.Errorf("[%s] bill %s effective due %v before due %v", desc, id, eff, due)
		}
		var received int64
		live := map[string]int{}
		for _, x := range bl["payments"].([]any) {
			p := x.(map[string]any)
			received += mcents(p["paid_amount_cents"])
			if p["bill_id"] != bl["id"] {
				t.Errorf("[%s] bill %s payment of bill %v", desc, id, p["bill_id"])
			}
			if p["status"] == "unpaid" {
				if st == "paid" || st == "canceled" {
					t.Errorf("[%s] bill %s %v keeps an unpaid payment %s", desc, id, st, short(p["id"]))
				}
				if now.Before(parseTS(t, p["expires_at"])) {
					live[p["payment_method"].(string)]++
				}
			}
			if (p["status"] == "paid" && p["paid_at"] == nil) || (p["paid_at"] != nil) != (mcents(p["paid_amount_cents"]) > 0) {
				t.Errorf("[%s] payment %s %v paid_at %v", desc, short(p["id"]), p["status"], p["paid_at"])
			}
			if p["status"] == "paid" && mcents(p["paid_amount_cents"]) == 0 {
				t.Errorf("[%s] payment %s paid with 0 received", desc, short(p["id"]))
			}
		}
		for meth, n := range live {
			if n > 1 {
				t.Errorf("[%s] bill %s has %d live %s payments", desc, id, n, meth)
			}
		}
		if bl["received_amount_cents"] != nil && mcents(bl["received_amount_cents"]) != received {
			t.Errorf("[%s] bill %s received_amount_cents %v, payments sum %d", desc, id, bl["received_amount_cents"], received)
		}
		if st == "overdue" && !now.After(eff) {
			t.Errorf("[%s] bill %s overdue at %v before its effective due %v", desc, id, now, eff)
		}
		penaltyFrom := eff
		if w := waiver.Add(-time.Millisecond); !waiver.IsZero() && w.After(penaltyFrom) {
			penaltyFrom = w // the waiver's end is the first instant penalties accrue (design)
		}
		if st == "pending" || st == "overdue" {
			if curAmt < orig {
				t.Errorf("[%s] open bill %s current %d below original %d", desc, id, curAmt, orig)
			}
			if !now.After(penaltyFrom) && curAmt != orig {
				t.Errorf("[%s] bill %s (eff %s waiver %v) carries a penalty %d at %s", desc, id, eff.In(parcela.SaoPaulo).Format(time.DateTime), bl["disable_penalties_until"], curAmt-orig, now.In(parcela.SaoPaulo).Format(time.DateTime))
			}
			if bl["bill_type"] == "down_payment" && curAmt != orig {
				t.Errorf("[%s] down payment %s carries a penalty %d", desc, id, curAmt-orig)
			}
			days := int64(now.Sub(due)/(24*time.Hour)) + 2
			if days > 0 && curAmt > latePrice(orig, days) {
				t.Errorf("[%s] bill %s current %d above the most it may owe %d", desc, id, curAmt, latePrice(orig, days))
			}
		}
		if swept && (st == "pending" || st == "overdue") && bl["bill_type"] == "installment" && billingStatus[bl["billing"].(map[string]any)["id"].(string)] == "active" {
			var liveP, first map[string]any
			for _, x := range bl["payments"].([]any) {
				p := x.(map[string]any)
				if p["status"] == "unpaid" && now.Before(parseTS(t, p["expires_at"])) {
					liveP = p
				}
				if p["payment_method"] != "credit_card" && (first == nil || parseTS(t, p["created_at"]).Before(parseTS(t, first["created_at"]))) {
					first = p
				}
			}
			if !now.Before(due.AddDate(0, 0, -10)) && liveP == nil {
				t.Errorf("[%s] open installment %s due %s has no live payment after the sweep at %s", desc, id, due.In(parcela.SaoPaulo).Format(time.DateTime), now.In(parcela.SaoPaulo).Format(time.DateTime))
			}
			lateFrom := eff
			if first != nil {
				fc, fe := parseTS(t, first["created_at"]), parseTS(t, first["expires_at"])
				if fc.After(eff) && fe.After(eff) {
					lateFrom = fe.Add(-time.Millisecond)
				}
			}
			free := lateFrom
			if !waiver.IsZero() && waiver.Add(-time.Millisecond).After(free) {
				free = waiver.Add(-time.Millisecond)
			}
			if liveP != nil && now.After(free) && st == "pending" {
				t.Errorf("[%s] installment %s late since %s (eff %s, waiver %v) with a live payment still pending after the sweep", desc, id, free.In(parcela.SaoPaulo).Format(time.DateTime), eff.In(parcela.SaoPaulo).Format(time.DateTime), bl["disable_penalties_until"])
			}
			if first != nil {
				lateDue := due
				if !lateFrom.Equal(eff) {
					lateDue = lateFrom
				}
				from := lateDue
				if !waiver.IsZero() && waiver.Add(-time.Millisecond).After(from) {
					from = waiver.Add(-time.Millisecond)
				}
				want := orig
				if now.After(free) {
					d := func(x time.Time) time.Time {
						y, mo, dd := x.In(parcela.SaoPaulo).Date()
						return time.Date(y, mo, dd, 0, 0, 0, 0, time.UTC)
					}
					days := int64(d(now).Sub(d(from)) / (24 * time.Hour))
					want = orig + parcela.MustRate("0.02").MulCents(orig) + parcela.RoundCents(parcela.RateFromInt(orig*days).Decimal().Mul(parcela.MustRate("0.01").Decimal()).Div(parcela.RateFromInt(30).Decimal()))
				}
				if curAmt != want {
					t.Errorf("[%s] installment %s current %d, the model says %d (due %s eff %s waiver %v first %v)", desc, id, curAmt, want, due.In(parcela.SaoPaulo).Format(time.DateTime), eff.In(parcela.SaoPaulo).Format(time.DateTime), bl["disable_penalties_until"], first["created_at"])
				}
			}
		}
		if st == "paid" {
			day := parseTS(t, bl["paid_at"]).In(parcela.SaoPaulo).Format("2006-01-02")
			l := m.get("/bills?per_page=1000&paid_at_start=" + day + "&paid_at_end=" + day + "&billing_id=" + bl["billing"].(map[string]any)["id"].(string))
			found := false
			for _, x := range l["results"].([]any) {
				if x.(map[string]any)["id"] == bl["id"] {
					found = true
				}
			}
			if !found {
				t.Errorf("[%s] paid bill %s (paid_at %v) not listed on its paid day %s", desc, id, bl["paid_at"], day)
			}
		}
		if st == "canceled" && curAmt != orig {
			t.Errorf("[%s] canceled bill %s current %d orig %d", desc, id, curAmt, orig)
		}
		if st == "paid" {
			if curAmt < orig {
				t.Errorf("[%s] paid bill %s owed %d below original %d", desc, id, curAmt, orig)
			}
			if curAmt > received {
				t.Errorf("[%s] paid bill %s owed %d, received %d", desc, id, curAmt, received)
			}
		}
		_ = i
	}
	// listings
	byStatus := map[string][]string{}
	for _, bl := range bills {
		byStatus[bl["status"].(string)] = append(byStatus[bl["status"].(string)], bl["id"].(string))
	}
	for _, s := range []string{"pending", "paid", "canceled", "overdue"} {
		l := m.get("/bills?per_page=1000&status=" + s)
		var got []string
		for _, x := range l["results"].([]any) {
			got = append(got, x.(map[string]any)["id"].(string))
			if x.(map[string]any)["status"] != s {
				t.Errorf("[%s] ?status=%s lists a %v bill", desc, s, x.(map[string]any)["status"])
			}
		}
		want := byStatus[s]
		sort.Strings(got)
		sort.Strings(want)
		if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("[%s] ?status=%s lists %d bills, the bills say %d", desc, s, len(got), len(want))
		}
		if mcents(l["total_items"]) != int64(len(want)) {
			t.Errorf("[%s] ?status=%s total_items %v want %d", desc, s, l["total_items"], len(want))
		}
	}
	// events
	evs, err := m.b.db.CompanyEvents(context.Background(), parcela.Auth{CompanyID: m.b.company.ID, Environment: parcela.Sandbox})
	if err != nil {
		t.Fatal(err)
	}
	fresh := evs[m.nEvents:]
	m.nEvents = len(evs)
	seen := map[string][]parcela.Event{}
	for _, e := range fresh {
		seen[e.EntityID] = append(seen[e.EntityID], e)
	}
	for id, now := range cur {
		prev, had := m.status[id]
		es := seen[id]
		if kind[id] == "order" && !had {
			prev = "pending"
		}
		if prev == now {
			if len(es) != 0 {
				t.Errorf("[%s] %s %s stayed %s but emitted %s", desc, kind[id], short(id), now, evNames(es))
			}
			continue
		}
		if len(es) == 0 {
			t.Errorf("[%s] %s %s moved %q → %s with no event", desc, kind[id], short(id), prev, now)
			continue
		}
		s := prev
		for _, e := range es {
			if e.Entity != kind[id] {
				t.Errorf("[%s] event entity %s for a %s", desc, e.Entity, kind[id])
			}
			if !slices.Contains(moves[kind[id]][s], e.Event) {
				t.Errorf("[%s] %s %s event %s after %q: not a move", desc, kind[id], short(id), e.Event, s)
			}
			var d map[string]any
			if err := json.Unmarshal(e.Data, &d); err != nil {
				t.Fatalf("event data: %v", err)
			}
			if d["status"] != e.Event {
				t.Errorf("[%s] %s %s event %s carries status %v", desc, kind[id], short(id), e.Event, d["status"])
			}
			s = e.Event
		}
		if s != now {
			t.Errorf("[%s] %s %s events %s end at %s, GET says %s", desc, kind[id], short(id), evNames(es), s, now)
		}
		if len(es) == 1 {
			var d map[string]any
			if err := json.Unmarshal(es[0].Data, &d); err != nil {
				t.Fatalf("event data: %v", err)
			}
			diff := jsonDiff("", d, getForm[id])
			if m.conc {
				diff = slices.DeleteFunc(diff, func(s string) bool {
					if strings.Contains(s, "(len)") {
						return true
					}
					p, _, _ := strings.Cut(s, ":")
					p, _, _ = strings.Cut(p, "(")
					return strings.Count(p, ".") > 1 || strings.Contains(p, "[")
				})
			}
			if len(diff) > 0 {
				t.Errorf("[%s] %s %s event %s data differs from GET: %v", desc, kind[id], short(id), es[0].Event, diff)
			}
		}
	}
	pos := map[string]int{}
	for i, e := range fresh {
		pos[e.Entity+":"+e.EntityID+":"+e.Event] = i + 1
	}
	for i, e := range fresh {
		var d map[string]any
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatalf("event data: %v", err)
		}
		if e.Entity == "billing" && (e.Event == "finished" || e.Event == "active") {
			for j, bl := range billsOf[e.EntityID] {
				if e.Event == "active" && j > 0 {
					break // activation waits on the down payment alone
				}
				if q := pos["bill:"+bl["id"].(string)+":paid"]; q > i+1 {
					t.Errorf("[%s] billing %s %s emitted before its bill %s paid", desc, short(e.EntityID), e.Event, short(bl["id"]))
				}
			}
		}
		if e.Entity == "order" && (e.Event == "finished" || e.Event == "canceled") {
			for _, x := range d["billings"].([]any) {
				blid := x.(map[string]any)["id"].(string)
				if q := pos["billing:"+blid+":"+e.Event]; q > i+1 {
					t.Errorf("[%s] order %s %s emitted before its billing", desc, short(e.EntityID), e.Event)
				}
			}
		}
	}
	for id, es := range seen {
		if _, ok := cur[id]; !ok {
			t.Errorf("[%s] events %s for unknown entity %s", desc, evNames(es), id)
		}
	}
	m.status = cur
}

func evNames(es []parcela.Event) string {
	var s []string
	for _, e := range es {
		s = append(s, e.Event)
	}
	return strings.Join(s, ",")
}

func stripKeys(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if !slices.Contains(keys, k) {
			out[k] = v
		}
	}
	return out
}

// jsonDiff lists paths where a and b differ, ignoring fields that move with
// the clock alone.
func jsonDiff(path string, a, b any) []string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return []string{path}
		}
		var out []string
		for k := range x {
			if k == "current_amount_cents" {
				continue
			}
			out = append(out, jsonDiff(path+"."+k, x[k], y[k])...)
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				out = append(out, path+"."+k+"(missing)")
			}
		}
		return out
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return []string{path + "(len)"}
		}
		var out []string
		for i := range x {
			out = append(out, jsonDiff(fmt.Sprintf("%s[%d]", path, i), x[i], y[i])...)
		}
		return out
	default:
		if !reflect.DeepEqual(a, b) {
			return []string{fmt.Sprintf("%s: %v vs %v", path, a, b)}
		}
	}
	return nil
}
