package main

import (
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/study"
)

// storbenchWithoutPostgres runs the real binary as on a machine without PostgreSQL's
// server binaries: in a mount namespace of its own where the directories storbench
// finds them in are empty, with no initdb on PATH. It needs root (the tests run as
// root; initdb itself runs as postgres).
func storbenchWithoutPostgres(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("hiding PostgreSQL's binaries takes a mount namespace: run as root")
	}
	var hide []string
	for _, d := range []string{"/usr/lib/postgresql", pgConfigBinDir()} {
		st, err := os.Stat(d)
		hidden := slices.ContainsFunc(hide, func(h string) bool { return strings.HasPrefix(d, h+"/") })
		if err == nil && st.IsDir() && !hidden {
			hide = append(hide, d)
		}
	}
	var path []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err != nil {
			path = append(path, d)
		}
	}
	return storbenchHiding(t, hide, path, args...)
}

// storbenchHiding runs the binary in a mount namespace of its own where each of hide is
// an empty tmpfs, with PATH set to path when given: the machine as it would be without
// what those directories hold.
func storbenchHiding(t *testing.T, hide, path []string, args ...string) (int, string, string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("hiding directories takes a mount namespace: run as root")
	}
	script := `for d in $HIDE; do mount -t tmpfs none "$d" || exit 97; done; exec "$@"`
	cmd := osexec.Command("unshare", append([]string{"--mount", "--propagation", "private", "sh", "-c", script, "sh", binary(t)}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "STORBENCH_PG_BINDIR=") && !(path != nil && strings.HasPrefix(kv, "PATH=")) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if path != nil {
		cmd.Env = append(cmd.Env, "PATH="+strings.Join(path, string(filepath.ListSeparator)))
	}
	cmd.Env = append(cmd.Env, "HIDE="+strings.Join(hide, " "))
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if exit, ok := err.(*osexec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code == 97 {
		t.Fatalf("cannot hide %s: %s", hide, errOut.String())
	}
	return code, out.String(), errOut.String()
}

func pgConfigBinDir() string {
	out, err := osexec.Command("pg_config", "--bindir").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// A --path whose parent does not exist (a disk not mounted) is refused in one line
// before anything is made: quick would otherwise create the whole path and measure
// the disk below.
func TestQuickPathParentMissing(t *testing.T) {
	tmp := t.TempDir()
	missing := filepath.Join(tmp, "not-mounted", "storbench-quick")
	code, out, errOut := storbench(t, "quick", "--path", missing)
	if code != 2 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 ||
		!strings.Contains(errOut, filepath.Join(tmp, "not-mounted")+" does not exist") || !strings.Contains(errOut, "create the mount point or directory first") {
		t.Errorf("quick --path %s: exit %d, want 2 and one line naming the missing parent\n%s%s", missing, code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(tmp, "not-mounted")); !os.IsNotExist(err) {
		t.Errorf("quick made the missing parent: %v", err)
	}
	// A parent that is a file is named as what it is.
	file := filepath.Join(tmp, "a-file")
	must(t, os.WriteFile(file, nil, 0o644))
	code, out, errOut = storbench(t, "quick", "--path", filepath.Join(file, "q"))
	if code != 2 || !strings.Contains(errOut, file+" is not a directory") {
		t.Errorf("quick --path under a file: exit %d, want 2 and one line saying %s is not a directory\n%s%s", code, file, out, errOut)
	}
}

// A STORBENCH_PG_BINDIR that holds no PostgreSQL is a mistake to fix, not a reason to
// measure SQLite instead: exit 2, one line, nothing made.
func TestQuickBadPGBinDir(t *testing.T) {
	t.Setenv("STORBENCH_PG_BINDIR", filepath.Join(t.TempDir(), "no-postgres-here"))
	dir := filepath.Join(t.TempDir(), "quick")
	code, out, errOut := storbench(t, "quick", "--path", dir)
	if code != 2 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, "STORBENCH_PG_BINDIR=") || !strings.Contains(errOut, "unset it") {
		t.Errorf("quick with a wrong STORBENCH_PG_BINDIR: exit %d, want 2 and one line naming it\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("quick made %s before refusing: %v", dir, err)
	}
}

// Ctrl-C of quick says truthfully what the next quick does (it starts afresh), in one
// line without the cancelled context's text.
func TestQuickInterrupt(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("builds storbench and runs quick")
	}
	dir := diskTempDir(t, "quick-interrupt-")
	s := binaryIn{env: []string{"STORBENCH_HOME=" + t.TempDir()}}.stopAfter(t, syscall.SIGINT, func(out string) bool { return strings.Contains(out, "users 1, ") }, 30*time.Second,
		"quick", "--path", dir)
	line := strings.TrimSpace(s.stderr)
	if s.code == 0 || strings.Contains(line, "\n") || !strings.Contains(line, "the next storbench quick starts afresh") ||
		strings.Contains(line, "run it again to resume") || strings.Contains(line, "context canceled") {
		t.Errorf("quick interrupted: exit %d, stderr %q; want one line saying the next quick starts afresh", s.code, s.stderr)
	}
}

// On SQLite, run's default mode is the engine's best (sql), recorded in the result; an
// explicit procedures mode is refused up front, in one line without the
// max_connections hint, and writes nothing.
func TestRunSQLiteDefaultMode(t *testing.T) {
	t.Parallel() // its own directories
	dir := t.TempDir()
	dsn := "sqlite://" + filepath.Join(dir, "tpcc.db")
	code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1", "--workers", "1")
	if code != 0 || !strings.Contains(out, "built 1 warehouse (") {
		t.Fatalf("build: exit %d, want 0 and \"built 1 warehouse (\"\n%s%s", code, out, errOut)
	}
	jsonPath := filepath.Join(dir, "run.json")
	code, out, errOut = storbench(t, "run", "--dsn", dsn, "--users", "2", "--ramp", "0s", "--duration", "1s", "--no-metrics", "--json", jsonPath)
	if code != 0 || !strings.Contains(out, "sqlite, 2 users, 1 warehouse, ") || !strings.Contains(out, "mode sql") {
		t.Fatalf("run without --mode: exit %d\n%s%s", code, out, errOut)
	}
	b, err := os.ReadFile(jsonPath)
	must(t, err)
	var res struct {
		Config struct {
			Mode string `json:"mode"`
		} `json:"config"`
	}
	must(t, json.Unmarshal(b, &res))
	if res.Config.Mode != "sql" {
		t.Errorf("the result records mode %q, want sql, the mode run", res.Config.Mode)
	}

	refused := filepath.Join(dir, "refused.json")
	code, out, errOut = storbench(t, "run", "--dsn", dsn, "--mode", "procedures", "--users", "2", "--ramp", "0s", "--duration", "1s", "--json", refused)
	if code != 2 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, "--mode sql") ||
		strings.Contains(errOut, "max_connections") || strings.Contains(errOut, "open session") {
		t.Errorf("run --mode procedures on SQLite: exit %d, want 2 and one line naming --mode sql, without the max_connections hint\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(refused); !os.IsNotExist(err) {
		t.Errorf("the refused run wrote %s: %v", refused, err)
	}
}

// TestQuickWindowsLongEnough: by default quick's user sweep measures over windows
// the report names a winner by, with PostgreSQL and with SQLite.
func TestQuickWindowsLongEnough(t *testing.T) {
	def, err := time.ParseDuration(quickCmd().Flags().Lookup("duration").DefValue)
	if err != nil {
		t.Fatal(err)
	}
	for _, sqlite := range []bool{false, true} {
		file, err := study.QuickFile("/tmp/q", true, sqlite, def, 2.5)
		if err != nil {
			t.Fatal(err)
		}
		s, err := study.Parse("quick.yaml", file)
		if err != nil {
			t.Fatal(err)
		}
		// --wait-rate reaches the study's sampler.
		if s.Metrics.WaitRate != 2.5 {
			t.Errorf("SQLite %v: wait rate %g, want 2.5 as given", sqlite, s.Metrics.WaitRate)
		}
		for _, e := range s.Experiments {
			if e.Kind == study.UserSweep && e.Duration.Duration < driver.CounterWindow {
				t.Errorf("SQLite %v: quick's %s measures %s, under the report's %s", sqlite, e.Name, e.Duration.Duration, driver.CounterWindow)
			}
		}
	}
}

// What quick would refuse after measuring (a PATH/report.html of the user's, a
// PATH/results that is not a results store) it refuses up front, with a hint quick
// has the flag for (--path, not --results or report -o): exit 2, nothing measured or
// written.
func TestQuickRefusesUpFront(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, args ...string) (int, string, string) { return storbench(t, args...) }
	for _, c := range []struct {
		name, file, want string
		quick            func(t *testing.T, args ...string) (int, string, string)
	}{
		{"report", "report.html", "report.html exists and is not a report storbench wrote: remove it, or give another --path", run},
		{"results", filepath.Join("results", "notes.txt"), "results is not empty and not a storbench results store: give another --path", run},
		// Without PostgreSQL (and with fio) quick writes the storage profile there.
		{"storage profile", "storage.json", "storage.json exists and is not a result storbench wrote: remove it, or give another --path", storbenchWithoutPostgres},
	} {
		if _, err := fio.FindFio(); err != nil && c.name == "storage profile" {
			continue
		}
		dir := filepath.Join(t.TempDir(), "userdir")
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, c.file)), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, c.file), []byte("mine\n"), 0o644))
		start := time.Now()
		code, out, errOut := c.quick(t, "quick", "--path", dir, "--duration", "2s")
		if code != 2 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, c.want) ||
			strings.Contains(errOut, "--results") || strings.Contains(errOut, "report -o") {
			t.Errorf("%s: exit %d after %v, want 2 and one line with %q\n%s%s", c.name, code, time.Since(start), c.want, out, errOut)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 {
			t.Errorf("%s: quick wrote in %s before refusing: %v", c.name, dir, entries)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, c.file)); string(b) != "mine\n" {
			t.Errorf("%s: the user's %s is now %q", c.name, c.file, b)
		}
	}
}
