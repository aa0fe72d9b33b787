package load_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx", for reading the built data

	"github.com/storbench/storbench/internal/engine"
	_ "github.com/storbench/storbench/internal/engine/mysql"
	_ "github.com/storbench/storbench/internal/engine/postgres"
	_ "github.com/storbench/storbench/internal/engine/sqlite"
	"github.com/storbench/storbench/internal/load"
	"github.com/storbench/storbench/internal/testsupport/mariadbtest"
	"github.com/storbench/storbench/internal/testsupport/pgtest"
	"github.com/storbench/storbench/internal/tpcc"
)

// fingerprint are figures of a freshly built database that the generator alone
// decides (the load's timestamps aside) and that every engine stores the same way:
// row counts and sums of integers and text lengths. Money is left out: SQLite keeps
// it in cents.
var fingerprint = []struct{ name, query string }{
	{"items", "SELECT count(*), sum(i_im_id), sum(length(i_data)) FROM item"},
	{"warehouses", "SELECT count(*), sum(length(w_name)), sum(length(w_zip)) FROM warehouse"},
	{"districts", "SELECT count(*), sum(d_next_o_id), sum(length(d_city)) FROM district"},
	{"customers", "SELECT count(*), sum(c_payment_cnt), sum(length(c_last) + length(c_data)) FROM customer"},
	{"bad credit", "SELECT count(*), 0, 0 FROM customer WHERE c_credit = 'BC'"},
	{"history", "SELECT count(*), sum(h_c_id), sum(length(h_data)) FROM history"},
	{"orders", "SELECT count(*), sum(o_ol_cnt), sum(o_c_id) FROM orders"},
	{"undelivered orders", "SELECT count(*), 0, 0 FROM orders WHERE o_carrier_id IS NULL"},
	{"new orders", "SELECT count(*), sum(no_o_id), 0 FROM new_order"},
	{"order lines", "SELECT count(*), sum(ol_quantity), sum(ol_i_id) FROM order_line"},
	{"stock", "SELECT count(*), sum(s_quantity), sum(length(s_data)) FROM stock"},
}

// TestSameDataOnEveryEngine builds 1 warehouse with one seed on PostgreSQL, MariaDB
// and SQLite and compares the databases' fingerprints. None indexes history: an index
// there costs every Payment and serves only consistency check 10, which aggregates
// history in one pass instead.
func TestSameDataOnEveryEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and MariaDB")
	}
	ctx := t.Context()
	pg := pgtest.Start(t)
	my := mariadbtest.Start(t)
	myCfg, err := mysql.ParseDSN(my.DSN)
	if err != nil {
		t.Fatal(err)
	}
	sqlitePath := filepath.Join(t.TempDir(), "tpcc.db")
	engines := []struct{ name, dsn, driver, driverDSN, historyIndexes string }{
		{"postgres", pg.DSN("tpcc"), "pgx", pg.DSN("tpcc"),
			"SELECT count(*) FROM pg_indexes WHERE tablename = 'history'"},
		{"mariadb", my.URL, "mysql", myCfg.FormatDSN(),
			"SELECT count(*) FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 'history'"},
		{"sqlite", "sqlite://" + sqlitePath, "sqlite", sqlitePath,
			"SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'history'"},
	}
	got := map[string][][3]int64{}
	for _, e := range engines {
		db, err := engine.OpenOrCreate(ctx, e.dsn)
		if err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		_, err = load.Build(ctx, db, load.Options{Warehouses: 1, Workers: 2, Seed: 42, Version: "test"})
		db.Close()
		if err != nil {
			t.Fatalf("%s: build: %v", e.name, err)
		}
		raw, err := sql.Open(e.driver, e.driverDSN)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fingerprint {
			var v [3]sql.NullInt64
			if err := raw.QueryRowContext(ctx, f.query).Scan(&v[0], &v[1], &v[2]); err != nil {
				t.Fatalf("%s: %s: %v", e.name, f.name, err)
			}
			got[e.name] = append(got[e.name], [3]int64{v[0].Int64, v[1].Int64, v[2].Int64})
		}
		var n int
		if err := raw.QueryRowContext(ctx, e.historyIndexes).Scan(&n); err != nil {
			t.Fatalf("%s: history indexes: %v", e.name, err)
		}
		if n != 0 {
			t.Errorf("%s: history has %d index rows in the catalogue, want none", e.name, n)
		}
		raw.Close()
	}
	for i, f := range fingerprint {
		want := got["postgres"][i]
		if want[0] == 0 {
			t.Errorf("%s: no rows on postgres", f.name)
		}
		for _, e := range engines[1:] {
			if g := got[e.name][i]; g != want {
				t.Errorf("%s: %s %v, postgres %v", f.name, e.name, g, want)
			}
		}
	}
}

