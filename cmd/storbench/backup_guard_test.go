package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/instance/localserver"
	"github.com/storbench/storbench/internal/testsupport/pgtest"
)

// TestBackupPlaceAndOwner: a backup directory inside an instance's directories (its
// own, another instance's, through a symbolic link) or holding them is refused before
// anything is made, and so is an instance inside an instance's or a backup's; a restore from another instance's backup says whose it is and
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

	pgtest.Exec(t, dsn[b], "CREATE TABLE own_b AS SELECT 1 AS v")
	bk := filepath.Join(work, "bk")
	if code, out, errOut := storbench(t, "backup", "--instance", a, "--to", bk, "--no-metrics"); code != 0 {
		t.Fatalf("backup of %s: exit %d\n%s%s", a, code, out, errOut)
	}
	// An instance inside another's directories or a backup's (through a link too) is
	// refused by create and by a study's plan, before anything is made: destroying
	// the outer one would remove it.
	for path, want := range map[string]string{
		filepath.Join(work, a, "data", "x"): "is inside instance " + a + "'s directory " + filepath.Join(work, a),
		filepath.Join(work, "link", "x"):    "is inside instance " + a + "'s directory " + filepath.Join(work, a),
		filepath.Join(bk, "base", "x"):      "is inside " + bk + ", a backup of instance " + a,
	} {
		code, out, errOut := storbench(t, "instance", "create", "--path", path, "--name", "nested", "--max-connections", "10")
		if code == 0 {
			storbench(t, "instance", "destroy", "--name", "nested")
		}
		if code != 2 || !oneLine(errOut) || !strings.Contains(errOut, "--path "+path+" "+want) || !strings.Contains(errOut, "outside every instance's and backup's") {
			t.Errorf("instance create --path %s: exit %d, stderr %q; want 2 and one line: --path %s %s…\n%s", path, code, errOut, path, want, out)
		}
		if _, err := os.Lstat(path); !os.IsNotExist(err) {
			t.Errorf("the refused create made %s (%v)", path, err)
		}
		file := filepath.Join(work, "s.yaml")
		must(t, os.WriteFile(file, []byte("name: nest\ntargets:\n  - name: t\n    path: "+path+"\nworkload:\n  warehouses: 1\nexperiments:\n  - kind: user-sweep\n    users: [1]\n"), 0o644))
		code, out, errOut = storbench(t, "study", "plan", file, "--results", filepath.Join(work, "results"))
		if code != 2 || !strings.Contains(errOut, "s.yaml:4: targets[0].path: "+path+" "+want) {
			t.Errorf("study plan of a target at %s: exit %d, stderr %q; want 2 and the refusal at its line: %s", path, code, errOut, want)
		}
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
	return pgtest.Scalar[int](t, dsn, "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public' AND table_name = $1", name)
}

// running is a storbench process started by background.
type running struct {
	pid   int
	out   *localserver.SyncBuffer // its output
	ended <-chan struct{}         // closed when it ends
	code  func() int              // waits for its exit code
}

// background runs storbench in b.
func (b binaryIn) background(t *testing.T, args ...string) running {
	t.Helper()
	cmd := b.command(t, args...)
	out := &localserver.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	return running{pid: cmd.Process.Pid, out: out, ended: done, code: func() int { <-done; return cmd.ProcessState.ExitCode() }}
}

// pauseIn stops the process (SIGSTOP) once it runs one of the programs named (a
// direct child: pg_basebackup, pg_restore, pg_ctl…), by when it holds its lease and
// not the registry's lock, which it takes only a moment before; the lease stays
// held until the returned function lets it go on (SIGCONT). What its child was doing
// goes on meanwhile.
func (p running) pauseIn(t *testing.T, programs ...string) (resume func()) {
	t.Helper()
	// What it ran meanwhile, for the message if none of them shows.
	seen := map[string]bool{}
	waitFor(t, func() string {
		return fmt.Sprintf("one of %v (its children seen: %v)", programs, slices.Sorted(maps.Keys(seen)))
	}, p.ended, p.out, func() bool {
		for pid, cmdline := range processes() {
			if f := strings.Fields(cmdline); len(f) > 0 && parent(pid) == p.pid {
				seen[filepath.Base(f[0])] = true
				if slices.Contains(programs, filepath.Base(f[0])) {
					return true
				}
			}
		}
		return false
	})
	must(t, syscall.Kill(p.pid, syscall.SIGSTOP))
	resumed := false
	resume = func() {
		if !resumed {
			resumed = true
			must(t, syscall.Kill(p.pid, syscall.SIGCONT))
		}
	}
	t.Cleanup(resume)
	return resume
}

// waitFor waits until ok() while the process (see background) runs.
func waitFor(t *testing.T, what func() string, ended <-chan struct{}, out *localserver.SyncBuffer, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !ok(); time.Sleep(5 * time.Millisecond) {
		select {
		case <-ended:
			t.Fatalf("it ended before %s:\n%s", what(), out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within a minute:\n%s", what(), out.String())
		}
	}
}

// builtInstance is a managed instance named after prefix in a temp dir (work, which
// the test may use too), with a 1-warehouse build, and its DSN.
func builtInstance(t *testing.T, prefix string) (work, name, dsn string) {
	t.Helper()
	work = t.TempDir()
	name = fmt.Sprintf("%s%d", prefix, os.Getpid())
	dsn = managedInstance(t, filepath.Join(work, "pg"), name, "--max-connections", "10")
	if code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1", "--workers", "2"); code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
	}
	return work, name, dsn
}

