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
	previous := map[string]string{jsonPath: "{\"the previous run\": true}\n", csvPath: "t,cpu\n1,50\n"}
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
