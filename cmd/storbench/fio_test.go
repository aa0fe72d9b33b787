package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// storbench fio on two directories prints both tables and the side-by-side
// comparison; compare reads two --json files back.
func TestFioCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("runs fio")
	}
	// Directories on the checkout's disk: the system temp dir may be a tmpfs.
	base := diskTempDir(t, "fio-cmd-test-")
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	both := filepath.Join(base, "both.json")
	code, out, errOut := storbench(t, "fio", "--path", a, "--path", b, "--profile", "seq-read-256k",
		"--size", "32MB", "--runtime", "1s", "--json", both)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"seq-read-256k 1/1", "B % of A", "A = " + a, "B = " + b, "result written to"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	files := map[string]string{}
	for name, dir := range map[string]string{"a": a, "b": b} {
		files[name] = filepath.Join(base, name+".json")
		code, out, errOut := storbench(t, "fio", "--path", dir, "--profile", "hcibench-4k-70r", "--size", "32MB",
			"--runtime", "1s", "--json", files[name])
		if code != 0 {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
	}
	code, out, errOut = storbench(t, "fio", "compare", files["a"], files["b"])
	if code != 0 || !strings.Contains(out, "hcibench-4k-70r") || !strings.Contains(out, "%") {
		t.Fatalf("compare: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, _ := storbench(t, "fio", "compare", files["a"], both); code != 2 {
		t.Errorf("compare with no common point: exit %d, want 2", code)
	}
}

func TestFioList(t *testing.T) {
	code, out, _ := storbench(t, "fio", "--list")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, name := range []string{"hcibench-4k-70r", "sql-data-8k", "data-matrix", "log-seq", "steady-4k-75r-qd32", "seq-read-256k", "seq-write-128k"} {
		if !strings.Contains(out, name) {
			t.Errorf("--list lacks %s:\n%s", name, out)
		}
	}
}

func TestFioBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"fio", "--profile", "hcibench-4k-70r"},
		{"fio", "--path", dir, "--profile", "nope"},
		{"fio", "--path", dir},
		{"fio", "--path", dir, "--all", "--size", "lots"},
		{"fio", "--device", "/dev/null", "--all"},
		{"fio", "--path", dir, "--path", dir, "--path", dir, "--all"},
		{"fio", "compare", "/nonexistent/a.json", "/nonexistent/b.json"},
	} {
		code, _, errOut := storbench(t, args...)
		if code != 2 || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, code, errOut)
		}
	}
}
