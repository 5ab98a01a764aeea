package parcela

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// Catalog creates and changes a company's products and offers.
type Catalog struct {
	store CatalogStore
	clock Clock
	// offerChecks bounds the offers created at once in the process (one per
	// two cores): an offer's check plans every count of each configuration
	// at every first-period length, up to tens of milliseconds a
	// configuration, and a company creating offers as fast as its rate
	// limit lets it took every core from the other companies' requests.
	offerChecks chan struct{}
	// offerTurns admits each company's offers (in each environment) to
	// offerChecks half of it at a time, at least one, first come, first
	// served: the slots alone are first come, first served among every
	// company, and one company's offers sent many at once (a sandbox load
	// test's) queued ahead of every other company's, in production too,
	// which waited for all of them (TestOffersAreCreatedInTurnsByCompany).
	turnsMu    sync.Mutex
	offerTurns map[string]*offerTurn
}

// offerTurn is one company's and environment's turns at offerChecks.
type offerTurn struct {
	slots chan struct{}
	users int // offers holding or waiting for a turn
}

// offerTurn waits for one of a's turns at offerChecks, and returns what
// gives it back.
func (s *Catalog) offerTurn(ctx context.Context, a Auth) (func(), error) {
	owner := a.CompanyID + "/" + string(a.Environment)
	s.turnsMu.Lock()
	t := s.offerTurns[owner]
	if t == nil {
		if s.offerTurns == nil {
			s.offerTurns = map[string]*offerTurn{}
		}
		t = &offerTurn{slots: make(chan struct{}, max(1, cap(s.offerChecks)/2))}
		s.offerTurns[owner] = t
	}
	t.users++
	s.turnsMu.Unlock()
	leave := func() {
		s.turnsMu.Lock()
		if t.users--; t.users == 0 {
			delete(s.offerTurns, owner)
		}
		s.turnsMu.Unlock()
	}
	select {
	case t.slots <- struct{}{}:
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
	return func() {
		<-t.slots
		leave()
	}, nil
}

// NewCatalog returns the catalog use cases over store.
func NewCatalog(store CatalogStore, clock Clock) *Catalog {
	return &Catalog{store: store, clock: clock, offerChecks: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2))}
}

var _ CatalogService = (*Catalog)(nil)

// CreateProduct validates and stores a product of the caller's company.
func (s *Catalog) CreateProduct(ctx context.Context, a Auth, in ProductInput) (*Product, error) {
	kinds, shifts, err := s.store.ProductReferences(ctx)
	if err != nil {
		return nil, err
	}
	p, err := NewProduct(a, in, kinds, shifts, s.clock.Now())
	if err != nil {
		return nil, err
	}
	if err := s.store.CreateProduct(answering(ctx, p), p); err != nil {
		return nil, err
	}
	return p, nil
}

