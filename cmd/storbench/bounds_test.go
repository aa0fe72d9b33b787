package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/testsupport/pgtest"
)

// refused runs storbench and wants what the README promises of bad input: exit code 2
// and one stderr line holding want.
func refused(t *testing.T, want string, args ...string) {
	t.Helper()
	code, out, errOut := storbench(t, args...)
	if code != 2 {
		t.Errorf("storbench %s: exit %d, want 2\nstdout %q\nstderr %q", strings.Join(args, " "), code, out, errOut)
	}
	lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], want) {
		t.Errorf("storbench %s: stderr %q, want one line with %q", strings.Join(args, " "), errOut, want)
	}
}

// TestCountsBeyondTheMachineRefused: counts no machine, disk or engine can hold are
// refused at parse time with exit code 2, before anything is created: no database
// file, no instance, no tables (before, --warehouses 10^12 crashed the runtime out of
// memory after creating the tables, and --client-cpus 100000 exhausted the threads).
func TestCountsBeyondTheMachineRefused(t *testing.T) {
	t.Setenv("STORBENCH_HOME", t.TempDir())
	dir := t.TempDir()
	dsn := "sqlite://" + filepath.Join(dir, "tpcc.db")

	refused(t, "--warehouses 1000000000000 is more than 1000000", "build", "--dsn", dsn, "--warehouses", "1000000000000")
	// More than the disk under the file holds (87 TB with the WAL the build writes):
	// refused after the file's directory is known, and the file made to find it out is
	// gone again.
	refused(t, "a build of 1000000 warehouses needs about 87100.0 GB on "+dir, "build", "--dsn", dsn, "--warehouses", "1000000")
	refused(t, "--workers 100000 is out of range", "build", "--dsn", dsn, "--warehouses", "1", "--workers", "100000")
	refused(t, "--client-cpus 100000 is out of range", "run", "--dsn", dsn, "--client-cpus", "100000")
	refused(t, "--duration 200h0m0s is longer than 168h0m0s", "run", "--dsn", dsn, "--duration", "200h")
	refused(t, "--duration 200h0m0s is longer than 168h0m0s", "run", "--metrics-only", "--duration", "200h")
	refused(t, "--ramp 25h0m0s is longer than 24h0m0s", "run", "--dsn", dsn, "--ramp", "25h")
	refused(t, "--users 200000 is more than 100000", "run", "--dsn", dsn, "--users", "200000")
	refused(t, "--memory 1MB is too small (a postgres server needs at least 64MB)",
		"instance", "create", "--path", filepath.Join(dir, "pg"), "--name", "bounds-tiny", "--memory", "1MB")
	refused(t, "--memory 128MB is too small (a mariadb server needs at least 160MB)",
		"instance", "create", "--engine", "mariadb", "--path", filepath.Join(dir, "my"), "--name", "bounds-tiny", "--memory", "128MB")

	study := filepath.Join(dir, "huge.yaml")
	must(t, os.WriteFile(study, []byte("name: huge\ntargets:\n  - name: a\n    path: "+filepath.Join(dir, "a")+
		"\nworkload:\n  warehouses: 1e12\nexperiments:\n  - kind: user-sweep\n    users: [1]\n"), 0o644))
	refused(t, study+":6: warehouses 1000000000000 is more than 1000000", "study", "plan", study)

	if got := listing(dir); !strings.HasPrefix(got, "huge.yaml=") || strings.Contains(got, ",") {
		t.Errorf("refusals left %q in %s, want only the study file", got, dir)
	}
	if got := listing(filepath.Join(os.Getenv("STORBENCH_HOME"), "instances")); got != "absent" {
		t.Errorf("refusals registered instances: %s", got)
	}
}

// TestBuildBeyondFreeSpaceRefused: a build the instance's storage cannot hold is
// refused before any table is created (before, it loaded until the disk was full).
func TestBuildBeyondFreeSpaceRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("creates a managed PostgreSQL instance")
	}
	mnt := smallDisk(t, 200)
	dsn := managedInstance(t, filepath.Join(mnt, "pg"), "bounds-space")
	before := tablesOf(t, dsn)
	refused(t, "a build of 4 warehouses needs about 864 MB on "+filepath.Join(mnt, "pg"), "build", "--dsn", dsn, "--warehouses", "4")
	if after := tablesOf(t, dsn); after != before {
		t.Errorf("refused build touched the database: before %q, after %q", before, after)
	}
}

