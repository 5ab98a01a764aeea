package sqldb

import (
	"context"
	"database/sql"

	"parcela"
)

const cityColumns = `c.id, c.ibge_code, c.name, c.created_at, c.updated_at,
	s.id, s.ibge_code, s.name, s.acronym, s.created_at, s.updated_at`

// cityFields returns the scan destinations of cityColumns and the step that
// converts them once scanned.
func cityFields(c *parcela.City) ([]any, func()) {
	var cC, cU, sC, sU int64
	dests := []any{&c.ID, &c.IBGECode, &c.Name, &cC, &cU, &c.State.ID, &c.State.IBGECode, &c.State.Name, &c.State.Acronym, &sC, &sU}
	return dests, func() {
		c.CreatedAt, c.UpdatedAt = fromMS(cC), fromMS(cU)
		c.State.CreatedAt, c.State.UpdatedAt = fromMS(sC), fromMS(sU)
	}
}

const addressColumns = `a.id, a.zipcode, a.street, a.number, a.complement, a.neighborhood, a.created_at, a.updated_at, ` + cityColumns

// addressCity joins an address (aliased a) to its city and state.
const addressCity = ` JOIN cities c ON c.id = a.city_id JOIN states s ON s.id = c.state_id`

// addressFields returns the scan destinations of addressColumns and the
// step that converts them once scanned, so an address can share a row
// with its owner.
func addressFields(a *parcela.Address) ([]any, func()) {
	var complement sql.NullString
	var created, updated int64
	city, finishCity := cityFields(&a.City)
	dests := append([]any{&a.ID, &a.Zipcode, &a.Street, &a.Number, &complement, &a.Neighborhood, &created, &updated}, city...)
	return dests, func() {
		finishCity()
		a.Complement = nullString(complement)
		a.CreatedAt, a.UpdatedAt = fromMS(created), fromMS(updated)
	}
}

func address(ctx context.Context, r runner, id string) (*parcela.Address, error) {
	var a parcela.Address
	dests, finish := addressFields(&a)
	if err := r.queryRow(ctx, `SELECT `+addressColumns+` FROM addresses a`+addressCity+` WHERE a.id = ?`, id).Scan(dests...); err != nil {
		return nil, notFound(err, "address")
	}
	finish()
	return &a, nil
}

// City returns a municipality, with its state, by its IBGE code.
func (db *DB) City(ctx context.Context, ibgeCode string) (*parcela.City, error) {
	var c parcela.City
	dests, finish := cityFields(&c)
	err := db.reader.queryRow(ctx, `SELECT `+cityColumns+` FROM cities c JOIN states s ON s.id = c.state_id WHERE c.ibge_code = ?`, ibgeCode).Scan(dests...)
	if err != nil {
		return nil, failed("read city", notFound(err, "city"))
	}
	finish()
	return &c, nil
}

// insertAddress stores an address whose City was read.
func insertAddress(ctx context.Context, p *pipeline, a *parcela.Address) error {
	return p.exec(ctx, nil, `INSERT INTO addresses (id, zipcode, street, number, complement, neighborhood, city_id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, a.ID, a.Zipcode, a.Street, a.Number, a.Complement, a.Neighborhood, a.City.ID, ms64(a.CreatedAt), ms64(a.UpdatedAt))
}

// CountCities reports how many municipalities and states are loaded.
func (db *DB) CountCities(ctx context.Context) (cities, states int, err error) {
	if err = db.reader.queryRow(ctx, `SELECT COUNT(*) FROM cities`).Scan(&cities); err != nil {
		return 0, 0, failed("count cities", err)
	}
	err = db.reader.queryRow(ctx, `SELECT COUNT(*) FROM states`).Scan(&states)
	return cities, states, failed("count states", err)
}
