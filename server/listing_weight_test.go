package server_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"parcela"
	"parcela/sqldb"
)

// A page of products, offers or webhook deliveries holds at most
// MaxPerPageOfLargeItems items: a product filled to every limit writes
// about 160 KB of JSON (markup is six bytes a character), and a page of
// 1,000 of them held 78 MB and more in memory to answer, a few at once
// gigabytes, within one company's rate limit. Bills keep pages of 1,000.
func TestHeavyListingsArePagedByAHundred(t *testing.T) {
	b := setup(t, sqldb.SQLite)
	a := parcela.Auth{CompanyID: b.company.ID, Environment: parcela.Sandbox}
	s := func(v string) *string { return &v }
	days, amount := 1, int64(1000)
	desc := strings.Repeat("<", 10000)
	meta := json.RawMessage(`{"k":"` + strings.Repeat("<", 16<<10-8) + `"}`)
	for range parcela.MaxPerPageOfLargeItems + 1 {
		if _, err := b.app.Catalog.CreateProduct(t.Context(), a, parcela.ProductInput{
			Name: s(strings.Repeat("<", 255)), FullAmountCents: &amount, Description: &desc,
			Kind: s("course"), AccessPeriod: s("days"), DurationInDays: &days, Metadata: &meta}); err != nil {
			t.Fatal(err)
		}
	}

	most := strconv.Itoa(parcela.MaxPerPageOfLargeItems)
	page := b.call("GET", "/external_api/v1/products?per_page="+most, nil).want(t, 200)
	if n := len(page.JSON(t)["results"].([]any)); n != parcela.MaxPerPageOfLargeItems {
		t.Fatalf("a full page holds %d products", n)
	}
	// The bound the API reference states: about 160 KB a product.
	if size := len(page.Body); size > parcela.MaxPerPageOfLargeItems*165_000 {
		t.Errorf("a page of the heaviest products is %d bytes", size)
	}
	t.Logf("a page of %s of the heaviest products: %.1f MB", most, float64(len(page.Body))/1e6)

	over := strconv.Itoa(parcela.MaxPerPageOfLargeItems + 1)
	for _, path := range []string{"/products", "/offers", "/webhook_deliveries"} {
		r := b.call("GET", "/external_api/v1"+path+"?per_page="+over, nil).want(t, 422)
		errs, _ := r.JSON(t)["errors"].([]any)
		if len(errs) != 1 || errs[0].(map[string]any)["field"] != "per_page" ||
			!strings.Contains(errs[0].(map[string]any)["message"].(string), most) {
			t.Errorf("%s?per_page=%s: %s", path, over, r.Body)
		}
	}
	b.call("GET", "/external_api/v1/bills?per_page=1000", nil).want(t, 200)
}
