package parcela

import (
	"context"
	"errors"
	"testing"
	"time"
)

// orderStoreFake serves one offer with its company; City answers cityErr.
type orderStoreFake struct {
	OrderStore
	cityErr error
	created *Order
}

func (f *orderStoreFake) Offer(_ context.Context, a Auth, id string) (*Offer, error) {
	c := NewCompany("Escola", "11222333000181", "escola")
	c.ID = a.CompanyID
	return &Offer{ID: id, CompanyID: a.CompanyID, Availability: "enabled", Product: &Product{ID: "product", Availability: "enabled", Company: &c}}, nil
}

func (f *orderStoreFake) City(_ context.Context, code string) (*City, error) {
	if f.cityErr != nil {
		return nil, f.cityErr
	}
	return &City{ID: "city", IBGECode: code, Name: "São Paulo", State: State{Name: "São Paulo", Acronym: "SP"}}, nil
}

func (f *orderStoreFake) CreateOrder(_ context.Context, o *Order) error {
	f.created = o
	return nil
}

// Only a city that is not there makes the order's city invalid: any other
// failure of the store stays a server error, never a 422 it is not.
func TestCreateOrderCityErrors(t *testing.T) {
	t.Parallel()
	req := orderRequestIn("01310100")
	clock := NewTestClock(time.Date(2026, 11, 21, 12, 0, 0, 0, SaoPaulo))
	tests := []struct {
		name     string
		cityErr  error
		wantCode string
		created  bool
	}{
		{"known city", nil, "", true},
		{"unknown city", NotFound("city"), EINVALID, false},
		{"the store failing", errors.New("read city: connection reset by peer"), EINTERNAL, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &orderStoreFake{cityErr: tt.cityErr}
			o, err := NewOrders(store, nil, clock, LinksByEnvironment{}).CreateOrder(context.Background(), Auth{CompanyID: "company", Environment: Sandbox}, req)
			if ErrorCode(err) != tt.wantCode || (store.created != nil) != tt.created {
				t.Fatalf("err %v (code %q), created %v", err, ErrorCode(err), store.created != nil)
			}
			if tt.wantCode == EINVALID {
				var e *Error
				if !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Field != "order.address.city_ibge_code" {
					t.Fatalf("fields %+v", e)
				}
			}
			if tt.created && (o.Status != OrderPending || o.Address.City.ID != "city" || o.CompanyID != "company") {
				t.Fatalf("order %+v", o)
			}
		})
	}
}

// A zipcode must belong to the chosen city's state: 20040002 is in Rio de
// Janeiro, not São Paulo.
func TestCreateOrderZipcodeOutsideTheCitysState(t *testing.T) {
	t.Parallel()
	req := orderRequestIn("20040002")
	store := &orderStoreFake{}
	clock := NewTestClock(time.Date(2026, 11, 21, 12, 0, 0, 0, SaoPaulo))
	_, err := NewOrders(store, nil, clock, LinksByEnvironment{}).CreateOrder(context.Background(), Auth{CompanyID: "company", Environment: Sandbox}, req)
	var ve *Error
	if !errors.As(err, &ve) || ve.Code != EINVALID || len(ve.Fields) != 1 || ve.Fields[0].Field != "order.address.zipcode" || store.created != nil {
		t.Fatalf("err %v, created %v", err, store.created != nil)
	}
}

// orderRequestIn is an order of a São Paulo customer (IBGE 3550308) with
// the given zipcode.
func orderRequestIn(zipcode string) OrderRequest {
	s, c, code, e, ph := "6b0f3a0e-9d53-4a8e-9f0b-2f5d1c1e7a10", "Maria da Silva", "3550308", "maria@example.com", "11987654321"
	birth, doc, street, num, hood := "1990-05-17", "52998224725", "Avenida Paulista", "1000", "Bela Vista"
	var req OrderRequest
	req.Order.OfferID, req.Order.CustomerName, req.Order.CustomerBirthdate, req.Order.CustomerDocument = &s, &c, &birth, &doc
	req.Order.Email, req.Order.Phone = &e, &ph
	req.Order.Address = &AddressInput{Zipcode: &zipcode, Street: &street, Number: &num, Neighborhood: &hood, CityIBGECode: &code}
	return req
}
