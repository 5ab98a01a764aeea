-- +goose Up
-- An offer's orders, for the count of its seats sold (sqldb/offer.go,
-- seatsSold), which a PATCH giving the offer a seat limit runs inside its
-- write transaction: without it the count read every order of the
-- company in the environment (orders_owner), and one company with a
-- million orders held SQLite's single writer, and every other company's
-- writes behind it, for as long as a PATCH per request took.
CREATE INDEX orders_offer ON orders (offer_id);

-- +goose Down
DROP INDEX orders_offer;
