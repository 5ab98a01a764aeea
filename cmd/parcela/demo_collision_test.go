package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// A demo whose transaction still deadlocks after the store's retries (the
// store answers that 409 conflict since it stopped being a 500) is a
// failure to set it up, said as one: the demo read every conflict as a
// racing start's company, so `parcela demo` on an empty database said it
// "already has a company", and `serve --demo` served without the demo
// it announced was there.
func TestDemoThatKeptCollidingIsNoCompanyTaken(t *testing.T) {
	t.Parallel()
	dsn := freshPostgres(t)
	vars := env(map[string]string{"PARCELA_DATABASE_URL": dsn})
	if err := run(context.Background(), []string{"migrate"}, vars, &syncBuffer{}, &syncBuffer{}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, `CREATE FUNCTION collide() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01'; END $$;
		CREATE TRIGGER collide BEFORE INSERT ON companies FOR EACH ROW EXECUTE FUNCTION collide()`); err != nil {
		t.Fatal(err)
	}
	err = run(ctx, []string{"demo"}, vars, &syncBuffer{}, &syncBuffer{})
	if err == nil || errors.Is(err, errDemoTaken) || !strings.Contains(err.Error(), "colliding") {
		t.Errorf("a demo that kept colliding: %v", err)
	}
}
