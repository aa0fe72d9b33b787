package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx": the user's own tables

	"github.com/storbench/storbench/internal/dburl"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/testsupport/mariadbtest"
	"github.com/storbench/storbench/internal/testsupport/pgtest"
	"github.com/storbench/storbench/internal/tpcc"
)

// userDB is a database as its user sees it, through database/sql.
type userDB struct {
	*sql.DB
	tablesSQL string // the database's tables, one name a row
}

// userTables makes tables of the user's own, one row each.
func (db userDB) userTables(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		for _, q := range []string{"CREATE TABLE " + n + " (id INT)", "INSERT INTO " + n + " VALUES (7)"} {
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
}

// snapshot lists every table of the database with its row count.
func (db userDB) snapshot(t *testing.T) string {
	t.Helper()
	rows, err := db.Query(db.tablesSQL)
	must(t, err)
	var names []string
	for rows.Next() {
		var n string
		must(t, rows.Scan(&n))
		names = append(names, n)
	}
	must(t, rows.Err())
	rows.Close()
	slices.Sort(names)
	var s []string
	for _, n := range names {
		var count int64
		must(t, db.QueryRow("SELECT count(*) FROM "+n).Scan(&count))
		s = append(s, fmt.Sprintf("%s=%d", n, count))
	}
	return strings.Join(s, ",")
}

// tpccLeft lists the TPC-C-named tables and routines left in the database, as drop
// finds them.
func tpccLeft(t *testing.T, dsn string) string {
	t.Helper()
	ctx := context.Background()
	db, err := engine.Open(ctx, dsn)
	must(t, err)
	defer db.Close()
	inv, err := db.Inventory(ctx)
	must(t, err)
	return fmt.Sprint(inv.TPCC)
}

// dropTarget is an empty database of one engine, its name as --force repeats it.
type dropTarget struct {
	name string
	open func(t *testing.T) (dsn, database string, db userDB)
}

var dropTargets = []dropTarget{
	{"sqlite", func(t *testing.T) (string, string, userDB) {
		path := filepath.Join(t.TempDir(), "shop.db")
		db, err := sql.Open("sqlite", path)
		must(t, err)
		t.Cleanup(func() { db.Close() })
		return "sqlite://" + path, path, userDB{db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite!_%' ESCAPE '!'"}
	}},
	{"postgres", func(t *testing.T) (string, string, userDB) {
		dsn := pgtest.Start(t).DSN("tpcc")
		db, err := sql.Open("pgx", dsn)
		must(t, err)
		t.Cleanup(func() { db.Close() })
		return dsn, "tpcc", userDB{db, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"}
	}},
	{"mariadb", func(t *testing.T) (string, string, userDB) {
		srv := mariadbtest.Start(t)
		db, err := sql.Open("mysql", srv.DSN)
		must(t, err)
		t.Cleanup(func() { db.Close() })
		return srv.URL, mariadbtest.Database, userDB{db, "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()"}
	}},
}

// TestDropOnlyWhatStorbenchBuilt: drop removes what a storbench build recorded it
// created, finished or interrupted, and nothing else: the user's tables with TPC-C's
// names and no build record are refused in one line naming them and --force with the
// database's name (build, run and check do not advise drop there); a wrong --force is
// refused; the right one drops the TPC-C tables only. Before, drop removed the user's
// customer, item and warehouse and exited 0.
func TestDropOnlyWhatStorbenchBuilt(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	for _, target := range dropTargets {
		t.Run(target.name, func(t *testing.T) {
			t.Parallel()
			if testing.Short() && target.name != "sqlite" {
				t.Skip("starts a server")
			}
			dsn, database, db := target.open(t)

			// A shop's tables, three of them with TPC-C's names.
			db.userTables(t, "customer", "item", "warehouse", "invoices")
			before := db.snapshot(t)
			refused(t, "holds customer, item, warehouse and no record of a storbench build: nothing dropped", "drop", "--dsn", dsn)
			// The DSN shown is redacted (a managed instance's password as xxxxx): the
			// command to paste leaves it out.
			refused(t, "run storbench drop --dsn … --force "+database+" (with the DSN you gave, or $STORBENCH_DSN),", "drop", "--dsn", dsn)
			if _, _, errOut := storbench(t, "drop", "--dsn", dsn); strings.Contains(errOut, "drop --dsn "+dburl.Redact(dsn)) {
				t.Errorf("the refusal offers a command with the redacted DSN: %s", errOut)
			}
			refused(t, "does not name the database", "drop", "--dsn", dsn, "--force", "shop")
			refused(t, "the database holds tables storbench did not create (customer, item, warehouse): storbench will not touch them", "build", "--dsn", dsn, "--warehouses", "1")
			for _, args := range [][]string{{"run", "--dsn", dsn, "--duration", "1s", "--ramp", "0s", "--no-metrics"}, {"check", "--dsn", dsn}} {
				refused(t, "is not a TPC-C database (it holds customer, item, warehouse but not district", args...)
			}
			for _, args := range [][]string{{"build", "--dsn", dsn, "--warehouses", "1"}, {"check", "--dsn", dsn}} {
				if _, _, errOut := storbench(t, args...); strings.Contains(errOut, "storbench drop") {
					t.Errorf("%v advises drop on the user's tables: %s", args, errOut)
				}
			}
			if after := db.snapshot(t); after != before {
				t.Fatalf("refusals touched the user's tables: before %s, after %s", before, after)
			}

			// All nine TPC-C tables, made by hand and filled: refused all the same; a
			// --force naming another database drops nothing; the right one drops the
			// nine and leaves invoices.
			db.userTables(t, "district", "history", "new_order", "orders", "order_line", "stock")
			before = db.snapshot(t)
			refused(t, "holds customer, district, history, item, new_order, order_line, orders, stock, warehouse and no record", "drop", "--dsn", dsn)
			refused(t, "does not name the database", "drop", "--dsn", dsn, "--force", filepath.Base(database)+"x")
			if after := db.snapshot(t); after != before {
				t.Fatalf("refusals touched the user's tables: before %s, after %s", before, after)
			}
			code, out, errOut := storbench(t, "drop", "--dsn", dsn, "--force", database)
			if code != 0 || !strings.Contains(out, "dropped 9 objects") {
				t.Fatalf("drop --force %s: exit %d\n%s%s", database, code, out, errOut)
			}
			if got := db.snapshot(t); got != "invoices=1" {
				t.Fatalf("after drop --force: %s, want the user's invoices only", got)
			}

			// A storbench build beside the user's table: dropped without --force, the
			// user's table kept.
			if code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1", "--workers", "2"); code != 0 {
				t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
			}
			code, out, errOut = storbench(t, "drop", "--dsn", dsn)
			if code != 0 || !strings.Contains(out, "storbench_objects") || !strings.Contains(out, "order_line") {
				t.Fatalf("drop of a storbench build: exit %d\n%s%s", code, out, errOut)
			}
			if got, left := db.snapshot(t), tpccLeft(t, dsn); got != "invoices=1" || left != "[]" {
				t.Fatalf("after drop: tables %s, TPC-C objects %s; want the user's invoices only", got, left)
			}

			// A build interrupted mid-load: storbench's, dropped without --force.
			interruptedBuild(t, dsn)
			if code, out, errOut := storbench(t, "drop", "--dsn", dsn); code != 0 || !strings.Contains(out, "storbench_build") {
				t.Fatalf("drop of an interrupted build: exit %d\n%s%s", code, out, errOut)
			}
			if got, left := db.snapshot(t), tpccLeft(t, dsn); got != "invoices=1" || left != "[]" {
				t.Fatalf("after drop: tables %s, TPC-C objects %s; want the user's invoices only", got, left)
			}

			// A build of a storbench before the list of objects: its build table says it
			// is storbench's; dropped by the names storbench gives its objects.
			if code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1", "--workers", "2"); code != 0 {
				t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
			}
			if _, err := db.Exec("DROP TABLE storbench_objects"); err != nil {
				t.Fatal(err)
			}
			if code, out, errOut := storbench(t, "drop", "--dsn", dsn); code != 0 || !strings.Contains(out, "storbench_build") {
				t.Fatalf("drop of an older storbench's build: exit %d\n%s%s", code, out, errOut)
			}
			if got, left := db.snapshot(t), tpccLeft(t, dsn); got != "invoices=1" || left != "[]" {
				t.Fatalf("after drop: tables %s, TPC-C objects %s; want the user's invoices only", got, left)
			}
		})
	}
}

// TestDropUnfinishedRecordedBuild: a MariaDB build cut off while it creates its
// tables (each CREATE commits there) has recorded all of them first: drop removes
// the ones it made, and the record, and nothing the record does not list; cut off
// before it entered them, the empty record and the build table are dropped.
func TestDropUnfinishedRecordedBuild(t *testing.T) {
	t.Parallel() // its own server
	if testing.Short() {
		t.Skip("starts MariaDB")
	}
	srv := mariadbtest.Start(t)
	db, err := sql.Open("mysql", srv.DSN)
	must(t, err)
	defer db.Close()
	u := userDB{db, "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()"}
	// As CreateTables leaves it when interrupted after its third table.
	u.userTables(t, "invoices")
	for _, q := range []string{
		"CREATE TABLE storbench_objects (kind VARCHAR(16) NOT NULL, name VARCHAR(64) NOT NULL)",
		"INSERT INTO storbench_objects VALUES " + recordRows(engine.OwnTables()),
		"CREATE TABLE storbench_build (warehouses INT)",
		"CREATE TABLE warehouse (w_id INT)",
		"CREATE TABLE district (d_id INT)",
	} {
		_, err := db.Exec(q)
		must(t, err)
	}
	code, out, errOut := storbench(t, "drop", "--dsn", srv.URL)
	if code != 0 || !strings.Contains(out, "dropped 4 objects") {
		t.Fatalf("drop: exit %d\n%s%s", code, out, errOut)
	}
	if got := u.snapshot(t); got != "invoices=1" {
		t.Errorf("after drop: %s, want the user's invoices only", got)
	}

	// Cut off between creating the record and entering its objects: the record is
	// empty, and it (with a build table beside it) is storbench's all the same. Before,
	// drop removed nothing while build said to drop first.
	for _, left := range [][]string{{"storbench_objects"}, {"storbench_build", "storbench_objects"}} { // as dropped: the record last
		_, err := db.Exec("CREATE TABLE storbench_objects (kind VARCHAR(16) NOT NULL, name VARCHAR(64) NOT NULL)")
		must(t, err)
		if slices.Contains(left, "storbench_build") {
			_, err := db.Exec("CREATE TABLE storbench_build (warehouses INT)")
			must(t, err)
		}
		code, out, errOut := storbench(t, "drop", "--dsn", srv.URL)
		if want := fmt.Sprintf("dropped %d objects: %v", len(left), left); code != 0 || !strings.Contains(out, want) {
			t.Fatalf("drop of an empty record: exit %d, want 0 and %q\n%s%s", code, want, out, errOut)
		}
		if got, objs := u.snapshot(t), tpccLeft(t, srv.URL); got != "invoices=1" || objs != "[]" {
			t.Errorf("after drop of an empty record: tables %s, TPC-C objects %s; want the user's invoices only", got, objs)
		}
	}
}

// recordRows are the rows of storbench_objects for tables.
func recordRows(tables []string) string {
	var rows []string
	for _, t := range tables {
		rows = append(rows, "('table', '"+t+"')")
	}
	return strings.Join(rows, ", ")
}

// TestDropHammerDBBuild: a database HammerDB built (testdata/hammerdb_412_pg.sql) is
// not storbench's: build says it runs as it is, drop refuses it naming it and
// --force, and drop --force removes its tables and its six routines, and no table
// of the user's.
func TestDropHammerDBBuild(t *testing.T) {
	t.Parallel() // its own server
	srv := pgtest.Start(t)
	ctx := t.Context()
	dsn := hammerDBBuild(t, srv.DSN("tpcc"))
	pgtest.Exec(t, dsn, "CREATE TABLE invoices AS SELECT 1 AS id")

	refused(t, "the database holds a HammerDB build (customer, district, history, item, new_order, order_line, orders, stock, warehouse): storbench runs it as it is",
		"build", "--dsn", dsn, "--warehouses", "1")
	refused(t, "holds customer, district, history, item, new_order, order_line, orders, stock, warehouse, dbms_random(), delivery(), neword(), ostat(), payment(), slev() and no record",
		"drop", "--dsn", dsn)
	refused(t, "if these are the HammerDB build and you mean to remove them, run storbench drop --dsn … --force tpcc (", "drop", "--dsn", dsn)
	code, out, errOut := storbench(t, "drop", "--dsn", dsn, "--force", "tpcc")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("dropped %d objects", len(tpcc.Tables)+6)) {
		t.Fatalf("drop --force tpcc: exit %d\n%s%s", code, out, errOut)
	}
	if left := tpccLeft(t, dsn); left != "[]" {
		t.Errorf("TPC-C objects left: %s", left)
	}
	conn, err := srv.Connect(ctx, "tpcc")
	must(t, err)
	defer conn.Close(ctx)
	var tables string
	must(t, conn.QueryRow(ctx, "SELECT string_agg(relname, ',') FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r'").Scan(&tables))
	if tables != "invoices" {
		t.Errorf("tables left: %s, want the user's invoices", tables)
	}
}