// TestStudyBeyondFreeSpaceRefused: a study whose workload a managed target's storage
// cannot hold is refused by study plan, at the workload's line, before any instance
// exists (before, study run created and started one, then failed its build).
func TestStudyBeyondFreeSpaceRefused(t *testing.T) {
	t.Setenv("STORBENCH_HOME", t.TempDir())
	mnt := smallDisk(t, 100)
	study := filepath.Join(t.TempDir(), "big.yaml")
	must(t, os.WriteFile(study, []byte("name: big\ntargets:\n  - name: small\n    path: "+filepath.Join(mnt, "pg")+
		"\nworkload:\n  warehouses: 10\nexperiments:\n  - kind: user-sweep\n    users: [1]\n"), 0o644))
	before := listing(mnt)
	refused(t, study+":6: target small: a build of 10 warehouses needs about 2.3 GB on "+filepath.Join(mnt, "pg"), "study", "plan", study)
	refused(t, study+":6: target small: a build of 10 warehouses needs about 2.3 GB", "study", "run", study, "--results", filepath.Join(t.TempDir(), "results"))
	if after := listing(mnt); after != before {
		t.Errorf("the refused study touched the target's storage: before %q, after %q", before, after)
	}
	if got := listing(filepath.Join(os.Getenv("STORBENCH_HOME"), "instances")); got != "absent" {
		t.Errorf("the refused study registered instances: %s", got)
	}

	// One copy of 1 warehouse fits on 300 MB; a consolidation's three copies do not.
	mnt = smallDisk(t, 300)
	one := "name: three\ntargets:\n  - name: small\n    path: " + filepath.Join(mnt, "pg") +
		"\nworkload:\n  warehouses: 1\nexperiments:\n  - kind: user-sweep\n    users: [1]\n"
	must(t, os.WriteFile(study, []byte(one), 0o644))
	if code, out, errOut := storbench(t, "study", "plan", study); code != 0 {
		t.Fatalf("a study whose one copy fits: exit %d\n%s%s", code, out, errOut)
	}
	must(t, os.WriteFile(study, []byte(one+"  - kind: consolidation\n    instances: 3\n    users: 1\n"), 0o644))
	refused(t, study+":6: target small: a consolidation of 3 instances, a copy of the database each: a build of 3 copies of 1 warehouse needs about", "study", "plan", study)

	// A target an earlier run prepared (a resume after a failure) already holds its
	// data: the free space left is no reason to refuse the study again.
	if code, out, errOut := storbench(t, "instance", "create", "--name", "resumed", "--path", filepath.Join(mnt, "pg")); code != 0 {
		t.Fatalf("instance create: exit %d\n%s%s", code, out, errOut)
	}
	t.Cleanup(func() { storbench(t, "instance", "destroy", "--force", "--name", "resumed") })
	if code, out, errOut := storbench(t, "study", "plan", study); code != 0 {
		t.Errorf("plan of a study whose target is prepared already: exit %d\n%s%s", code, out, errOut)
	}
}

// TestBuildWithoutCheckpointPrivilege: a role that may create tables but not run
// CHECKPOINT (PostgreSQL 15: superuser or pg_checkpoint) builds a complete database;
// the skipped checkpoint is a note in the build's output, not a failure after the load.
func TestBuildWithoutCheckpointPrivilege(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	srv := pgtest.Start(t)
	ctx := t.Context()
	conn, err := srv.Connect(ctx, "tpcc")
	must(t, err)
	for _, stmt := range []string{
		"CREATE ROLE bench LOGIN",
		"GRANT CREATE ON DATABASE tpcc TO bench",
		"GRANT CREATE ON SCHEMA public TO bench",
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	conn.Close(ctx)
	dsn := strings.Replace(srv.DSN("tpcc"), "postgres://postgres@", "postgres://bench@", 1)

	code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1", "--workers", "2")
	if code != 0 {
		t.Fatalf("build as a role without CHECKPOINT: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "note: final CHECKPOINT skipped: this role may not run it") {
		t.Errorf("build output does not say the checkpoint was skipped:\n%s", out)
	}
	if code, out, errOut := storbench(t, "check", "--dsn", dsn, "--all"); code != 0 {
		t.Errorf("check after the build: exit %d\n%s%s", code, out, errOut)
	}
}
