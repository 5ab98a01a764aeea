package parcela

import "fmt"

// Listing bounds. Every listing (products, offers, bills, deliveries) takes
// up to MaxPerPage items a page. Pages stop at MaxPage so that the SQL
// OFFSET, (page−1)×per_page, stays below 10⁸: it fits a 32-bit integer on
// any engine, and no real listing reaches it (a hundred million items).
const (
	DefaultPerPage = 25
	MaxPerPage     = 1000
	MaxPage        = 100_000
)

// Validate checks a requested page: page in 1..MaxPage, per_page in
// 1..MaxPerPage. Beyond them it is a validation error naming the parameter.
func (p Page) Validate() error {
	var v Validation
	if p.Page < 1 {
		v.Add("page", "too_small", "must be at least 1")
	} else if p.Page > MaxPage {
		v.Add("page", "too_large", fmt.Sprintf("must be at most %d", MaxPage))
	}
	if p.PerPage < 1 {
		v.Add("per_page", "too_small", "must be at least 1")
	} else if p.PerPage > MaxPerPage {
		v.Add("per_page", "too_large", fmt.Sprintf("must be at most %d", MaxPerPage))
	}
	return v.Err()
}

// Offset is how many items precede the page; Validate bounds it.
func (p Page) Offset() int { return (p.Page - 1) * p.PerPage }
