package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/dburl"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/load"
	"github.com/storbench/storbench/internal/testsupport/mariadbtest"
	"github.com/storbench/storbench/internal/testsupport/pgtest"
)

// interruptedBuild builds dsn as `storbench build` does and interrupts it, as Ctrl-C
// does, at its first progress report: mid-load, or before the finishing if the load
// was quicker than a report. The tables are there, the build record is not.
func interruptedBuild(t *testing.T, dsn string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, err := engine.OpenOrCreate(ctx, dsn)
	must(t, err)
	defer db.Close()
	_, err = load.Build(ctx, db, load.Options{Warehouses: 1, Workers: 1, Version: "v-test",
		Progress: func(load.Progress) { cancel() }})
	if err == nil || ctx.Err() == nil {
		t.Fatalf("build was not interrupted: %v", err)
	}
}

// refusesUnfinished checks that run refuses the database whose build was cut short,
// in one line naming it and the fix, before any user connects: no result is written.
func refusesUnfinished(t *testing.T, dsn string) {
	t.Helper()
	jsonPath := filepath.Join(t.TempDir(), "result.json")
	code, out, errOut := storbench(t, "run", "--dsn", dsn, "--users", "1", "--ramp", "0s", "--duration", "2s", "--no-metrics", "--json", jsonPath)
	line := strings.TrimRight(errOut, "\n")
	// The DSN is named redacted; the command to paste leaves it out.
	if code != 2 || strings.Contains(line, "\n") || !strings.Contains(line, dburl.Redact(dsn)+" holds a storbench build that did not finish") ||
		!strings.Contains(line, "storbench drop --dsn … (with the DSN you gave, or $STORBENCH_DSN), then build again") {
		t.Errorf("run on an interrupted build: exit %d, stderr %q; want 2 and one line naming the database and storbench drop --dsn … (…), then build again\n%s", code, errOut, out)
	}
	if strings.Contains(out, "NOPM") {
		t.Errorf("run measured an interrupted build:\n%s", out)
	}
	if _, err := os.Stat(jsonPath); !os.IsNotExist(err) {
		t.Errorf("run on an interrupted build wrote %s (%v)", jsonPath, err)
	}
}

// TestRunRefusesUnfinishedBuild: a build interrupted before it recorded itself leaves
// tables a run would measure as a TPC-C database (New-Orders failing on missing rows,
// NOPM 0, exit 0); run refuses it, and check still reports what it finds there.
func TestRunRefusesUnfinishedBuild(t *testing.T) {
	t.Parallel() // its own database file
	dsn := "sqlite://" + filepath.Join(t.TempDir(), "tpcc.db")
	interruptedBuild(t, dsn)
	refusesUnfinished(t, dsn)
	if code, out, errOut := storbench(t, "check", "--dsn", dsn); code == 2 || !strings.Contains(out, "3.3.2.1") || !strings.Contains(out, "note: the storbench build of this database did not finish") {
		t.Errorf("check on an interrupted build: exit %d, want its conditions checked and a note that the build did not finish\n%s%s", code, out, errOut)
	}
	if code, out, errOut := storbench(t, "drop", "--dsn", dsn); code != 0 {
		t.Fatalf("drop: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1", "--workers", "1"); code != 0 {
		t.Fatalf("build again: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := storbench(t, "run", "--dsn", dsn, "--users", "1", "--ramp", "0s", "--duration", "1s", "--no-metrics"); code != 0 {
		t.Errorf("run after drop and build: exit %d\n%s%s", code, out, errOut)
	}
}

// TestRunRefusesUnfinishedBuildServers: PostgreSQL reads its build record its own way,
// MariaDB tells a missing record table from an empty one by its own errors.
func TestRunRefusesUnfinishedBuildServers(t *testing.T) {
	t.Parallel() // its own servers
	if testing.Short() {
		t.Skip("starts PostgreSQL and MariaDB")
	}
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		dsn := pgtest.Start(t).DSN("tpcc")
		interruptedBuild(t, dsn)
		refusesUnfinished(t, dsn)
	})
	t.Run("mariadb", func(t *testing.T) {
		t.Parallel()
		dsn := mariadbtest.Start(t).URL
		interruptedBuild(t, dsn)
		refusesUnfinished(t, dsn)
	})
}
