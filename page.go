package parcela

import "fmt"

// Listing bounds. A listing of bills takes up to MaxPerPage items a page;
// one of products, offers or webhook deliveries up to MaxPerPageOfLargeItems.
// Pages stop at MaxPage so that the SQL OFFSET, (page−1)×per_page, stays
// below 10⁸: it fits a 32-bit integer on any engine, and no real listing
// reaches it (a hundred million items).
const (
	DefaultPerPage = 25
	MaxPerPage     = 1000
	MaxPage        = 100_000
)

// MaxPerPageOfLargeItems bounds a page of products, offers (each with its
// product) or webhook deliveries. Their items weigh up to about 160 KB of
// JSON each: a product's 10,000-character description and 16 KiB of
// metadata, markup written six bytes a character (\u003c), or a delivery's
// ListedAttempts latest attempts of up to 6 KiB each. A page of 1,000
// products held 78 MB to answer, and four at once 1.4 GB, within one
// company's rate limit. A bill weighs about 1 KB, so bills keep MaxPerPage.
const MaxPerPageOfLargeItems = 100

// Validate checks a requested page of bills: page in 1..MaxPage, per_page
// in 1..MaxPerPage. Beyond them it is a validation error naming the
// parameter.
func (p Page) Validate() error { return p.ValidateUpTo(MaxPerPage) }

// ValidateUpTo checks a requested page as Validate does, with per_page at
// most maxPerPage.
func (p Page) ValidateUpTo(maxPerPage int) error {
	var v Validation
	if p.Page < 1 {
		v.Add("page", "too_small", "must be at least 1")
	} else if p.Page > MaxPage {
		v.Add("page", "too_large", fmt.Sprintf("must be at most %d", MaxPage))
	}
	if p.PerPage < 1 {
		v.Add("per_page", "too_small", "must be at least 1")
	} else if p.PerPage > maxPerPage {
		v.Add("per_page", "too_large", fmt.Sprintf("must be at most %d", maxPerPage))
	}
	return v.Err()
}

// Offset is how many items precede the page; Validate bounds it.
func (p Page) Offset() int { return (p.Page - 1) * p.PerPage }
