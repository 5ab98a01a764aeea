package sqldb

import (
	"context"
	"database/sql"
	"errors"

	"parcela"
)

const addressSelect = `SELECT a.id, a.zipcode, a.street, a.number, a.complement, a.neighborhood, a.created_at, a.updated_at,
	c.id, c.ibge_code, c.name, c.created_at, c.updated_at,
	s.id, s.ibge_code, s.name, s.acronym, s.created_at, s.updated_at
	FROM addresses a JOIN cities c ON c.id = a.city_id JOIN states s ON s.id = c.state_id`

func scanAddress(row rowScanner) (*parcela.Address, error) {
	var a parcela.Address
	var complement sql.NullString
	var aC, aU, cC, cU, sC, sU int64
	err := row.Scan(&a.ID, &a.Zipcode, &a.Street, &a.Number, &complement, &a.Neighborhood, &aC, &aU,
		&a.City.ID, &a.City.IBGECode, &a.City.Name, &cC, &cU,
		&a.City.State.ID, &a.City.State.IBGECode, &a.City.State.Name, &a.City.State.Acronym, &sC, &sU)
	if err != nil {
		return nil, err
	}
	a.Complement = nullString(complement)
	a.CreatedAt, a.UpdatedAt = fromMS(aC), fromMS(aU)
	a.City.CreatedAt, a.City.UpdatedAt = fromMS(cC), fromMS(cU)
	a.City.State.CreatedAt, a.City.State.UpdatedAt = fromMS(sC), fromMS(sU)
	return &a, nil
}

func (db *DB) address(ctx context.Context, q querier, id string) (*parcela.Address, error) {
	a, err := scanAddress(q.QueryRowContext(ctx, db.rebind(addressSelect+` WHERE a.id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, parcela.NotFound("address")
	}
	return a, err
}

// cityByIBGE loads a municipality with its state.
func cityByIBGE(ctx context.Context, tx *Tx, code string) (*parcela.City, error) {
	var c parcela.City
	var cC, cU, sC, sU int64
	err := tx.queryRow(ctx, `SELECT c.id, c.ibge_code, c.name, c.created_at, c.updated_at,
		s.id, s.ibge_code, s.name, s.acronym, s.created_at, s.updated_at
		FROM cities c JOIN states s ON s.id = c.state_id WHERE c.ibge_code = ?`, code).Scan(
		&c.ID, &c.IBGECode, &c.Name, &cC, &cU, &c.State.ID, &c.State.IBGECode, &c.State.Name, &c.State.Acronym, &sC, &sU)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, parcela.NotFound("city")
	} else if err != nil {
		return nil, err
	}
	c.CreatedAt, c.UpdatedAt = fromMS(cC), fromMS(cU)
	c.State.CreatedAt, c.State.UpdatedAt = fromMS(sC), fromMS(sU)
	return &c, nil
}

// insertAddress stores an address whose City.IBGECode is set, filling the
// city and state from the IBGE table.
func insertAddress(ctx context.Context, tx *Tx, a *parcela.Address) error {
	city, err := cityByIBGE(ctx, tx, a.City.IBGECode)
	if err != nil {
		return &parcela.Error{Code: parcela.EINVALID, Message: "address.city_ibge_code is not a known IBGE municipality",
			Fields: []parcela.FieldError{{Field: "address.city_ibge_code", Code: "not_found", Message: "is not a known IBGE municipality"}}}
	}
	a.City = *city
	a.ID = newID()
	a.CreatedAt, a.UpdatedAt = tx.Now, tx.Now
	_, err = tx.exec(ctx, `INSERT INTO addresses (id, zipcode, street, number, complement, neighborhood, city_id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, a.ID, a.Zipcode, a.Street, a.Number, a.Complement, a.Neighborhood, a.City.ID, ms64(a.CreatedAt), ms64(a.UpdatedAt))
	return err
}

// CountCities reports how many municipalities and states are loaded.
func (db *DB) CountCities(ctx context.Context) (cities, states int, err error) {
	if err = db.queryRow(ctx, `SELECT COUNT(*) FROM cities`).Scan(&cities); err != nil {
		return
	}
	err = db.queryRow(ctx, `SELECT COUNT(*) FROM states`).Scan(&states)
	return
}
