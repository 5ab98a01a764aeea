package sqldb

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/csv"
	"fmt"
	"strconv"

	"github.com/google/uuid"
)

//go:embed data/ibge-municipalities.csv
var municipalitiesCSV []byte

// referenceNamespace makes reference-data ids deterministic, so the same
// city has the same id in every database and every environment.
var referenceNamespace = uuid.MustParse("6b0f3a0e-9d53-4a8e-9f0b-2f5d1c1e7a10")

// referenceCreatedAt is 2025-01-01T00:00:00-03:00, the reference data's date.
const referenceCreatedAt = int64(1735700400000)

func referenceID(kind, key string) string {
	return uuid.NewSHA1(referenceNamespace, []byte(kind+":"+key)).String()
}

// ProductKinds and ProductShifts are the names a product may use.
var (
	ProductKinds  = []string{"course", "event", "mentorship", "ebook", "workshop", "other"}
	ProductShifts = []string{"morning", "afternoon", "evening", "online"}
)

type municipality struct {
	code, name, stateAcronym, stateName string
	stateCode                           int
}

func parseMunicipalities() ([]municipality, error) {
	rows, err := csv.NewReader(bytes.NewReader(municipalitiesCSV)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("ibge csv: %w", err)
	}
	out := make([]municipality, 0, len(rows))
	for i, r := range rows {
		if i == 0 {
			continue // header
		}
		if len(r) != 5 {
			return nil, fmt.Errorf("ibge csv line %d: %d fields", i+1, len(r))
		}
		sc, err := strconv.Atoi(r[4])
		if err != nil {
			return nil, fmt.Errorf("ibge csv line %d: state code %q", i+1, r[4])
		}
		out = append(out, municipality{code: r[0], name: r[1], stateAcronym: r[2], stateName: r[3], stateCode: sc})
	}
	return out, nil
}

// seed loads reference data once; a database that has it only gets the
// municipalities and names the IBGE file gained since (refreshCities).
func (db *DB) seed(ctx context.Context) error {
	var n int
	if err := db.write.QueryRowContext(ctx, `SELECT COUNT(*) FROM cities`).Scan(&n); err != nil {
		return err
	}
	ms, err := parseMunicipalities()
	if err != nil {
		return err
	}
	if n > 0 {
		return failed("refresh reference data", db.refreshCities(ctx, ms))
	}
	return failed("seed reference data", db.inTx(ctx, func(tx *Tx) error {
		// Reference rows carry a fixed date so every database shows the same.
		now := referenceCreatedAt
		for _, k := range ProductKinds {
			if _, err := tx.r.exec(ctx, `INSERT INTO kinds (id, name, created_at, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`,
				referenceID("kind", k), k, now, now); err != nil {
				return err
			}
		}
		for _, s := range ProductShifts {
			if _, err := tx.r.exec(ctx, `INSERT INTO shifts (id, name, created_at, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`,
				referenceID("shift", s), s, now, now); err != nil {
				return err
			}
		}
		seen := map[int]bool{}
		for _, m := range ms {
			if seen[m.stateCode] {
				continue
			}
			seen[m.stateCode] = true
			if _, err := tx.r.exec(ctx, `INSERT INTO states (id, ibge_code, name, acronym, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
				referenceID("state", strconv.Itoa(m.stateCode)), m.stateCode, m.stateName, m.stateAcronym, now, now); err != nil {
				return err
			}
		}
		// Multi-row inserts keep the 5,571 cities to a few round trips.
		const batch = 500
		for i := 0; i < len(ms); i += batch {
			part := ms[i:min(i+batch, len(ms))]
			var q bytes.Buffer
			q.WriteString("INSERT INTO cities (id, ibge_code, name, state_id, created_at, updated_at) VALUES ")
			args := make([]any, 0, len(part)*6)
			for j, m := range part {
				if j > 0 {
					q.WriteString(", ")
				}
				q.WriteString("(?, ?, ?, ?, ?, ?)")
				args = append(args, referenceID("city", m.code), m.code, m.name, referenceID("state", strconv.Itoa(m.stateCode)), now, now)
			}
			q.WriteString(" ON CONFLICT DO NOTHING")
			if _, err := tx.r.exec(ctx, q.String(), args...); err != nil {
				return fmt.Errorf("seed cities: %w", err)
			}
		}
		return nil
	}))
}

// refreshCities brings a seeded database up to the embedded IBGE file: new
// municipalities are added and renamed ones take their new names (ids and
// dates stay, so every database shows the same rows). An up-to-date
// database costs one read.
func (db *DB) refreshCities(ctx context.Context, ms []municipality) error {
	rows, err := db.write.QueryContext(ctx, "SELECT ibge_code, name FROM cities")
	if err != nil {
		return err
	}
	names := map[string]string{}
	for rows.Next() {
		var code, name string
		if err := rows.Scan(&code, &name); err != nil {
			rows.Close()
			return err
		}
		names[code] = name
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	var changed []municipality
	for _, m := range ms {
		if name, ok := names[m.code]; !ok || name != m.name {
			changed = append(changed, m)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	return db.inTx(ctx, func(tx *Tx) error {
		for _, m := range changed {
			if _, err := tx.r.exec(ctx, `INSERT INTO cities (id, ibge_code, name, state_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
				ON CONFLICT (id) DO UPDATE SET name = excluded.name`,
				referenceID("city", m.code), m.code, m.name, referenceID("state", strconv.Itoa(m.stateCode)), referenceCreatedAt, referenceCreatedAt); err != nil {
				return fmt.Errorf("refresh city %s: %w", m.code, err)
			}
		}
		return nil
	})
}
