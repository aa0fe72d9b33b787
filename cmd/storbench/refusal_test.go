package main

import (
	"bytes"
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runBinary runs the built storbench and returns its exit code and output.
func runBinary(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return binaryIn{}.run(t, args...)
}

// run is runBinary in b.
func (b binaryIn) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := b.command(t, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *osexec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// A run refused for its metrics flags leaves the previous run's files as they were:
// the samples' CSV beside --json, and the --json file itself.
func TestRefusedRunKeepsPreviousFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds storbench and a SQLite database")
	}
	dir := t.TempDir()
	dsn := "sqlite://" + filepath.Join(dir, "tpcc.db")
	if code, out, errOut := runBinary(t, "build", "--dsn", dsn, "--warehouses", "1"); code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
	}
	jsonPath := filepath.Join(dir, "r.json")
	csvPath := filepath.Join(dir, "r.metrics.csv")
	// What an earlier run wrote there, which a run may replace, but not a refused one.
	previous := map[string]string{jsonPath: "{\"config\": {\"storbench_version\": \"dev\"}}\n", csvPath: "t,time,interval_s\n1,2025-01-01T00:00:00Z,1.000\n"}
	for f, content := range previous {
		must(t, os.WriteFile(f, []byte(content), 0o644))
	}
	for _, bad := range [][]string{
		{"--metrics-interval", "1ms"},
		{"--io-latency", "sometimes"},
		{"--path", filepath.Join(dir, "missing")},
		{"--metrics-device", "sda"},
	} {
		for _, args := range [][]string{
			append([]string{"run", "--dsn", dsn, "--ramp", "0s", "--duration", "1s", "--json", jsonPath}, bad...),
			append([]string{"run", "--metrics-only", "--duration", "1s", "--json", jsonPath}, bad...),
		} {
			code, out, errOut := runBinary(t, args...)
			if code != 2 || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
				t.Errorf("%v: exit %d, stderr %q; want 2 and one line\n%s", args, code, errOut, out)
			}
			for f, content := range previous {
				if b, _ := os.ReadFile(f); string(b) != content {
					t.Errorf("%v: %s was rewritten: %q", args, f, b)
					must(t, os.WriteFile(f, []byte(content), 0o644))
				}
			}
		}
	}
}

