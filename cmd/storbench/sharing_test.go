package main

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/instance/cgroup"
	"github.com/storbench/storbench/internal/instance/localserver"
)

// Several STORBENCH_HOMEs and several storbench processes share one machine: the
// tests below check that they do not take each other's cgroups, create the same
// instance twice, or destroy an instance a run is using.

// needCgroups skips a test that needs real cgroups (root).
func needCgroups(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts PostgreSQL servers")
	}
	if _, err := cgroup.Support(); err != nil || os.Geteuid() != 0 {
		t.Skipf("needs root and cgroups: %v", err)
	}
}

// recorded reads an instance's state file in a STORBENCH_HOME.
func recorded(t *testing.T, home, name string) *instance.State {
	t.Helper()
	st, err := instance.Registry{Dir: filepath.Join(home, "instances")}.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// instanceDSN is the named instance's DSN, with its password (instance dsn), in the
// registry of this process's STORBENCH_HOME.
func instanceDSN(t *testing.T, name string) string {
	t.Helper()
	code, out, errOut := storbench(t, "instance", "dsn", "--name", name)
	if code != 0 || strings.Count(out, "\n") != 1 {
		t.Fatalf("instance dsn --name %s: exit %d\n%s%s", name, code, out, errOut)
	}
	return strings.TrimSpace(out)
}

// TestInstanceSameNameTwoHomes: the same instance name in two registries gets two
// cgroups, each keeping its own memory limit, and status reads the limit in force,
// saying so loudly when something else changed it.
func TestInstanceSameNameTwoHomes(t *testing.T) {
	needCgroups(t)
	name := fmt.Sprintf("twohomes%d", os.Getpid())
	homes := []string{t.TempDir(), t.TempDir()}
	memory := []string{"1GB", "128MB"}
	for i, home := range homes {
		t.Setenv("STORBENCH_HOME", home)
		code, out, errOut := storbench(t, "instance", "create", "--name", name, "--memory", memory[i],
			"--max-connections", "10", "--path", filepath.Join(t.TempDir(), "pg"))
		if code != 0 {
			t.Fatalf("create in home %d: exit %d\n%s%s", i, code, out, errOut)
		}
		t.Cleanup(func() {
			t.Setenv("STORBENCH_HOME", home)
			storbench(t, "instance", "destroy", "--force", "--name", name)
		})
	}
	groups := make([]string, 2)
	for i, home := range homes {
		groups[i] = recorded(t, home, name).Cgroup
		if groups[i] == "" {
			t.Fatalf("home %d: the instance has no cgroup", i)
		}
	}
	if groups[0] == groups[1] {
		t.Fatalf("both homes' instances %s share cgroup %s", name, groups[0])
	}
	limitFile := func(i int) string {
		return filepath.Join("/sys/fs/cgroup/memory/storbench", groups[i], "memory.limit_in_bytes")
	}
	if _, err := os.Stat(limitFile(0)); err != nil {
		limitFile = func(i int) string { return filepath.Join("/sys/fs/cgroup/storbench", groups[i], "memory.max") }
	}
	for i, want := range []string{"1073741824", "134217728"} {
		b, err := os.ReadFile(limitFile(i))
		if err != nil || strings.TrimSpace(string(b)) != want {
			t.Errorf("home %d: %s = %q (%v), want %s", i, limitFile(i), b, err, want)
		}
		t.Setenv("STORBENCH_HOME", homes[i])
		code, out, _ := storbench(t, "instance", "status", "--name", name)
		if wantLine := "in force: memory " + []string{"1GB", "128MB"}[i] + " enforced"; code != 0 || !strings.Contains(out, wantLine) {
			t.Errorf("home %d: status: exit %d, want %q:\n%s", i, code, wantLine, out)
		}
	}
	// Another process resets the first instance's limit: status says what is in force.
	if err := os.WriteFile(limitFile(0), []byte("134217728"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("STORBENCH_HOME", homes[0])
	code, out, _ := storbench(t, "instance", "status", "--name", name)
	if code != 0 || !strings.Contains(out, "MEMORY LIMIT MISMATCH") || !strings.Contains(out, "enforces 128MB, not the 1GB asked") {
		t.Errorf("status after the limit changed: exit %d, want the mismatch:\n%s", code, out)
	}
}

// TestInstanceConcurrentCreate: two storbench processes create the same instance at
// once; one succeeds, the other is refused (exit 2, one line naming it), and after
// destroy no server of either is left.
func TestInstanceConcurrentCreate(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL servers")
	}
	home := t.TempDir()
	name := fmt.Sprintf("race%d", os.Getpid())
	base := t.TempDir()
	before := processes()
	type outcome struct {
		code        int
		out, errOut string
	}
	done := make(chan outcome, 2)
	for _, dir := range []string{"a", "b"} {
		cmd := osexec.Command(binary(t), "instance", "create", "--name", name, "--max-connections", "10",
			"--path", filepath.Join(base, dir))
		cmd.Env = append(os.Environ(), "STORBENCH_HOME="+home)
		var out, errOut localserver.SyncBuffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() {
			_ = cmd.Wait()
			done <- outcome{cmd.ProcessState.ExitCode(), out.String(), errOut.String()}
		}()
	}
	var codes []int
	for range 2 {
		o := <-done
		codes = append(codes, o.code)
		if o.code != 0 && (o.code != 2 || strings.Count(strings.TrimRight(o.errOut, "\n"), "\n") != 0 || !strings.Contains(o.errOut, name)) {
			t.Errorf("the refused create: exit %d, stderr %q; want 2 and one line naming %s", o.code, o.errOut, name)
		}
	}
	if !(codes[0] == 0) == !(codes[1] == 0) {
		t.Errorf("exit codes %v: want exactly one create to succeed", codes)
	}
	t.Setenv("STORBENCH_HOME", home)
	if code, out, errOut := storbench(t, "instance", "destroy", "--name", name); code != 0 {
		t.Errorf("destroy: exit %d\n%s%s", code, out, errOut)
	}
	if left := leftovers(base, before); len(left) > 0 {
		t.Errorf("servers left after destroy: %q", left)
	}
}

// TestInstanceDestroyInUse: destroy refuses an instance a run is using, naming the
// run, and --force destroys it anyway.
func TestInstanceDestroyInUse(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	home := os.Getenv("STORBENCH_HOME") // the package's own (testhome), which the runs inherit
	name := fmt.Sprintf("inuse%d", os.Getpid())
	base := t.TempDir()
	code, out, errOut := storbench(t, "instance", "create", "--name", name, "--max-connections", "10",
		"--path", filepath.Join(base, "pg"))
	if code != 0 {
		t.Fatalf("create: exit %d\n%s%s", code, out, errOut)
	}
	t.Cleanup(func() { storbench(t, "instance", "destroy", "--force", "--name", name) })
	dsn := instanceDSN(t, name)
	if code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1", "--workers", "2"); code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
	}
	// Its own leases only: other tests' runs share the home.
	if leases, _ := filepath.Glob(filepath.Join(home, "instances", "leases", name+".*")); len(leases) > 0 {
		t.Errorf("the finished build left its lease behind: %q", leases)
	}
	before := processes()
	// The DSN in the environment: its password is not for every user's eyes.
	cmd := binaryIn{env: []string{"STORBENCH_DSN=" + dsn}}.command(t, "run", "--users", "1", "--ramp", "1s", "--duration", "8s", "--no-metrics")
	var runOut, runErr localserver.SyncBuffer
	cmd.Stdout, cmd.Stderr = &runOut, &runErr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(runOut.String(), "timed"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the run did not reach its window:\n%s%s", runOut.String(), runErr.String())
		}
	}
	code, out, errOut = storbench(t, "instance", "destroy", "--name", name)
	want := fmt.Sprintf("instance %s is in use by storbench run (pid %d", name, cmd.Process.Pid)
	if code != 2 || !strings.Contains(errOut, want) || !strings.Contains(errOut, "--force") || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
		t.Fatalf("destroy during the run: exit %d, stderr %q; want 2 and one line with %q and --force", code, errOut, want)
	}
	if _, err := os.Stat(filepath.Join(base, "pg")); err != nil {
		t.Fatalf("the refused destroy removed the instance's directory: %v", err)
	}
	if code, out, errOut := storbench(t, "instance", "destroy", "--force", "--name", name); code != 0 {
		t.Fatalf("destroy --force: exit %d\n%s%s", code, out, errOut)
	}
	// The run has lost its server; its end is not what this test is about. Killed, it
	// leaves its lease file behind, as a crashed run would.
	_ = cmd.Process.Kill()
	<-exited
	if left := leftovers(base, before); len(left) > 0 {
		t.Errorf("servers left after destroy: %q", left)
	}
	// The lease the killed run left is not a use.
	code, out, errOut = storbench(t, "instance", "create", "--name", name, "--max-connections", "10",
		"--path", filepath.Join(base, "pg2"))
	if code != 0 {
		t.Fatalf("create again: exit %d\n%s%s", code, out, errOut)
	}
	if leases, _ := filepath.Glob(filepath.Join(home, "instances", "leases", name+".*")); len(leases) == 0 {
		t.Fatal("the killed run left no lease file: the test would not check that dead leases are ignored")
	}
	if code, out, errOut := storbench(t, "instance", "destroy", "--name", name); code != 0 {
		t.Errorf("destroy with a dead process's lease: exit %d\n%s%s", code, out, errOut)
	}
}

