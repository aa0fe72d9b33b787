package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/bytesize"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/testsupport/pgtest"
)

// TestInstanceListMemory: the list's MEMORY is the memory the instance was created
// with (its cgroup's limit), not shared_buffers, which has its own CACHE column.
func TestInstanceListMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	t.Setenv("STORBENCH_HOME", t.TempDir())
	name := "listmem-" + strconv.Itoa(os.Getpid())
	dir := filepath.Join(t.TempDir(), "target")
	if code, out, errOut := storbench(t, "instance", "create", "--path", dir, "--memory", "1GB", "--name", name); code != 0 {
		t.Fatalf("instance create: exit %d\n%s%s", code, out, errOut)
	}
	t.Cleanup(func() { storbench(t, "instance", "destroy", "--name", name) })
	// Running, then stopped (its cgroup gone, the limit still the one it runs with).
	for _, state := range []string{"running", "stopped"} {
		if state == "stopped" {
			if code, out, errOut := storbench(t, "instance", "stop", "--name", name); code != 0 {
				t.Fatalf("instance stop: exit %d\n%s%s", code, out, errOut)
			}
		}
		code, out, _ := storbench(t, "instance", "list")
		lines := strings.Split(out, "\n")
		if code != 0 || len(lines) < 2 {
			t.Fatalf("instance list: exit %d\n%s", code, out)
		}
		// Columns are aligned: a value starts where its heading does.
		column := func(heading string) string {
			i := strings.Index(lines[0], heading)
			if i < 0 || len(lines[1]) <= i {
				t.Fatalf("instance list has no %s column:\n%s", heading, out)
			}
			return strings.Fields(lines[1][i:])[0]
		}
		if got := strings.TrimSpace(lines[1][strings.Index(lines[0], "MEMORY"):strings.Index(lines[0], "CACHE")]); got != "1GB" {
			t.Errorf("%s: MEMORY %q, want the 1GB the instance was created with:\n%s", state, got, out)
		}
		if got := column("CACHE"); got != "256MB" {
			t.Errorf("%s: CACHE %q, want shared_buffers 256MB:\n%s", state, got, out)
		}
	}
}

