package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// The report package's fixtures: a real study's results store and results taken
// from it.
const (
	reportFixtures = "../../internal/report/testdata"
	fixtureStudy   = reportFixtures + "/study"
)

func TestReportAndCompare(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.html")
	code, stdout, errOut := storbench(t, "report", fixtureStudy, "--costs", "../../examples/costs/hdd-vs-ssd.yaml", "-o", out)
	if code != 2 || !strings.Contains(errOut, `"fast/sweep"`) {
		t.Errorf("costs naming series the results lack: exit %d %s", code, errOut)
	}
	code, stdout, errOut = storbench(t, "report", fixtureStudy, reportFixtures+"/run-fast.json", "-o", out, "--title", "two <inputs>")
	if code != 0 {
		t.Fatalf("report: exit %d\n%s%s", code, stdout, errOut)
	}
	html, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "<title>two &lt;inputs&gt;</title>") || !strings.Contains(stdout, "report written to "+out) {
		t.Errorf("report title or message wrong: %s", stdout)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".r.html.*")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}

	code, stdout, _ = storbench(t, "compare", reportFixtures+"/run-fast.json", reportFixtures+"/run-slow.json")
	if code != 0 || !strings.Contains(stdout, "B % of A") || !strings.Contains(stdout, "A vs B") {
		t.Errorf("compare: exit %d\n%s", code, stdout)
	}
}

// TestReportDefaultOutput: without -o the report is beside the first results, named
// after them, and the one line printed says so; a second report replaces it, but a
// file of that name storbench did not write is refused and kept.
func TestReportDefaultOutput(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "results")
	if err := os.CopyFS(store, os.DirFS(fixtureStudy)); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "results.html")
	for range 2 {
		code, stdout, errOut := storbench(t, "report", store, reportFixtures+"/run-fast.json")
		if code != 0 || !strings.HasPrefix(stdout, "report written to "+want+" ") || strings.Count(stdout, "\n") != 1 {
			t.Fatalf("report without -o: exit %d, stdout %q, stderr %q; want one line naming %s", code, stdout, errOut, want)
		}
		if _, err := os.Stat(want); err != nil {
			t.Fatal(err)
		}
	}
	mine := []byte("<html><head><title>my notes</title></head></html>\n")
	if err := os.WriteFile(want, mine, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := storbench(t, "report", store)
	if code != 2 || !strings.Contains(errOut, want+" exists and is not a report storbench wrote") || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
		t.Errorf("report over a file storbench did not write: exit %d, stderr %q; want 2 and one line", code, errOut)
	}
	if got, _ := os.ReadFile(want); string(got) != string(mine) {
		t.Errorf("a file storbench did not write was overwritten")
	}
}

// TestCompareFitsWidth: compare's text fits 100 columns, its wide tables printed in
// parts that keep every column; --wide prints each table whole, on long lines.
func TestCompareFitsWidth(t *testing.T) {
	longest := func(text string) (n int) {
		for _, line := range strings.Split(text, "\n") {
			n = max(n, utf8.RuneCountInString(line))
		}
		return n
	}
	for _, pair := range [][2]string{
		{fixtureStudy, fixtureStudy},
		{reportFixtures + "/run-fast.json", reportFixtures + "/run-slow.json"},
		{reportFixtures + "/fio-fast.json", reportFixtures + "/fio-slow.json"},
	} {
		code, out, errOut := storbench(t, "compare", pair[0], pair[1])
		if code != 0 || longest(out) > 100 {
			t.Errorf("compare %s: exit %d %s, longest line %d characters, want at most 100:\n%s", pair, code, errOut, longest(out), out)
		}
		code, wide, _ := storbench(t, "compare", pair[0], pair[1], "--wide")
		if code != 0 || longest(wide) <= 100 {
			t.Errorf("compare --wide %s: exit %d, longest line %d characters: want the whole tables", pair, code, longest(wide))
		}
		// Every heading of the whole tables is in the parts.
		for _, heading := range []string{"avg I/O ms B", "p99 I/O latency ms at peak (bpftrace)", "mean ms % of A"} {
			if strings.Contains(wide, heading) && !strings.Contains(out, heading) {
				t.Errorf("compare %s: %q is in --wide only", pair, heading)
			}
		}
	}
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	notOurs := filepath.Join(dir, "plain")
	os.Mkdir(notOurs, 0o755)
	badCosts := filepath.Join(dir, "costs.yaml")
	os.WriteFile(badCosts, []byte("currency: USD\nconfigurations:\n  - name: a\n    hardware: [{item: x, price: -1}]\n"), 0o644)
	for _, args := range [][]string{
		{"report", "-o", filepath.Join(dir, "r.html")},
		{"report", "/nonexistent/results", "-o", filepath.Join(dir, "r.html")},
		{"report", notOurs, "-o", filepath.Join(dir, "r.html")},
		{"report", fixtureStudy, "-o", dir},
		{"report", fixtureStudy, "--costs", badCosts, "-o", filepath.Join(dir, "r.html")},
		{"compare", fixtureStudy},
		{"compare", reportFixtures + "/run-fast.json", reportFixtures + "/fio-fast.json"},
	} {
		code, _, errOut := storbench(t, args...)
		if code != 2 || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, code, errOut)
		}
	}
	if entries, _ := os.ReadDir(notOurs); len(entries) != 0 {
		t.Errorf("a directory that is not a results store was written to: %v", entries)
	}
}
