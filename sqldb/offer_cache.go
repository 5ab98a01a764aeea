package sqldb

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"parcela"
)

// An offer read with its company, product and configurations is kept by
// id with the company's catalog version it was read at, and served again,
// with its sold seats read fresh, while a narrow statement finds that
// version unchanged. Triggers move the version with every change to what
// the wide read returns (migration 00020, whichever process or instance
// writes), so a kept offer is exactly what the wide read would return in
// the narrow statement's snapshot: the offer page, an order's creation and
// its charge read three tables by key instead of nine.
//
// A kept offer is never handed out: each read gets its own copy, which
// callers may change (cloneOffer).
type offerCache struct {
	mu    sync.Mutex
	kept  map[string]keptOffer
	bytes int // the kept offers' keptSize
}

type keptOffer struct {
	version int64
	offer   *parcela.Offer
	size    int
}

// maxKeptBytes bounds the cache by the kept offers' estimated sizes: a
// product's description (10,000 characters) and metadata (16 KB) make an
// offer from 3 to about 60 KB, so a count of offers would not bound the
// memory. When full it starts again empty, which costs each offer one wide
// read.
const maxKeptBytes = 16 << 20

// keptSize estimates what a kept offer holds: its product's free texts,
// and a fixed share for the rest (ids, names, rates, configurations).
func keptSize(o *parcela.Offer) int {
	n := 2048 + 512*len(o.PaymentConfigurations)
	if p := o.Product; p != nil {
		n += len(p.Metadata)
		for _, s := range []*string{p.Description, p.BannerURL} {
			if s != nil {
				n += len(*s)
			}
		}
	}
	return n
}

func (c *offerCache) get(id string, version int64) *parcela.Offer {
	c.mu.Lock()
	k, ok := c.kept[id]
	c.mu.Unlock()
	if !ok || k.version != version {
		return nil
	}
	return cloneOffer(k.offer)
}

// put keeps o as read at version, unless a later version is kept: versions
// only grow, and a read that started earlier may finish later.
func (c *offerCache) put(o *parcela.Offer, version int64) {
	clone, size := cloneOffer(o), keptSize(o)
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.kept[o.ID]
	if ok && k.version > version {
		return
	}
	if ok {
		c.bytes -= k.size
	}
	if c.kept == nil || c.bytes+size > maxKeptBytes {
		c.kept, c.bytes = make(map[string]keptOffer), 0
	}
	c.kept[o.ID] = keptOffer{version: version, offer: clone, size: size}
	c.bytes += size
}

// offerStatements are an offer read's two forms: the wide one (an
// offerPageQuery, whose head leads with the company's catalog version) and
// the narrow one, which finds the same offer under the same conditions and
// returns its id, the version and its sold seats, from the first
// versionArgs of the wide one's arguments.
type offerStatements struct {
	wide, narrow string
	versionArgs  int
}

// newOfferStatements builds both forms of an offer read whose company (co)
// and offer (o) match where, with its configurations by offerID (a
// placeholder or subquery whose arguments follow where's).
func newOfferStatements(where, offerID string, whereArgs int) offerStatements {
	return offerStatements{
		wide: offerPageQuery(where, offerID),
		// The product's join is the wide one's: an offer whose product is
		// not of its company and environment is not found by either.
		narrow: `SELECT o.id, co.catalog_version, o.seats_taken FROM companies co JOIN offers o ON o.company_id = co.id
			JOIN products p ON p.id = o.product_id AND p.company_id = o.company_id AND p.environment = o.environment
			WHERE ` + where,
		versionArgs: whereArgs,
	}
}

// offerVersion is what the narrow statement returns.
type offerVersion struct {
	id      string
	version int64
	taken   int
}

func (v *offerVersion) scan(row rowScanner) error { return row.Scan(&v.id, &v.version, &v.taken) }

// cachedOffer reads an offer through the cache: the narrow statement, then
// the kept copy or, if none is kept at that version, the wide one. No
// offer is sql.ErrNoRows.
func (db *DB) cachedOffer(ctx context.Context, r runner, s offerStatements, args ...any) (*parcela.Offer, error) {
	var v offerVersion
	if err := v.scan(r.queryRow(ctx, s.narrow, args[:s.versionArgs]...)); err != nil {
		return nil, err
	}
	return db.offerAt(ctx, r, s, v, args...)
}

// offerAt is the offer the narrow statement found at v: the kept copy
// with its seats as v counts them, or the wide read.
func (db *DB) offerAt(ctx context.Context, r runner, s offerStatements, v offerVersion, args ...any) (*parcela.Offer, error) {
	if o := db.offers.get(v.id, v.version); o != nil {
		o.SeatsTaken = v.taken
		return o, nil
	}
	var version int64
	o, err := collectOfferPage(ctx, r, []any{&version}, s.wide, args...)
	if err != nil {
		return nil, err
	}
	db.offers.put(o, version)
	return o, nil
}

// cloneOffer copies an offer with its product, company and
// configurations, sharing nothing a caller could change
// (TestCloneOfferSharesNothing). Rates and times are values.
func cloneOffer(o *parcela.Offer) *parcela.Offer {
	c := *o
	c.ExpiresAt, c.Seats = clonePtr(o.ExpiresAt), clonePtr(o.Seats)
	if o.Product != nil {
		p := *o.Product
		p.Description, p.DurationInDays, p.DurationInHours = clonePtr(p.Description), clonePtr(p.DurationInDays), clonePtr(p.DurationInHours)
		p.StartDate, p.EndDate, p.BannerURL = clonePtr(p.StartDate), clonePtr(p.EndDate), clonePtr(p.BannerURL)
		p.Metadata = json.RawMessage(slices.Clone([]byte(p.Metadata)))
		if p.Company != nil {
			co := *p.Company
			co.Email, co.Phone = clonePtr(co.Email), clonePtr(co.Phone)
			if co.Address != nil {
				a := *co.Address
				a.Complement = clonePtr(a.Complement)
				co.Address = &a
			}
			p.Company = &co
		}
		c.Product = &p
	}
	if o.PaymentConfigurations != nil {
		c.PaymentConfigurations = make([]*parcela.PaymentConfiguration, len(o.PaymentConfigurations))
		for i, pc := range o.PaymentConfigurations {
			cp := *pc
			cp.FinancedType, cp.MaxDownPaymentInstallments, cp.DownPaymentType = clonePtr(pc.FinancedType), clonePtr(pc.MaxDownPaymentInstallments), clonePtr(pc.DownPaymentType)
			cp.PaymentMethods, cp.AllowedDownPaymentMethods = slices.Clone(pc.PaymentMethods), slices.Clone(pc.AllowedDownPaymentMethods)
			c.PaymentConfigurations[i] = &cp
		}
	}
	return &c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