// TestRunReportsOOMKill: a backend of a managed instance killed by the OOM killer
// during a run (the users ride out the server's restart) is named in the result, with
// the memory limit, instead of showing only as lost connections.
func TestRunReportsOOMKill(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	needCgroups(t)
	home := os.Getenv("STORBENCH_HOME") // the package's own (testhome)
	name := fmt.Sprintf("runoom%d", os.Getpid())
	code, out, errOut := storbench(t, "instance", "create", "--name", name, "--memory", "128MB",
		"--max-connections", "10", "--path", filepath.Join(t.TempDir(), "pg"))
	if code != 0 {
		t.Fatalf("create: exit %d\n%s%s", code, out, errOut)
	}
	t.Cleanup(func() { storbench(t, "instance", "destroy", "--force", "--name", name) })
	dsn := instanceDSN(t, name)
	if code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1", "--workers", "2"); code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
	}
	jsonPath := filepath.Join(t.TempDir(), "run.json")
	type outcome struct {
		code        int
		out, errOut string
	}
	done := make(chan outcome, 1)
	go func() {
		code, out, errOut := storbench(t, "run", "--dsn", dsn, "--users", "1", "--ramp", "1s", "--duration", "6s",
			"--no-metrics", "--json", jsonPath)
		done <- outcome{code, out, errOut}
	}()
	// The run's lease holds the OOM kills before it: the kill must come after it.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if leases, _ := filepath.Glob(filepath.Join(home, "instances", "leases", name+".*")); len(leases) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run took no lease on the instance within 30 s")
		}
	}
	// Another session's in-memory sort outgrows the 128 MB group.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	_, qerr := conn.Exec(ctx, "SET work_mem = '4GB'; SELECT count(*) FROM (SELECT g FROM generate_series(1, 20000000) g ORDER BY random()) s")
	conn.Close(ctx)
	if qerr == nil {
		t.Fatal("a 20-million-row in-memory sort fitted in 128 MB")
	}
	o := <-done
	res := readResult(t, jsonPath)
	notes := strings.Join(res.Notes, "\n")
	if !strings.Contains(notes, "OOM killer killed") || !strings.Contains(notes, "memory limit 128MB") {
		t.Errorf("the result's notes do not name the OOM kill and the limit: %q\nexit %d\n%s%s", res.Notes, o.code, o.out, o.errOut)
	}
	if !strings.Contains(o.out, "OOM killer") {
		t.Errorf("the printed result does not name the OOM kill:\n%s", o.out)
	}
}