// TestBuildSeed: builds without a seed draw one, so two of them have different data
// and C-Loads to pick C-Run against; the seed and C-Load are recorded, and a given
// seed reproduces its C-Load.
func TestBuildSeed(t *testing.T) {
	ctx := context.Background()
	build := func(seed uint64) engine.BuildInfo {
		t.Helper()
		db, err := engine.OpenOrCreate(ctx, "sqlite://"+filepath.Join(t.TempDir(), "tpcc.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		sum, err := load.Build(ctx, db, load.Options{Warehouses: 1, Workers: 2, Seed: seed, Version: "test"})
		if err != nil {
			t.Fatalf("build with seed %d: %v", seed, err)
		}
		info, err := db.BuildInfo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.Seed != sum.Seed || info.CLoad != sum.CLoad || info.CLoad != tpcc.LoadConstants(info.Seed).CLast {
			t.Errorf("seed %d: summary seed %d C-Load %d, recorded %+v; want C-Load %d of the recorded seed",
				seed, sum.Seed, sum.CLoad, info, tpcc.LoadConstants(info.Seed).CLast)
		}
		return info
	}
	a, b := build(0), build(0)
	if a.Seed == 0 || b.Seed == 0 || a.Seed == b.Seed {
		t.Errorf("two builds without a seed recorded seeds %d and %d, want two drawn at random", a.Seed, b.Seed)
	}
	if c := build(a.Seed); c.Seed != a.Seed || c.CLoad != a.CLoad {
		t.Errorf("a build given seed %d recorded %+v, want the C-Load %d of the first build", a.Seed, c, a.CLoad)
	}
}

// TestBuildRecordBeforeSchemas: every engine records the build's schema, and still
// reads a build record written before builds named their schema (no build_schema
// column), as a schema not recorded, with its seed and C-Load.
func TestBuildRecordBeforeSchemas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and MariaDB")
	}
	ctx := t.Context()
	pg := pgtest.Start(t)
	my := mariadbtest.Start(t)
	myCfg, err := mysql.ParseDSN(my.DSN)
	if err != nil {
		t.Fatal(err)
	}
	sqlitePath := filepath.Join(t.TempDir(), "tpcc.db")
	for _, e := range []struct{ name, dsn, driver, driverDSN string }{
		{"postgres", pg.DSN("tpcc"), "pgx", pg.DSN("tpcc")},
		{"mariadb", my.URL, "mysql", myCfg.FormatDSN()},
		{"sqlite", "sqlite://" + sqlitePath, "sqlite", sqlitePath},
	} {
		db, err := engine.OpenOrCreate(ctx, e.dsn)
		if err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		defer db.Close()
		sum, err := load.Build(ctx, db, load.Options{Warehouses: 1, Workers: 2, Seed: 5, Version: "test", Schema: "hammerdb"})
		if err != nil {
			t.Fatalf("%s: build: %v", e.name, err)
		}
		if info, err := db.BuildInfo(ctx); err != nil || info.Schema != "hammerdb" || info.CLoad != sum.CLoad {
			t.Errorf("%s: BuildInfo() = %+v, %v; want schema hammerdb, C-Load %d", e.name, info, err, sum.CLoad)
		}
		raw, err := sql.Open(e.driver, e.driverDSN)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.ExecContext(ctx, "ALTER TABLE storbench_build DROP COLUMN build_schema"); err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		raw.Close()
		if info, err := db.BuildInfo(ctx); err != nil || info.Schema != "" || info.Seed != 5 || info.CLoad != sum.CLoad {
			t.Errorf("%s: BuildInfo() of a record without build_schema = %+v, %v; want schema \"\", seed 5, C-Load %d", e.name, info, err, sum.CLoad)
		}
	}
}
