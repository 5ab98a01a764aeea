package server

import (
	"net/http"
	"time"

	"parcela"
	"parcela/jsonbody"
)

func (s *Server) handleListBills(r *http.Request, _ []byte) (int, any, error) {
	q, err := readQuery(r, "billing_id", "order_id", "status", "due_date_start", "due_date_end", "paid_at_start", "paid_at_end", "page", "per_page")
	if err != nil {
		return 0, nil, err
	}
	page, err := q.page()
	if err != nil {
		return 0, nil, err
	}
	f := parcela.BillFilter{Page: page}
	for _, p := range []struct {
		name string
		dst  *string
	}{{"billing_id", &f.BillingID}, {"order_id", &f.OrderID}, {"status", &f.Status}} {
		if *p.dst, err = q.one(p.name); err != nil {
			return 0, nil, err
		}
	}
	f.BillingID, f.OrderID = parcela.LowerUUID(f.BillingID), parcela.LowerUUID(f.OrderID)
	for _, d := range []struct {
		name string
		end  bool
		dst  **time.Time
	}{{"due_date_start", false, &f.DueFrom}, {"due_date_end", true, &f.DueTo}, {"paid_at_start", false, &f.PaidFrom}, {"paid_at_end", true, &f.PaidTo}} {
		if *d.dst, err = q.date(d.name, d.end); err != nil {
			return 0, nil, err
		}
	}
	bills, total, c, err := s.svc.Bills.Bills(r.Context(), authOf(r), f)
	if err != nil {
		return 0, nil, err
	}
	now := s.clock.Now()
	out := make([]parcela.BillEndpointForm, 0, len(bills))
	for _, b := range bills {
		out = append(out, parcela.NewBillEndpointForm(b, c, now, s.links()))
	}
	return http.StatusOK, billPage(newPage(out, total, page.PerPage)), nil
}

// billResponse renders a bill (with its billing summary) at the time of the
// response, its current amount carrying the company's late penalties.
func (s *Server) billResponse(b *parcela.Bill, c *parcela.Company, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, parcela.NewBillEndpointForm(b, c, s.clock.Now(), s.links()), nil
}

func (s *Server) handleGetBill(r *http.Request, _ []byte) (int, any, error) {
	return s.billResponse(s.svc.Bills.Bill(r.Context(), authOf(r), pathID(r)))
}

// nullableTime tells an explicit null from an absent field.
type nullableTime struct {
	Set   bool
	Value *time.Time
}

func (n *nullableTime) UnmarshalJSON(b []byte) error {
	n.Set = true
	if string(b) == "null" {
		return nil
	}
	t, err := jsonbody.Timestamp(b)
	if err != nil {
		return err
	}
	n.Value = &t
	return nil
}

func (s *Server) handleUpdateBill(r *http.Request, body []byte) (int, any, error) {
	var req struct {
		Bill *struct {
			DisablePenaltiesUntil nullableTime `json:"disable_penalties_until"`
		} `json:"bill"`
	}
	if err := decode(body, &req, false); err != nil {
		return 0, nil, err
	}
	if req.Bill == nil || !req.Bill.DisablePenaltiesUntil.Set {
		return 0, nil, fieldErr("bill.disable_penalties_until", "required", "is required (a timestamp, or null to clear it)")
	}
	return s.billResponse(s.svc.Bills.WaivePenalties(r.Context(), authOf(r), pathID(r), req.Bill.DisablePenaltiesUntil.Value))
}

// handleSandboxPay settles a payment as the bank would (sandbox only).
func (s *Server) handleSandboxPay(r *http.Request, body []byte) (int, any, error) {
	var req struct {
		PaidAt          *time.Time `json:"paid_at"`
		PaidAmountCents *int64     `json:"paid_amount_cents"`
		NoticeID        *string    `json:"notice_id"`
	}
	if err := decode(body, &req, true); err != nil {
		return 0, nil, err
	}
	settle := parcela.Settlement{PaidAt: req.PaidAt, PaidAmountCents: req.PaidAmountCents}
	if req.NoticeID != nil {
		if *req.NoticeID == "" {
			return 0, nil, fieldErr("notice_id", "required", "must not be empty (leave it out for a notice without an id)")
		}
		settle.NoticeID = *req.NoticeID
	}
	return answer(r, http.StatusOK, s.billForm, func() (parcela.PricedBill, error) {
		return pricedBill(s.svc.Payments.PayPayment(r.Context(), authOf(r), pathID(r), settle))
	})
}

// handleSandboxExpire expires an unpaid payment now (sandbox only).
func (s *Server) handleSandboxExpire(r *http.Request, _ []byte) (int, any, error) {
	return answer(r, http.StatusOK, s.billForm, func() (parcela.PricedBill, error) {
		return pricedBill(s.svc.Payments.ExpirePayment(r.Context(), authOf(r), pathID(r)))
	})
}

// billForm renders a bill (with its billing summary) at the time of the
// response, its current amount carrying the company's late penalties.
func (s *Server) billForm(b parcela.PricedBill) any {
	return parcela.NewBillEndpointForm(b.Bill, b.Company, s.clock.Now(), s.links())
}

func pricedBill(b *parcela.Bill, c *parcela.Company, err error) (parcela.PricedBill, error) {
	return parcela.PricedBill{Bill: b, Company: c}, err
}