// TestInstanceVerbs: an instance created on a directory is usable by build and check
// through the DSN it prints, and destroy leaves nothing behind.
func TestInstanceVerbs(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	dir := filepath.Join(t.TempDir(), "target")
	code, out, errOut := storbench(t, "instance", "create", "--path", dir, "--memory", "512MB", "--name", "v1")
	if code != 0 {
		t.Fatalf("instance create: exit %d\n%s%s", code, out, errOut)
	}
	t.Cleanup(func() { storbench(t, "instance", "destroy", "--name", "v1") })
	if !strings.Contains(out, "dsn: postgres://postgres:xxxxx@") || !strings.Contains(out, "shared_buffers=128MB") || !strings.Contains(out, "limit: ") {
		t.Fatalf("create output lacks the DSN, the memory settings or the limits:\n%s", out)
	}
	// The DSN as create printed it (no password) is refused, saying how to give it.
	shown := regexp.MustCompile(`dsn: (\S+)`).FindStringSubmatch(out)[1]
	for _, args := range [][]string{{"build", "--warehouses", "1"}, {"run", "--duration", "2s", "--no-metrics"}, {"check"}} {
		code, _, errOut := storbench(t, append(args, "--dsn", shown)...)
		if code != 2 || !strings.Contains(errOut, `that is storbench instance v1, which admits only its own password: export STORBENCH_DSN="$(storbench instance dsn --name v1)"`) {
			t.Errorf("%s with the DSN create printed: exit %d, stderr %q; want 2 and how to give the password", args[0], code, errOut)
		}
	}
	dsn := instanceDSN(t, "v1")
	if code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1"); code != 0 {
		t.Fatalf("build on the instance: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := storbench(t, "check", "--dsn", dsn, "--all"); code != 0 {
		t.Fatalf("check on the instance: exit %d\n%s", code, out)
	}
	// Backup, change the data, restore: the data is back as it was; physical, then
	// logical (restored into the running instance).
	before := nextOrderIDs(t, dsn)
	backupRoundTrip(t, dsn, before)
	backupRoundTrip(t, dsn, before, "--method", "logical", "--jobs", "2")
	if code, _, errOut := storbench(t, "backup", "--instance", "v1", "--to", t.TempDir()+"/x", "--method", "tape"); code != 2 {
		t.Errorf("backup --method tape: exit %d (%s), want 2", code, errOut)
	}
	if code, _, errOut := storbench(t, "restore", "--instance", "v1", "--from", t.TempDir()); code != 2 {
		t.Errorf("restore from an unmarked directory: exit %d (%s), want 2", code, errOut)
	}
	// Other tests' instances share the list.
	if code, out, _ := storbench(t, "instance", "list"); code != 0 || !regexp.MustCompile(`(?m)^v1\s+postgres\s+\S+\s+running\s`).MatchString(out) {
		t.Fatalf("instance list: exit %d\n%s", code, out)
	}
	if code, out, _ := storbench(t, "instance", "stop", "--name", "v1"); code != 0 {
		t.Fatalf("instance stop: exit %d\n%s", code, out)
	}
	if code, out, _ := storbench(t, "instance", "status", "--name", "v1"); code != 0 || !strings.Contains(out, "stopped") {
		t.Fatalf("instance status after stop: exit %d\n%s", code, out)
	}
	// Stopped, with or without the password: the password is not what is missing.
	for _, d := range []string{shown, dsn} {
		code, _, errOut := storbench(t, "check", "--dsn", d)
		if code == 0 || !strings.Contains(errOut, "that is storbench instance v1, which is stopped: storbench instance start --name v1") || strings.Contains(errOut, "password") {
			t.Errorf("check of the stopped instance: exit %d, stderr %q; want it said stopped, with how to start it, and nothing of passwords", code, errOut)
		}
	}
	if code, out, _ := storbench(t, "instance", "destroy", "--name", "v1"); code != 0 {
		t.Fatalf("instance destroy: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still exists after destroy", dir)
	}

	// Bad input: one line, exit 2, nothing deleted.
	full := t.TempDir()
	keep := filepath.Join(full, "keep")
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"instance", "create", "--path", full},
		{"instance", "create", "--path", filepath.Join(full, "a", "b")},
		{"instance", "create", "--path", dir, "--memory", "lots"},
		{"instance", "create"},
		{"instance", "status", "--name", "nobody"},
		{"instance", "destroy", "--name", "nobody"},
	} {
		code, _, errOut := storbench(t, args...)
		if code != 2 || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, code, errOut)
		}
	}
	noBinaries := binaryIn{env: []string{"STORBENCH_PG_BINDIR=" + t.TempDir()}}
	if code, _, errOut := noBinaries.run(t, "instance", "create", "--path", filepath.Join(t.TempDir(), "nobin")); code != 2 || !strings.Contains(errOut, "initdb") {
		t.Errorf("create without server binaries: exit %d, %q; want 2 naming initdb", code, errOut)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("a failed create touched the user's directory: %v", err)
	}
}

func nextOrderIDs(t *testing.T, dsn string) int64 {
	t.Helper()
	return pgtest.Scalar[int64](t, dsn, "SELECT sum(d_next_o_id) FROM district")
}

// backupRoundTrip backs instance v1 up (with extra flags), changes d_next_o_id,
// restores, and expects sum(d_next_o_id) back at want and every condition to hold.
func backupRoundTrip(t *testing.T, dsn string, want int64, extra ...string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bk")
	jsonPath := filepath.Join(t.TempDir(), "backup.json")
	args := append([]string{"backup", "--instance", "v1", "--to", dir, "--json", jsonPath}, extra...)
	if code, out, errOut := storbench(t, args...); code != 0 || !strings.Contains(out, "MB/s") || !strings.Contains(out, "system, means over the whole backup command") {
		t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
	}
	checkBackupMetrics(t, jsonPath)
	pgtest.Exec(t, dsn, "UPDATE district SET d_next_o_id = d_next_o_id + 7")
	if code, out, errOut := storbench(t, "restore", "--instance", "v1", "--from", dir); code != 0 {
		t.Fatalf("restore %v: exit %d\n%s%s", extra, code, out, errOut)
	}
	if after := nextOrderIDs(t, dsn); after != want {
		t.Errorf("sum(d_next_o_id) after restore %v: %d, want %d as backed up", extra, after, want)
	}
	if code, out, _ := storbench(t, "check", "--dsn", dsn, "--all"); code != 0 {
		t.Fatalf("check after restore %v: exit %d\n%s", extra, code, out)
	}
}