// NewProduct validates in and builds the product of a's company that
// CreateProduct stores, with its id, created at now (the demo's setup
// stores it with its company, in one transaction).
func NewProduct(a Auth, in ProductInput, kinds, shifts map[string]Named, now time.Time) (*Product, error) {
	p := &Product{CompanyID: a.CompanyID, Environment: a.Environment, AccessPeriod: AccessLifetime,
		Availability: "enabled", Kind: kinds["course"], Shift: shifts["online"]}
	var v Validation
	if in.Name == nil {
		v.Add("product.name", "required", "is required")
	}
	if in.FullAmountCents == nil {
		v.Add("product.full_amount_cents", "required", "is required")
	}
	if err := p.Apply(in, kinds, shifts); err != nil {
		var e *Error
		if !errors.As(err, &e) {
			return nil, err
		}
		for _, f := range e.Fields {
			if !v.Has(f.Field) {
				v.Add(f.Field, f.Code, f.Message)
			}
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	p.ID, p.CreatedAt, p.UpdatedAt = NewID(), now, now
	return p, nil
}

// Product returns one of the caller's products.
func (s *Catalog) Product(ctx context.Context, a Auth, id string) (*Product, error) {
	return s.store.Product(ctx, a, id)
}

// Products lists the caller's products, newest first, up to
// MaxPerPageOfLargeItems a page.
func (s *Catalog) Products(ctx context.Context, a Auth, p Page) ([]*Product, int, error) {
	if err := p.ValidateUpTo(MaxPerPageOfLargeItems); err != nil {
		return nil, 0, err
	}
	return s.store.Products(ctx, a, p)
}

// UpdateProduct patches a product. Lowering its amount below an offer's is
// refused: an offer may never cost more than its product.
func (s *Catalog) UpdateProduct(ctx context.Context, a Auth, id string, in ProductInput) (*Product, error) {
	var p *Product
	err := decideAndApply("product", func() error {
		var err error
		if p, err = s.store.Product(ctx, a, id); err != nil {
			return err
		}
		kinds, shifts, err := s.store.ProductReferences(ctx)
		if err != nil {
			return err
		}
		if err := p.Apply(in, kinds, shifts); err != nil {
			return err
		}
		maxOffer, ok, err := s.store.MaxOfferAmount(ctx, p.ID)
		if err != nil {
			return err
		}
		if ok && p.FullAmountCents < maxOffer {
			msg := fmt.Sprintf("must be at least %d, the amount of an offer of this product", maxOffer)
			return &Error{Code: EINVALID, Message: "product.full_amount_cents " + msg,
				Fields: []FieldError{{Field: "product.full_amount_cents", Code: "too_small", Message: msg}}}
		}
		p.UpdatedAt = s.clock.Now()
		return s.store.UpdateProduct(ctx, p)
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// CreateOffer validates an offer request against the company's limits and
// stores the offer with its payment configurations.
func (s *Catalog) CreateOffer(ctx context.Context, a Auth, req OfferRequest) (*Offer, error) {
	done, err := s.offerTurn(ctx, a)
	if err != nil {
		return nil, err
	}
	defer done()
	select {
	case s.offerChecks <- struct{}{}:
		defer func() { <-s.offerChecks }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	c, err := s.store.Company(ctx, a.CompanyID)
	if err != nil {
		return nil, err
	}
	var product *Product
	// A product id that is no UUID cannot exist: BuildOffer reports it
	// missing without a query (PostgreSQL refuses a NUL byte with a 500).
	if req.Offer.ProductID != nil && IsUUID(*req.Offer.ProductID) {
		product, err = s.store.Product(ctx, a, LowerUUID(*req.Offer.ProductID))
		if err != nil && ErrorCode(err) != ENOTFOUND {
			return nil, err
		}
	}
	var o *Offer
	again := false
	err = decideAndApply("product", func() error {
		// The product was lowered below the offer since it was read: read
		// again, the offer is refused as if that PATCH had come first.
		if again {
			if product, err = s.store.Product(ctx, a, product.ID); err != nil {
				return err
			}
		}
		again = true
		if o, err = NewOffer(a, req, c, product, s.clock.Now()); err != nil {
			return err
		}
		return s.store.CreateOffer(answering(ctx, o), o)
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}

// NewOffer validates req against c's limits and builds the offer of
// product that CreateOffer stores, with its ids, created at now (the
// demo's setup stores it with its company, in one transaction).
func NewOffer(a Auth, req OfferRequest, c *Company, product *Product, now time.Time) (*Offer, error) {
	o, err := BuildOffer(req, c, product, now)
	if err != nil {
		return nil, err
	}
	o.ID, o.Environment, o.CreatedAt, o.UpdatedAt = NewID(), a.Environment, now, now
	for _, pc := range o.PaymentConfigurations {
		pc.ID, pc.OfferID, pc.CreatedAt, pc.UpdatedAt = NewID(), o.ID, now, now
	}
	o.Product.Company = c
	return o, nil
}

// Offer returns one of the caller's offers with its product, the product's
// company, and its configurations.
func (s *Catalog) Offer(ctx context.Context, a Auth, id string) (*Offer, error) {
	return s.store.Offer(ctx, a, id)
}

// Offers lists the caller's offers, newest first, up to
// MaxPerPageOfLargeItems a page.
func (s *Catalog) Offers(ctx context.Context, a Auth, p Page) ([]*Offer, int, error) {
	if err := p.ValidateUpTo(MaxPerPageOfLargeItems); err != nil {
		return nil, 0, err
	}
	os, total, err := s.store.Offers(ctx, a, p)
	if err != nil {
		return nil, 0, err
	}
	return os, total, s.withCompany(ctx, a, os...)
}

// withCompany sets the caller's company on the offers' products: their
// addresses carry its slug.
func (s *Catalog) withCompany(ctx context.Context, a Auth, os ...*Offer) error {
	if len(os) == 0 {
		return nil
	}
	c, err := s.store.Company(ctx, a.CompanyID)
	if err != nil {
		return err
	}
	for _, o := range os {
		o.Product.Company = c
	}
	return nil
}

// UpdateOffer changes an offer's name, availability, expiry or seats. A
// seat limit set on an offer that had none counts the seats already sold.
func (s *Catalog) UpdateOffer(ctx context.Context, a Auth, id string, f OfferFields) (*Offer, error) {
	var o *Offer
	err := decideAndApply("offer", func() error {
		var err error
		if o, err = s.store.Offer(ctx, a, id); err != nil {
			return err
		}
		u := OfferUpdate{Offer: o, Were: StateOf(o), SeatsWere: o.Seats, TakenWere: o.SeatsTaken}
		if o.Seats == nil && f.Seats != nil {
			// Offers without a limit keep no count: take it now.
			if o.SeatsTaken, u.MarkWere, err = s.store.SeatsSold(ctx, a, id); err != nil {
				return err
			}
			u.TakenWere = o.SeatsTaken
		}
		now := s.clock.Now()
		if err := o.Update(f, now); err != nil {
			return err
		}
		o.UpdatedAt = now
		return s.store.UpdateOffer(ctx, u)
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}
