package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/fio"
)

// A broken study file is refused with its file and line, before anything runs.
func TestStudyPlanBadFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "bad.yaml")
	body := "name: bad\ntargets:\n  - name: a\n    path: /srv/a\n    memroy: 2GB\nworkload:\n  warehouses: 1\nexperiments:\n  - kind: user-sweep\n    users: [1]\n"
	if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"plan", "run"} {
		code, _, errOut := storbench(t, "study", verb, f)
		if code != 2 || !strings.Contains(errOut, "bad.yaml:5:") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("study %s: exit %d, stderr %q; want 2 and one line naming line 5", verb, code, errOut)
		}
	}
}

// storbench quick runs its small study end to end, and the results verbs read the
// store it leaves.
func TestQuickAndResults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and runs fio")
	}
	dir := diskTempDir(t, "quick-test-")
	code, out, errOut := storbench(t, "quick", "--path", dir)
	if code != 0 {
		t.Fatalf("quick: exit %d\n%s%s", code, out, errOut)
	}
	results := filepath.Join(dir, "results")
	if !strings.Contains(out, "results: "+results) {
		t.Errorf("quick does not say where the results are:\n%s", out)
	}

	code, out, _ = storbench(t, "results", "list", results)
	if code != 0 || !strings.Contains(out, "5 of 5 steps stored") || !strings.Contains(out, "NOPM") {
		t.Errorf("results list: exit %d\n%s", code, out)
	}
	code, out, _ = storbench(t, "results", "show", results, "1")
	if code != 0 || !strings.Contains(out, "database view (HammerDB-compatible)") || !strings.Contains(out, "system, means over the timed window") {
		t.Errorf("results show: exit %d\n%s", code, out)
	}
	csvPath := filepath.Join(dir, "steps.csv")
	if code, out, errOut := storbench(t, "results", "export", results, "--csv", csvPath); code != 0 {
		t.Fatalf("results export: exit %d\n%s%s", code, out, errOut)
	}
	b, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	// Header, three user-sweep steps, one fio point, one backup-restore cycle.
	if lines := strings.Count(string(b), "\n"); lines != 6 || !strings.HasPrefix(string(b), "seq,id,target") {
		t.Errorf("export has %d lines:\n%s", lines, b)
	}
	if code, _, _ := storbench(t, "results", "show", results, "99"); code != 2 {
		t.Errorf("show of a step that does not exist: exit %d, want 2", code)
	}
	// quick writes the report; the tiny study's data supports these sections only.
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatalf("quick wrote no report: %v", err)
	}
	for _, id := range []string{"headline", "throughput", "cpu", "latency", "timeline", "storage-profiles", "backup-restore", "audit", "environment"} {
		if !strings.Contains(string(html), `<section id="`+id+`">`) {
			t.Errorf("the quick study's report has no %s section", id)
		}
	}
	for _, id := range []string{"consolidation", "costs"} {
		if strings.Contains(string(html), `<section id="`+id+`">`) {
			t.Errorf("the quick study's report has a %s section without its data", id)
		}
	}
	code, out, _ = storbench(t, "compare", results, results, "--markdown")
	if code != 0 || !strings.Contains(out, "| quick/sweep | 4 |") || !strings.Contains(out, "100%") {
		t.Errorf("compare of a study with itself: exit %d\n%s", code, out)
	}

	if _, err := os.Stat(filepath.Join(dir, "pg")); !os.IsNotExist(err) {
		t.Errorf("the quick study's database directory is left after it finished: %v", err)
	}
}

// TestQuickSQLite: without PostgreSQL's server binaries quick runs on the embedded
// SQLite, so the README's main command works on a machine with only Go, and still runs
// the fio profile beside the study when fio is installed. It says which filesystem
// and disk PATH is on before measuring.
func TestQuickSQLite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs")
	}
	dir := diskTempDir(t, "quick-sqlite-test-")
	code, quick, errOut := storbenchWithoutPostgres(t, "quick", "--path", dir)
	if code != 0 || !strings.Contains(quick, "embedded SQLite") {
		t.Fatalf("quick: exit %d\n%s%s", code, quick, errOut)
	}
	if !strings.Contains(quick, dir+" is on ") || !strings.Contains(quick, "(disk: ") || !strings.Contains(quick, "building 1 warehouse\n") {
		t.Errorf("quick does not say where PATH is, or miscounts its warehouse:\n%s", quick)
	}
	code, out, _ := storbench(t, "results", "list", filepath.Join(dir, "results"))
	if code != 0 || !strings.Contains(out, "3 of 3 steps stored") {
		t.Errorf("results list: exit %d\n%s", code, out)
	}
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Errorf("no report: %v", err)
	}
	if _, ferr := fio.FindFio(); ferr == nil && !strings.Contains(string(html), `<section id="storage-profiles">`) {
		t.Errorf("fio is installed, but quick on SQLite ran no storage profile:\n%s", quick)
	}
	// A second quick starts from a fresh file in its own directory.
	if code, out, errOut := storbenchWithoutPostgres(t, "quick", "--path", dir); code != 0 {
		t.Fatalf("second quick: exit %d\n%s%s", code, out, errOut)
	}
	// A directory quick did not make is left alone.
	other := filepath.Join(t.TempDir(), "p")
	os.MkdirAll(filepath.Join(other, "sqlite"), 0o755)
	os.WriteFile(filepath.Join(other, "sqlite", "mine.db"), []byte("x"), 0o644)
	if code, _, _ := storbenchWithoutPostgres(t, "quick", "--path", other); code != 2 {
		t.Errorf("quick over a foreign sqlite directory: exit %d, want 2", code)
	}
	if b, err := os.ReadFile(filepath.Join(other, "sqlite", "mine.db")); err != nil || string(b) != "x" {
		t.Errorf("a file quick did not make was touched: %v", err)
	}
}