// checkBackupMetrics expects the backup's result to say which disks held the instance
// and the backup, and that the backup was written to one of them (pg_basebackup and
// pg_dump sync what they write).
func checkBackupMetrics(t *testing.T, jsonPath string) {
	t.Helper()
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Bytes  int64           `json:"bytes"`
		System *metrics.Report `json:"system"`
	}
	if err := json.Unmarshal(b, &res); err != nil || res.System == nil || res.Bytes <= 0 {
		t.Fatalf("backup JSON without its figures (%v): %.300s", err, b)
	}
	roles := map[string]bool{}
	for _, p := range res.System.Placements {
		roles[p.Role] = len(p.Devices) > 0
	}
	if _, ok := roles["backup"]; !ok {
		t.Errorf("placements %+v lack the backup directory", res.System.Placements)
	}
	if roles["backup"] {
		var written float64
		for _, d := range res.System.Summary.Disks {
			written += d.WriteMBps
		}
		if written <= 0 {
			t.Errorf("a %d-byte backup wrote nothing to the disks: %+v", res.Bytes, res.System.Summary.Disks)
		}
	}
}

// TestInstanceCreateRefusesWhatTheMachineLacks: a memory limit above the machine's
// memory and CPUs it does not have are bad input, refused (exit 2, one line) before
// anything is created, as study plan refuses them: not an instance reported as limited
// by what cannot hold.
func TestInstanceCreateRefusesWhatTheMachineLacks(t *testing.T) {
	t.Parallel()
	machine, err := instance.MachineMemory()
	if err != nil {
		t.Skipf("the machine's memory is unknown here: %v", err)
	}
	home, work := t.TempDir(), t.TempDir()
	b := binaryIn{dir: work, env: []string{"STORBENCH_HOME=" + home}}
	n := runtime.NumCPU()
	for _, c := range []struct {
		flag, value string
		want        []string
	}{
		{"--memory", strconv.FormatInt(machine>>20+1024, 10) + "MB", []string{"is more than this machine's " + bytesize.Format(machine), "give at most"}},
		{"--cpus", fmt.Sprintf("%d-%d", n, n+2), []string{fmt.Sprintf("CPUs %d-%d not online", n, n+2), "give CPUs this machine has"}},
	} {
		path, name := filepath.Join(work, "refused"), "refused-"+strconv.Itoa(os.Getpid())
		code, out, errOut := b.run(t, "instance", "create", "--path", path, "--name", name, c.flag, c.value)
		if code == 0 {
			b.run(t, "instance", "destroy", "--name", name)
		}
		if code != 2 || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 || !strings.Contains(errOut, c.flag) {
			t.Errorf("%s %s: exit %d, stderr %q; want 2 and one line naming %s\n%s", c.flag, c.value, code, errOut, c.flag, out)
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%s %s: stderr %q lacks %q", c.flag, c.value, errOut, w)
			}
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("%s %s: %s was created (%v)", c.flag, c.value, path, err)
		}
		if l := listing(filepath.Join(home, "instances")); l != "" && l != "absent" {
			t.Errorf("%s %s: the registry holds %s", c.flag, c.value, l)
		}
	}
}

// TestInstanceCreateFailedStartLeavesNothing: a server that does not start (here: more
// connections than PostgreSQL accepts) fails create with an error naming its log, kept
// in the registry's directory, and leaves no instance and no directory behind.
func TestInstanceCreateFailedStartLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("initialises a PostgreSQL server")
	}
	t.Parallel()
	home, work := t.TempDir(), t.TempDir()
	b := binaryIn{dir: work, env: []string{"STORBENCH_HOME=" + home}}
	name := "nostart-" + strconv.Itoa(os.Getpid())
	path := filepath.Join(work, "pg")
	code, out, errOut := b.run(t, "instance", "create", "--path", path, "--name", name, "--max-connections", "262143")
	if code != 1 {
		b.run(t, "instance", "destroy", "--name", name)
		t.Fatalf("instance create with a server that cannot start: exit %d, want 1\n%s%s", code, out, errOut)
	}
	log := filepath.Join(home, "instances", name+".failed-start.log")
	if !strings.Contains(errOut, "server log: "+log) || !strings.Contains(errOut, "instance "+name+" is removed") {
		t.Errorf("stderr %q: want the server log %s named and the instance said removed", errOut, log)
	}
	if b, err := os.ReadFile(log); err != nil || !strings.Contains(string(b), "max_connections") {
		t.Errorf("the kept server log %s: %v\n%s", log, err, b)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("%s is left behind (%v)", path, err)
	}
	if code, out, _ := b.run(t, "instance", "list"); code != 0 || strings.Contains(out, name) {
		t.Errorf("instance list: exit %d, lists the failed instance:\n%s", code, out)
	}
}
