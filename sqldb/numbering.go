package sqldb

import "context"

// numberBlock hands out unique numbers from blocks reserved in the counters
// table, so the hot charge transaction never waits on a counter row lock.
type numberBlock struct {
	next, end int64
}

const numberBlockSize = 1000

// NextNossoNumero returns a never-repeated boleto number. It must be called
// outside any transaction of this DB (on SQLite the writer is one connection).
func (db *DB) NextNossoNumero(ctx context.Context) (int64, error) {
	nb := &db.numbers
	db.numbersMu.Lock()
	defer db.numbersMu.Unlock()
	if nb.next >= nb.end {
		var end int64
		w := db.writer()
		err := w.queryRow(ctx, `UPDATE counters SET value = value + ? WHERE name = 'nosso_numero' RETURNING value`, int64(numberBlockSize)).Scan(&end)
		if err != nil {
			return 0, failed("reserve boleto numbers", err)
		}
		nb.next, nb.end = end-numberBlockSize+1, end+1
	}
	n := nb.next
	nb.next++
	return n, nil
}
