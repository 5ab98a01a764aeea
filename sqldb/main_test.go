package sqldb_test

import (
	"testing"

	"parcela/sqldb/sqldbtest"
)

func TestMain(m *testing.M) { sqldbtest.Main(m) }
