package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storbench/storbench/internal/instance/localserver"
)

// TestBackupPlaceAndOwner: a backup directory inside an instance's directories (its
// own, another instance's, through a symbolic link) or holding them is refused before
// anything is made; a restore from another instance's backup says whose it is and
// needs --force, which then replaces the instance's database.
func TestBackupPlaceAndOwner(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("starts PostgreSQL servers")
	}
	work := t.TempDir()
	a, b := fmt.Sprintf("own-a%d", os.Getpid()), fmt.Sprintf("own-b%d", os.Getpid())
	dsn := map[string]string{}
	for _, name := range []string{a, b} {
		dsn[name] = managedInstance(t, filepath.Join(work, name), name, "--max-connections", "10")
	}
	must(t, os.Symlink(filepath.Join(work, a), filepath.Join(work, "link")))
	for to, want := range map[string]string{
		filepath.Join(work, a, "data", "bk"): "is inside instance " + a,
		filepath.Join(work, a, "bk"):         "is inside instance " + a,
		filepath.Join(work, a, "base"):       "is inside instance " + a, // a name destroy removes
		filepath.Join(work, b, "bk"):         "is inside instance " + b,
		filepath.Join(work, "link", "bk"):    "is inside instance " + a,
		work:                                 "holds instance ",
	} {
		code, out, errOut := storbench(t, "backup", "--instance", a, "--to", to, "--no-metrics")
		if code != 2 || !oneLine(errOut) || !strings.Contains(errOut, want) || !strings.Contains(errOut, "outside every instance's") {
			t.Errorf("backup --to %s: exit %d, stderr %q; want 2 and one line: %s… outside every instance's\n%s", to, code, errOut, want, out)
		}
		if to != work {
			if _, err := os.Lstat(to); !os.IsNotExist(err) {
				t.Errorf("the refused backup made %s (%v)", to, err)
			}
		}
	}

	exec(t, dsn[b], "CREATE TABLE own_b AS SELECT 1 AS v")
	bk := filepath.Join(work, "bk")
	if code, out, errOut := storbench(t, "backup", "--instance", a, "--to", bk, "--no-metrics"); code != 0 {
		t.Fatalf("backup of %s: exit %d\n%s%s", a, code, out, errOut)
	}
	code, out, errOut := storbench(t, "restore", "--instance", b, "--from", bk, "--no-metrics")
	if code != 2 || !oneLine(errOut) || !strings.Contains(errOut, "is a backup of instance "+a) || !strings.Contains(errOut, "--force") {
		t.Errorf("restore of %s's backup into %s: exit %d, stderr %q; want 2 and one line saying whose backup it is and --force\n%s", a, b, code, errOut, out)
	}
	if n := tableCount(t, dsn[b], "own_b"); n != 1 {
		t.Fatalf("the refused restore replaced %s's database: own_b %d", b, n)
	}
	if code, out, errOut := storbench(t, "restore", "--instance", b, "--from", bk, "--force", "--no-metrics"); code != 0 {
		t.Fatalf("restore --force: exit %d\n%s%s", code, out, errOut)
	}
	if n := tableCount(t, dsn[b], "own_b"); n != 0 {
		t.Errorf("after restore --force of %s's backup, %s still has its own table", a, b)
	}
}

// tableCount is how many tables named name the database has in public.
func tableCount(t *testing.T, dsn, name string) int {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	must(t, err)
	defer c.Close(ctx)
	var n int
	must(t, c.QueryRow(ctx, "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public' AND table_name = $1", name).Scan(&n))
	return n
}

// background runs storbench in b: out is its output, ended closes when it ends and
// code waits for its exit code.
func (b binaryIn) background(t *testing.T, args ...string) (out *localserver.SyncBuffer, ended <-chan struct{}, code func() int) {
	t.Helper()
	cmd := b.command(t, args...)
	out = &localserver.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	return out, done, func() int { <-done; return cmd.ProcessState.ExitCode() }
}

// waitFor waits until ok() while the process (see background) runs.
func waitFor(t *testing.T, what string, ended <-chan struct{}, out *localserver.SyncBuffer, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !ok(); time.Sleep(5 * time.Millisecond) {
		select {
		case <-ended:
			t.Fatalf("it ended before %s:\n%s", what, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within a minute:\n%s", what, out.String())
		}
	}
}

// TestVerbsRespectLeases: restore and stop refuse an instance a run is using (the
// run keeps its server and completes), destroy refuses one a backup is taking; each
// names the user and --force.
func TestVerbsRespectLeases(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("builds storbench and runs it against a managed PostgreSQL")
	}
	work := t.TempDir()
	name := fmt.Sprintf("leased%d", os.Getpid())
	dsn := managedInstance(t, filepath.Join(work, "pg"), name, "--max-connections", "10")
	if code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1", "--workers", "2"); code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
	}
	bk := filepath.Join(work, "bk")
	if code, out, errOut := storbench(t, "backup", "--instance", name, "--to", bk, "--no-metrics"); code != 0 {
		t.Fatalf("backup: exit %d\n%s%s", code, out, errOut)
	}
	refused := func(by string, args ...string) {
		t.Helper()
		code, out, errOut := storbench(t, args...)
		if want := fmt.Sprintf("instance %s is in use by %s (pid ", name, by); code != 2 || !oneLine(errOut) || !strings.Contains(errOut, want) || !strings.Contains(errOut, "--force") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q and --force\n%s", args, code, errOut, want, out)
		}
	}

	run, ended, exit := binaryIn{}.background(t, "run", "--dsn", dsn, "--users", "1", "--ramp", "0s", "--duration", "12s", "--no-metrics")
	waitFor(t, "the run's window", ended, run, func() bool { return strings.Contains(run.String(), "timed") })
	refused("storbench run", "restore", "--instance", name, "--from", bk, "--no-metrics")
	refused("storbench run", "instance", "stop", "--name", name)
	if code := exit(); code != 0 {
		t.Errorf("the run lost its server: exit %d\n%s", code, run.String())
	}

	bk2 := filepath.Join(work, "bk2")
	backup, ended, exit := binaryIn{}.background(t, "backup", "--instance", name, "--to", bk2, "--no-metrics")
	waitFor(t, "the backup's directory", ended, backup, func() bool { _, err := os.Stat(bk2); return err == nil })
	refused("storbench backup", "instance", "destroy", "--name", name)
	if code := exit(); code != 0 {
		t.Errorf("the backup failed: exit %d\n%s", code, backup.String())
	}
}