// Output files a user names (or that are named after them) are replaced only when
// storbench wrote them; any other file, a directory or a missing directory is refused
// before anything runs, with one line naming the file and the fix, and nothing written.
func TestOutputFilesNotStorbenchsRefused(t *testing.T) {
	t.Parallel() // its own directory and database only
	dir := t.TempDir()
	dsn := "sqlite://" + filepath.Join(dir, "tpcc.db")
	if code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1"); code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
	}
	at := func(name string) string { return filepath.Join(dir, name) }
	mine := map[string]string{at("notes.txt"): "precious\n", at("mydata.metrics.csv"): "user spreadsheet\n"}
	for f, content := range mine {
		must(t, os.WriteFile(f, []byte(content), 0o644))
	}
	must(t, os.Mkdir(at("adir"), 0o755))
	before := listing(dir)
	run := func(duration string) []string {
		return []string{"run", "--dsn", dsn, "--users", "1", "--ramp", "0s", "--duration", duration}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(run("2s"), "--no-metrics", "--json", at("notes.txt")), at("notes.txt") + " exists and is not a result storbench wrote: remove it, or give another --json"},
		{append(run("2s"), "--json", at("mydata.json")), at("mydata.metrics.csv") + " exists and is not a samples CSV storbench wrote: remove it, or give another --json or --metrics-csv"},
		{append(run("2s"), "--json", at("r.json"), "--metrics-csv", at("notes.txt")), at("notes.txt") + " exists and is not a samples CSV storbench wrote: remove it, or give another --metrics-csv"},
		{append(run("2s"), "--json", at("adir")), "--json " + at("adir") + " is not a regular file"},
		{append(run("2s"), "--json", at("missing/x.json")), "--json " + at("missing/x.json") + ": the directory " + at("missing") + " does not exist: create it, or give another --json"},
		{[]string{"run", "--metrics-only", "--duration", "1s", "--json", at("notes.txt")}, at("notes.txt") + " exists and is not a result storbench wrote"},
		{[]string{"fio", "--path", dir, "--profile", "hcibench-4k-70r", "--json", at("notes.txt")}, at("notes.txt") + " exists and is not a result storbench wrote"},
		{[]string{"backup", "--instance", "outfile-test-none", "--to", at("bk"), "--json", at("notes.txt")}, at("notes.txt") + " exists and is not a result storbench wrote"},
		{[]string{"restore", "--instance", "outfile-test-none", "--from", dir, "--json", at("mydata.json")}, at("mydata.metrics.csv") + " exists and is not a samples CSV storbench wrote"},
		{[]string{"results", "export", fixtureStudy, "--csv", at("notes.txt")}, at("notes.txt") + " exists and is not a CSV export storbench wrote: remove it, or give another --csv"},
		{[]string{"report", reportFixtures + "/run-fast.json", "-o", at("missing/r.html")}, "-o " + at("missing/r.html") + ": the directory " + at("missing") + " does not exist"},
	} {
		code, out, errOut := storbench(t, c.args...)
		if code != 2 || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args, code, errOut, c.want)
		}
		if out != "" {
			t.Errorf("%v: refused after starting:\n%s", c.args, out)
		}
		for f, content := range mine {
			if b, _ := os.ReadFile(f); string(b) != content {
				t.Errorf("%v: %s was overwritten: %.40q", c.args, f, b)
				must(t, os.WriteFile(f, []byte(content), 0o644))
			}
		}
		if got := listing(dir); got != before {
			t.Errorf("%v: wrote files: %s, had %s", c.args, got, before)
			before = got // each row's own files only
		}
	}
	// What storbench wrote it replaces: a run's result and samples, an export.
	for range 2 {
		for _, args := range [][]string{
			append(run("1s"), "--json", at("r.json")),
			{"results", "export", fixtureStudy, "--csv", at("steps.csv")},
		} {
			if code, out, errOut := storbench(t, args...); code != 0 {
				t.Errorf("%v: exit %d\n%s%s", args, code, out, errOut)
			}
		}
	}
}

// Bad run flags are refused with a message that names the flag and the fix.
func TestRunFlagMessages(t *testing.T) {
	t.Parallel() // its own directory and database only
	dsn := "sqlite://" + filepath.Join(t.TempDir(), "tpcc.db")
	if code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1"); code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
	}
	refused(t, `--mode "foo" is unknown (use procedures, stored procedures as HammerDB does, or sql, statements sent by the client)`, "run", "--dsn", dsn, "--mode", "foo", "--no-metrics")
	refused(t, "--retries -1 is negative (give 0", "run", "--dsn", dsn, "--retries", "-1", "--no-metrics")
}

// run, check and drop on a SQLite file that does not exist are refused, rather than
// creating an empty database there; build creates it.
func TestSQLiteMissingFile(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	dir := t.TempDir()
	path := filepath.Join(dir, "tpcc.db")
	dsn := "sqlite://" + path
	for _, args := range [][]string{
		{"run", "--dsn", dsn, "--ramp", "0s", "--duration", "1s", "--no-metrics"},
		{"check", "--dsn", dsn},
		{"drop", "--dsn", dsn},
	} {
		code, out, errOut := runBinary(t, args...)
		if code != 2 || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 ||
			!strings.Contains(errOut, "database file "+path+" does not exist") || !strings.Contains(errOut, "storbench build") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line saying the file does not exist and to build it\n%s", args, code, errOut, out)
		}
		if got := listing(dir); got != "" {
			t.Fatalf("%v left %s", args, got)
		}
	}
	if code, out, errOut := runBinary(t, "build", "--dsn", dsn, "--warehouses", "1"); code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runBinary(t, "check", "--dsn", dsn); code != 0 {
		t.Errorf("check after build: exit %d\n%s%s", code, out, errOut)
	}
}
