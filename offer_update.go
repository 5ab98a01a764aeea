package parcela

import (
	"fmt"
	"time"
)

// Update applies a PATCH of an offer at now: its name, availability,
// expiry, seats or exclude_from_campaign; amount, product and payment
// configurations are fixed. o.SeatsTaken must be the
// seats sold when a limit is being set.
func (o *Offer) Update(f OfferFields, now time.Time) error {
	var v Validation
	if f.Name != nil {
		switch o.Name = TrimText(*f.Name); {
		case o.Name == "":
			v.Add("offer.name", "required", "must not be empty")
		case TooLong(o.Name, 255):
			v.Add("offer.name", "too_long", "must be at most 255 characters")
		default:
			checkText(&v, "offer.name", o.Name, SingleLine)
		}
	}
	if f.Availability != nil {
		if o.Availability = *f.Availability; o.Availability != "enabled" && o.Availability != "disabled" {
			v.Add("offer.availability", "invalid", "must be enabled or disabled")
		}
	}
	if f.ClearExpiresAt {
		o.ExpiresAt = nil
	}
	if f.ClearSeats {
		// Without a limit no seat is counted (charges of an unlimited
		// offer stay off its row): kept, the last count showed for ever,
		// whatever was charged or canceled after. A limit set again
		// counts the sales.
		o.Seats, o.SeatsTaken = nil, 0
	}
	if f.ExpiresAt != nil {
		f.ExpiresAt = toMillisecond(f.ExpiresAt)
		if o.ExpiresAt = f.ExpiresAt; !f.ExpiresAt.After(now) {
			v.Add("offer.expires_at", "in_past", "must be in the future")
		} else {
			checkInstant(&v, "offer.expires_at", f.ExpiresAt)
		}
	}
	if f.Seats != nil {
		if o.Seats = f.Seats; *f.Seats <= 0 {
			v.Add("offer.seats", "too_small", "must be greater than 0")
		} else if *f.Seats < o.SeatsTaken {
			v.Add("offer.seats", "too_small", fmt.Sprintf("must be at least the %d seats already taken", o.SeatsTaken))
		} else {
			checkCount(&v, "offer.seats", f.Seats, 1, MaxSeats)
		}
	}
	if x := f.excludeFromCampaign(&v); x != nil {
		o.ExcludeFromCampaign = *x
	}
	if f.AmountCents != nil {
		v.Add("offer.amount_cents", "not_allowed", "cannot be changed; create a new offer")
	}
	if f.ProductID != nil {
		v.Add("offer.product_id", "not_allowed", "cannot be changed; create a new offer")
	}
	if f.PaymentConfigurations != nil {
		v.Add("offer.payment_configurations", "not_allowed", "cannot be changed; create a new offer")
	}
	return v.Err()
}
