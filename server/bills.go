package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"parcela"
	"parcela/sqldb"
)

var billStatuses = []string{parcela.BillPending, parcela.BillPaid, parcela.BillCanceled, parcela.BillOverdue}

// dateParam reads a YYYY-MM-DD São Paulo date; end dates are inclusive, so
// they become the following midnight.
func dateParam(r *http.Request, name string, end bool) (*time.Time, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return nil, nil
	}
	t, err := time.ParseInLocation(time.DateOnly, s, parcela.SaoPaulo)
	if err != nil {
		return nil, &parcela.Error{Code: parcela.EMALFORMED, Message: name + " must be a date as YYYY-MM-DD",
			Fields: []parcela.FieldError{{Field: name, Code: "invalid", Message: "must be a date as YYYY-MM-DD"}}}
	}
	if end {
		t = t.AddDate(0, 0, 1)
	}
	return &t, nil
}

func (s *Server) handleListBills(r *http.Request, _ []byte) (int, any, error) {
	page, perPage, err := pageParams(r)
	if err != nil {
		return 0, nil, err
	}
	q := r.URL.Query()
	f := sqldb.BillFilter{BillingID: q.Get("billing_id"), OrderID: q.Get("order_id"), Status: q.Get("status"), Page: page, PerPage: perPage}
	if f.Status != "" && !slices.Contains(billStatuses, f.Status) {
		return 0, nil, fieldErr("status", "invalid", "must be pending, paid, canceled or overdue")
	}
	for _, d := range []struct {
		name string
		end  bool
		dst  **time.Time
	}{{"due_date_start", false, &f.DueFrom}, {"due_date_end", true, &f.DueTo}, {"paid_at_start", false, &f.PaidFrom}, {"paid_at_end", true, &f.PaidTo}} {
		if *d.dst, err = dateParam(r, d.name, d.end); err != nil {
			return 0, nil, err
		}
	}
	bills, total, c, err := s.db.ListBills(r.Context(), authOf(r), f)
	if err != nil {
		return 0, nil, err
	}
	now := s.clock.Now()
	out := make([]parcela.BillEndpointForm, 0, len(bills))
	for _, b := range bills {
		out = append(out, parcela.NewBillEndpointForm(b, c, now, s.links()))
	}
	return http.StatusOK, newPage(out, total, perPage), nil
}

func (s *Server) billResponse(r *http.Request, id string) (int, any, error) {
	b, c, err := s.db.Bill(r.Context(), authOf(r), id)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, parcela.NewBillEndpointForm(b, c, s.clock.Now(), s.links()), nil
}

func (s *Server) handleGetBill(r *http.Request, _ []byte) (int, any, error) {
	return s.billResponse(r, pathID(r))
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
	var t time.Time
	if err := json.Unmarshal(b, &t); err != nil {
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
	if err := s.db.SetPenaltyWaiver(r.Context(), authOf(r), pathID(r), req.Bill.DisablePenaltiesUntil.Value); err != nil {
		return 0, nil, err
	}
	return s.billResponse(r, pathID(r))
}

// handleSandboxPay settles a payment as the bank would (sandbox only).
func (s *Server) handleSandboxPay(r *http.Request, body []byte) (int, any, error) {
	var req struct {
		PaidAt          *time.Time `json:"paid_at"`
		PaidAmountCents *int64     `json:"paid_amount_cents"`
	}
	if err := decode(body, &req, true); err != nil {
		return 0, nil, err
	}
	if req.PaidAmountCents != nil && *req.PaidAmountCents <= 0 {
		return 0, nil, fieldErr("paid_amount_cents", "too_small", "must be greater than 0")
	}
	if req.PaidAt != nil && req.PaidAt.After(s.clock.Now()) {
		return 0, nil, fieldErr("paid_at", "invalid", "must not be in the future")
	}
	billID, err := s.db.PayPayment(r.Context(), authOf(r), pathID(r), sqldb.Settlement{PaidAt: req.PaidAt, PaidAmountCents: req.PaidAmountCents})
	if err != nil {
		return 0, nil, err
	}
	return s.billResponse(r, billID)
}

// handleSandboxExpire expires an unpaid payment now (sandbox only).
func (s *Server) handleSandboxExpire(r *http.Request, _ []byte) (int, any, error) {
	billID, err := s.db.ExpirePayment(r.Context(), authOf(r), pathID(r))
	if err != nil {
		return 0, nil, err
	}
	return s.billResponse(r, billID)
}
