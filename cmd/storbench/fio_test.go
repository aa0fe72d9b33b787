package main

import (
	"bytes"
	"os"
	osexec "os/exec"
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
	// Names fio's job file would cut (a comment) or expand: refused, as no escape
	// exists for them.
	var unwritable []string
	for _, name := range []string{"a;b", "a#b", "a$b"} {
		unwritable = append(unwritable, filepath.Join(dir, name))
		if err := os.Mkdir(unwritable[len(unwritable)-1], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	before := listing(dir)
	for _, args := range [][]string{
		{"fio", "--path", unwritable[0], "--profile", "seq-write-128k", "--size", "16MB", "--runtime", "1s", "--allow-memory-fs"},
		{"fio", "--path", unwritable[1], "--profile", "seq-write-128k", "--size", "16MB", "--runtime", "1s", "--allow-memory-fs"},
		{"fio", "--path", unwritable[2], "--profile", "seq-write-128k", "--size", "16MB", "--runtime", "1s", "--allow-memory-fs"},
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
	if after := listing(dir); after != before {
		t.Errorf("a refused fio changed %s:\nbefore: %s\nafter:  %s", dir, before, after)
	}
}

// fio reads ":" in a file name as a separator between files: a --path holding one
// still gets its test file there, and the files the split would name — a user's file
// beside the directory, one relative to the working directory — are not touched.
func TestFioPathWithColon(t *testing.T) {
	if testing.Short() {
		t.Skip("runs fio")
	}
	base := diskTempDir(t, "fio-colon-test-")
	target := filepath.Join(base, "data:x")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	// Unescaped, filename=BASE/data:x/… is BASE/data and x/… (from the working
	// directory, BASE here).
	userFile := filepath.Join(base, "data")
	userData := bytes.Repeat([]byte("the user's own data\n"), 1000)
	if err := os.WriteFile(userFile, userData, 0o644); err != nil {
		t.Fatal(err)
	}
	before := listing(base)
	cmd := osexec.Command(binary(t), "fio", "--path", target, "--profile", "seq-write-128k", "--size", "16MB", "--runtime", "1s")
	cmd.Dir = base
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "seq-write-128k 1/1") {
		t.Errorf("storbench fio did not run the profile: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(userFile); !bytes.Equal(got, userData) {
		t.Errorf("the user's file %s was changed (%d bytes, had %d)", userFile, len(got), len(userData))
	}
	if after := listing(base); after != before {
		t.Errorf("files appeared or vanished around the target:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