// TestVerbsRespectLeases: restore (with --force too) and stop refuse an instance a
// run is using (the run keeps its server and completes); destroy refuses one a backup
// is taking, which a run can use meanwhile; stop and destroy name the user and
// --force, restore only the user (nothing lets it replace a server in use).
func TestVerbsRespectLeases(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("builds storbench and runs it against a managed PostgreSQL")
	}
	work, name, dsn := builtInstance(t, "leased")
	bk := filepath.Join(work, "bk")
	if code, out, errOut := storbench(t, "backup", "--instance", name, "--to", bk, "--no-metrics"); code != 0 {
		t.Fatalf("backup: exit %d\n%s%s", code, out, errOut)
	}
	refused := func(by string, force bool, args ...string) {
		t.Helper()
		code, out, errOut := storbench(t, args...)
		if want := fmt.Sprintf("instance %s is in use by %s (pid ", name, by); code != 2 || !oneLine(errOut) || !strings.Contains(errOut, want) || strings.Contains(errOut, "--force") != force {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q, naming --force: %v\n%s", args, code, errOut, want, force, out)
		}
	}

	run := binaryIn{}.background(t, "run", "--dsn", dsn, "--users", "1", "--ramp", "0s", "--duration", "12s", "--no-metrics")
	waitFor(t, func() string { return "the run's window" }, run.ended, run.out, func() bool { return strings.Contains(run.out.String(), "timed") })
	refused("storbench run", false, "restore", "--instance", name, "--from", bk, "--no-metrics")
	refused("storbench run", false, "restore", "--instance", name, "--from", bk, "--force", "--no-metrics")
	refused("storbench run", true, "instance", "stop", "--name", name)
	if code := run.code(); code != 0 {
		t.Errorf("the run lost its server: exit %d\n%s", code, run.out.String())
	}

	bk2 := filepath.Join(work, "bk2")
	backup := binaryIn{}.background(t, "backup", "--instance", name, "--to", bk2, "--no-metrics")
	resume := backup.pauseIn(t, "pg_basebackup")
	refused("storbench backup", true, "instance", "destroy", "--name", name)
	if code, out, errOut := storbench(t, "run", "--dsn", dsn, "--users", "1", "--ramp", "0s", "--duration", "2s", "--no-metrics"); code != 0 {
		t.Errorf("a run beside the backup: exit %d\n%s%s", code, out, errOut)
	}
	resume()
	if code := backup.code(); code != 0 {
		t.Errorf("the backup failed: exit %d\n%s", code, backup.out.String())
	}
}

// TestRestoreExcludesUses: while a restore replaces an instance's database (logical:
// into the running server; physical: the server stopped, the copy swapped in), build,
// run, backup and instance start are refused in one line naming the restore, and
// nothing they would make is made; the restore completes.
func TestRestoreExcludesUses(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("builds storbench and restores a managed PostgreSQL")
	}
	work, name, dsn := builtInstance(t, "restored")
	for _, method := range []string{"logical", "physical"} {
		bk := filepath.Join(work, method)
		if code, out, errOut := storbench(t, "backup", "--instance", name, "--to", bk, "--method", method, "--no-metrics"); code != 0 {
			t.Fatalf("%s backup: exit %d\n%s%s", method, code, out, errOut)
		}
		restore := binaryIn{}.background(t, "restore", "--instance", name, "--from", bk, "--no-metrics")
		resume := restore.pauseIn(t, "pg_restore", "pg_ctl", "cp", "postgres")
		want := fmt.Sprintf("being restored by storbench restore (pid %d, since ", restore.pid)
		bk2 := filepath.Join(work, method+"-during")
		for _, args := range [][]string{
			{"run", "--dsn", dsn, "--users", "1", "--ramp", "0s", "--duration", "2s", "--no-metrics"},
			{"build", "--dsn", dsn, "--warehouses", "1"},
			{"backup", "--instance", name, "--to", bk2, "--no-metrics"},
			{"instance", "start", "--name", name},
		} {
			code, out, errOut := storbench(t, args...)
			if code == 0 || !oneLine(errOut) || strings.Count(errOut, want) != 1 || !strings.Contains(errOut, "wait for it to finish") {
				t.Errorf("%s restore: %v: exit %d, stderr %q; want one line with %q… wait for it to finish, once\n%s", method, args, code, errOut, want, out)
			}
		}
		if _, err := os.Lstat(bk2); !os.IsNotExist(err) {
			t.Errorf("%s restore: the refused backup made %s (%v)", method, bk2, err)
		}
		resume()
		if code := restore.code(); code != 0 {
			t.Fatalf("%s restore: exit %d\n%s", method, code, restore.out.String())
		}
	}
	if code, out, errOut := storbench(t, "check", "--dsn", dsn); code != 0 {
		t.Errorf("check after the restores: exit %d\n%s%s", code, out, errOut)
	}
}
