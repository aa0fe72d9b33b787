package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/testsupport/pgtest"
)

// TestRunOnHammerDBBuild runs on a PostgreSQL database laid out as HammerDB 4.12 leaves
// one (testdata/hammerdb_412_pg.sql: no storbench build record or functions, HammerDB's
// types and procedures, committed unused-item orders with NULL amounts). In sql mode the
// run works in both input modes without errors, says the database is HammerDB's and
// takes its C-Load, 123; without --mode it takes sql there and says so; --mode
// procedures, which would need storbench's functions, is refused with one line naming
// --mode sql; and the run adds nothing to the database.
func TestRunOnHammerDBBuild(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	srv := pgtest.Start(t)
	ctx := t.Context()
	dsn := hammerDBBuild(t, srv.DSN("tpcc"))
	conn, err := srv.Connect(ctx, "tpcc")
	must(t, err)
	defer conn.Close(ctx)
	const objectsSQL = `SELECT (SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace),
		(SELECT count(*) FROM pg_proc WHERE pronamespace = 'public'::regnamespace)`
	var relations, procs int
	must(t, conn.QueryRow(ctx, objectsSQL).Scan(&relations, &procs))

	// hammerdb inputs with no --mode (the engine's best, sql on this database), spec
	// inputs with --mode sql.
	for inputs, mode := range map[string][]string{"hammerdb": nil, "spec": {"--mode", "sql"}} {
		jsonPath := filepath.Join(t.TempDir(), "result.json")
		args := append([]string{"run", "--dsn", dsn, "--users", "2", "--inputs", inputs, "--ramp", "0s", "--duration", "3s", "--no-metrics", "--json", jsonPath}, mode...)
		code, out, errOut := storbench(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
		b, err := os.ReadFile(jsonPath)
		must(t, err)
		var res struct {
			Config struct {
				Mode    string `json:"mode"`
				BuiltBy string `json:"built_by"`
				Schema  string `json:"schema"`
				CLoad   int    `json:"c_load"`
				CRun    int    `json:"c_run"`
			} `json:"config"`
			Transactions map[string]struct {
				Count  int64 `json:"count"`
				Errors int64 `json:"errors"`
			} `json:"transactions"`
			Notes []string `json:"notes"`
		}
		must(t, json.Unmarshal(b, &res))
		c := res.Config
		if d := c.CRun - c.CLoad; c.BuiltBy != "HammerDB" || c.Schema != "hammerdb" || c.CLoad != 123 || d < 0 && -d < 65 || d >= 0 && d < 65 || d > 119 || d < -119 {
			t.Errorf("%s: built_by %q, schema %q, C-Load %d, C-Run %d; want HammerDB, hammerdb, 123 and a C-Run 65..119 away", inputs, c.BuiltBy, c.Schema, c.CLoad, c.CRun)
		}
		if !strings.Contains(out, "built by HammerDB") || !strings.Contains(strings.Join(res.Notes, "\n"), "C-Load 123") {
			t.Errorf("%s: the run does not say the database is HammerDB's and its C-Load:\n%s\nnotes %q", inputs, out, res.Notes)
		}
		if noted := strings.Contains(strings.Join(res.Notes, "\n"), "mode sql: the database was built by HammerDB"); c.Mode != "sql" || noted != (mode == nil) {
			t.Errorf("%s, %v: mode %q, notes %q; want sql, and a note saying why when no --mode was given", inputs, mode, c.Mode, res.Notes)
		}
		for name, tx := range res.Transactions {
			if tx.Errors != 0 || tx.Count == 0 {
				t.Errorf("%s: %s: %d done, %d errors; want some and none failed\n%s", inputs, name, tx.Count, tx.Errors, out)
			}
		}
	}

	code, out, errOut := storbench(t, "run", "--dsn", dsn, "--mode", "procedures", "--users", "1", "--ramp", "0s", "--duration", "2s", "--no-metrics")
	if code != 2 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, "--mode sql") {
		t.Errorf("procedures mode on HammerDB's database: exit %d, want 2 and one line naming --mode sql\n%s%s", code, out, errOut)
	}

	var relationsAfter, procsAfter int
	must(t, conn.QueryRow(ctx, objectsSQL).Scan(&relationsAfter, &procsAfter))
	if relationsAfter != relations || procsAfter != procs {
		t.Errorf("the runs changed HammerDB's database: %d relations and %d routines before, %d and %d after", relations, procs, relationsAfter, procsAfter)
	}
}

// hammerDBBuild lays out the PostgreSQL database dsn as HammerDB 4.12 leaves one
// (testdata/hammerdb_412_pg.sql on a storbench build of its schema) and returns dsn.
func hammerDBBuild(t *testing.T, dsn string) string {
	t.Helper()
	if code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1", "--workers", "2", "--schema", "hammerdb"); code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
	}
	fixture, err := os.ReadFile(filepath.Join("testdata", "hammerdb_412_pg.sql"))
	must(t, err)
	pgtest.Exec(t, dsn, string(fixture))
	return dsn
}
