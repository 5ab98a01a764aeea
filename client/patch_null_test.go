package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/oapi-codegen/nullable"

	"parcela/client"
)

// The PATCH fields whose null removes a value (an offer's expiry and seat
// limit, a product's dates and banner) tell null from a field left out: with
// pointers, nil was left out and the value could not be removed.
func TestPatchRemovesWithNull(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		c, err := client.New(b.sandbox.URL, b.token)
		if err != nil {
			t.Fatal(err)
		}
		offer, _ := sale(t, ctx, c)
		set, err := c.UpdateOfferWithResponse(ctx, offer.Id, nil, client.OfferUpdateRequest{Offer: client.OfferUpdate{
			ExpiresAt: nullable.NewNullableWithValue(start.Add(30 * 24 * time.Hour)), Seats: nullable.NewNullableWithValue(int64(10)),
		}})
		if err != nil || set.JSON200.ExpiresAt == nil || set.JSON200.Seats == nil {
			t.Fatalf("setting expiry and seats: %v", err)
		}
		kept, err := c.UpdateOfferWithResponse(ctx, offer.Id, nil, client.OfferUpdateRequest{Offer: client.OfferUpdate{Name: client.Ptr("Turma de fevereiro")}})
		if err != nil || kept.JSON200.ExpiresAt == nil || kept.JSON200.Seats == nil {
			t.Fatalf("a PATCH without them removed expiry or seats: %v", err)
		}
		removed, err := c.UpdateOfferWithResponse(ctx, offer.Id, nil, client.OfferUpdateRequest{Offer: client.OfferUpdate{
			ExpiresAt: nullable.NewNullNullable[time.Time](), Seats: nullable.NewNullNullable[int64](),
		}})
		if err != nil {
			t.Fatal(err)
		}
		if removed.JSON200.ExpiresAt != nil || removed.JSON200.Seats != nil {
			t.Errorf("after removing: expires_at %v, seats %v", removed.JSON200.ExpiresAt, removed.JSON200.Seats)
		}

		product, err := c.CreateProductWithResponse(ctx, nil, client.ProductCreateRequest{Product: client.ProductCreateInput{
			Name: "Curso", FullAmountCents: 50000, BannerUrl: nullable.NewNullableWithValue("https://cdn.example.com/banner.png"),
		}})
		if err != nil || product.JSON201.BannerUrl == nil {
			t.Fatalf("product with a banner: %v", err)
		}
		updated, err := c.UpdateProductWithResponse(ctx, product.JSON201.Id, nil, client.ProductUpdateRequest{Product: client.ProductInput{
			BannerUrl: nullable.NewNullNullable[string](),
		}})
		if err != nil || updated.JSON200.BannerUrl != nil {
			t.Errorf("removing the banner: %v", err)
		}
	})
}
