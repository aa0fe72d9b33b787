package main

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("starts PostgreSQL and runs fio")
	}
	dir := diskTempDir(t, "quick-test-")
	code, out, errOut := storbench(t, "quick", "--duration", "5s", "--path", dir)
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
	for _, id := range []string{"findings", "tpcc-sweep", "timeline", "storage-profiles", "backup-restore", "audit", "environment"} {
		if !strings.Contains(string(html), `<section id="`+id+`">`) {
			t.Errorf("the quick study's report has no %s section", id)
		}
	}
	// One configuration: its headline would be one row, which the findings say.
	for _, id := range []string{"consolidation", "costs", "headline"} {
		if strings.Contains(string(html), `<section id="`+id+`">`) {
			t.Errorf("the quick study's report has a %s section without its data, or of one row", id)
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
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("builds and runs")
	}
	dir := diskTempDir(t, "quick-sqlite-test-")
	code, quick, errOut := storbenchWithoutPostgres(t, "quick", "--duration", "5s", "--path", dir)
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
	// A second quick starts from a fresh file in its own directory, removing only
	// what the first wrote: a user's files among its steps and beside its database
	// stay, and are named.
	mine := []string{filepath.Join("results", "steps", "mine.txt"), filepath.Join("sqlite", "notes.txt")}
	for _, f := range mine {
		must(t, os.WriteFile(filepath.Join(dir, f), []byte("mine\n"), 0o644))
	}
	code, quick, errOut = storbenchWithoutPostgres(t, "quick", "--duration", "5s", "--path", dir)
	if code != 0 {
		t.Fatalf("second quick: exit %d\n%s%s", code, quick, errOut)
	}
	for _, f := range mine {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || string(b) != "mine\n" {
			t.Errorf("the second quick removed or changed the user's %s: %v", f, err)
		}
		if !strings.Contains(quick, "kept in "+filepath.Join(dir, filepath.Dir(f))+": "+filepath.Base(f)+" (") {
			t.Errorf("the second quick does not name the %s it kept:\n%s", f, quick)
		}
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

// The README's own way: `storbench study run examples/FILE.yaml` from the checkout,
// with the default results store, relative to the working directory. A study
// interrupted leaves its instance, which instance list shows with its study; the
// next run picks it up and finishes, and its instances are gone from the list; its
// backup-restore step says its backups shared the data's filesystem.
func TestStudyRunRelativeResults(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("builds storbench and runs a study on PostgreSQL")
	}
	dir := diskTempDir(t, "study-relative-")
	// A home of its own: the instance list must hold this study's instances alone.
	in := binaryIn{dir: dir, env: []string{"STORBENCH_HOME=" + t.TempDir()}}
	must(t, os.Mkdir(filepath.Join(dir, "examples"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "examples", "tiny.yaml"), []byte(`name: tiny
targets:
  - name: a
    path: `+filepath.Join(dir, "pg")+`
workload:
  warehouses: 1
experiments:
  - name: sweep
    kind: user-sweep
    users: [1, 2]
    ramp: 1s
    duration: 3s
  - kind: backup-restore
    cycles: 1
`), 0o644))
	s := in.stopAfter(t, syscall.SIGINT, func(out string) bool { return strings.Contains(out, "step 2/3") }, time.Minute,
		"study", "run", "examples/tiny.yaml")
	if s.code == 0 || !strings.Contains(s.stderr, "study interrupted at step 2/3") {
		t.Fatalf("interrupted study: exit %d\n%s%s", s.code, s.stdout, s.stderr)
	}
	code, out, errOut := in.run(t, "instance", "list")
	if code != 0 || !regexp.MustCompile(`(?m)^a-[0-9a-f]{8}\s+tiny\s+postgres\s+\S+\s+stopped\s.*`+regexp.QuoteMeta(filepath.Join(dir, "pg"))+`\s+`+
		regexp.QuoteMeta(filepath.Join(dir, "results", "tiny"))+`$`).MatchString(out) {
		t.Errorf("instance list does not show the study's instance with its study: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.HasPrefix(out, "NAME  ENGINE  VERSION  STATE  PORT  MEMORY  CACHE  CPUS  PATH\n\ninstances of studies") {
		t.Errorf("instance list changed its table of plain instances:\n%s", out)
	}
	code, out, errOut = in.run(t, "study", "run", "examples/tiny.yaml")
	if code != 0 || !strings.Contains(out, "resuming: 1 of 3 steps") || !strings.Contains(out, "results: "+filepath.Join(dir, "results", "tiny")) {
		t.Fatalf("resumed study: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := in.run(t, "results", "list", "results/tiny"); code != 0 || !strings.Contains(out, "3 of 3 steps stored") {
		t.Errorf("results list: exit %d\n%s", code, out)
	}
	// The backups went to the results store, beside the data.
	if code, out, _ := in.run(t, "results", "show", "results/tiny", "3"); code != 0 || !strings.Contains(out, "backup on the same filesystem as the data (") {
		t.Errorf("the backup-restore step does not say its backups shared the data's filesystem: exit %d\n%s", code, out)
	}
	if code, out, _ := in.run(t, "instance", "list"); code != 0 || strings.Contains(out, "tiny") {
		t.Errorf("the finished study's instances are still listed: exit %d\n%s", code, out)
	}
}

// study plan refuses what study run could not do on this machine, in one line: a
// target whose parent directory is missing (a disk not mounted), CPUs it does not have.
func TestStudyPlanChecksTheMachine(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "s.yaml")
	for _, c := range []struct{ target, want string }{
		{"    path: " + filepath.Join(dir, "not-mounted", "pg") + "\n", filepath.Join(dir, "not-mounted") + " does not exist"},
		{"    path: " + filepath.Join(dir, "pg") + "\n    cpus: 0-" + strconv.Itoa(runtime.NumCPU()) + "\n", "not online; this machine's CPUs are"},
	} {
		must(t, os.WriteFile(f, []byte("name: m\ntargets:\n  - name: a\n"+c.target+
			"workload:\n  warehouses: 1\nexperiments:\n  - kind: user-sweep\n    users: [1]\n"), 0o644))
		code, out, errOut := storbench(t, "study", "plan", f)
		if code != 2 || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("study plan: exit %d, stderr %q, want 2 and one line with %q\n%s", code, errOut, c.want, out)
		}
		// study run refuses the same before it makes (or, with --restart, clears) anything.
		results := filepath.Join(dir, "results")
		code, out, errOut = storbench(t, "study", "run", f, "--results", results, "--restart")
		if _, err := os.Stat(results); code != 2 || !strings.Contains(errOut, c.want) || err == nil {
			t.Errorf("study run: exit %d, stderr %q, results folder made: %v; want 2, %q and nothing made\n%s", code, errOut, err == nil, c.want, out)
		}
	}
}

// On a machine that cannot apply a memory limit (here: no cgroup hierarchy), a study
// that asks for one is refused by study plan and study run before anything runs,
// unless it allows unapplied limits; then the plan says the limit will be missing.
func TestStudyPlanUnappliedMemoryLimit(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "s.yaml")
	body := "name: m\ntargets:\n  - name: a\n    path: " + filepath.Join(dir, "pg") + "\n    memory: 1GB\n" +
		"workload:\n  warehouses: 1\nexperiments:\n  - kind: user-sweep\n    users: [1]\n"
	must(t, os.WriteFile(f, []byte(body), 0o644))
	noCgroups := []string{"/sys/fs/cgroup"}
	for _, verb := range []string{"plan", "run"} {
		args := []string{"study", verb, f}
		if verb == "run" {
			args = append(args, "--results", filepath.Join(dir, "results"))
		}
		code, out, errOut := storbenchHiding(t, noCgroups, nil, args...)
		if code != 2 || !strings.Contains(errOut, "target a asks for a memory limit, which this machine cannot apply") ||
			!strings.Contains(errOut, "allow_unapplied_limits: true") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("study %s without cgroups: exit %d, stderr %q; want 2 and one line naming allow_unapplied_limits\n%s", verb, code, errOut, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "results")); err == nil {
		t.Error("the refused study run made its results folder")
	}
	must(t, os.WriteFile(f, []byte("allow_unapplied_limits: true\n"+body), 0o644))
	code, out, errOut := storbenchHiding(t, noCgroups, nil, "study", "plan", f)
	if code != 0 || !strings.Contains(out, "a: MEMORY LIMIT NOT APPLIED, allowed by allow_unapplied_limits") {
		t.Errorf("study plan with allow_unapplied_limits: exit %d; want 0 and a note that the limit is not applied\n%s%s", code, out, errOut)
	}
}

// An explicit workload.mode a target's engine cannot run is refused by study plan,
// in one line naming the target, the file's line and the fix, before anything runs;
// without the key each target takes its engine's best.
func TestStudyPlanImpossibleMode(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "s.yaml")
	study := func(mode string) {
		must(t, os.WriteFile(f, []byte("name: m\ntargets:\n  - name: lite\n    kind: external\n    dsn: sqlite://"+filepath.Join(dir, "tpcc.db")+
			"\nworkload:\n  warehouses: 1\n"+mode+"experiments:\n  - kind: user-sweep\n    users: [1]\n"), 0o644))
	}
	study("  mode: procedures\n")
	code, out, errOut := storbench(t, "study", "plan", f)
	if code != 2 || !strings.Contains(errOut, "s.yaml:8: target lite: sqlite has no procedures mode") ||
		!strings.Contains(errOut, "give mode sql, or leave mode out") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("study plan, procedures on SQLite: exit %d, stderr %q; want 2 and one line naming the target and the line\n%s", code, errOut, out)
	}
	for _, mode := range []string{"  mode: sql\n", ""} {
		study(mode)
		if code, out, errOut := storbench(t, "study", "plan", f); code != 0 {
			t.Errorf("study plan with %q: exit %d\n%s%s", mode, code, out, errOut)
		}
	}
}

// Study, cost and results files are read only when they are regular files of a
// bounded size: a device or a FIFO named as one is refused at once (it neither grows
// storbench's memory without end nor blocks it), in one line naming the file.
func TestInputFilesReadBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "study.yaml")
	must(t, syscall.Mkfifo(fifo, 0o644))
	big := filepath.Join(dir, "big.yaml")
	must(t, os.WriteFile(big, nil, 0o644))
	must(t, os.Truncate(big, 2<<20))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"study", "plan", "/dev/zero"}, "study file /dev/zero is not a regular file (a character device)"},
		{[]string{"study", "plan", "/dev/urandom"}, "study file /dev/urandom is not a regular file (a character device)"},
		{[]string{"study", "plan", fifo}, "study file " + fifo + " is not a regular file (a FIFO)"},
		{[]string{"study", "run", fifo, "--results", filepath.Join(dir, "results")}, "study file " + fifo + " is not a regular file (a FIFO)"},
		{[]string{"study", "plan", big}, "study file " + big + " is 2MB, more than the 1MB a study file may hold"},
		{[]string{"report", dir, "--costs", "/dev/zero"}, "cost model /dev/zero is not a regular file (a character device)"},
		{[]string{"report", fifo, "-o", filepath.Join(dir, "r.html")}, "results " + fifo + " is not a regular file (a FIFO)"},
		{[]string{"compare", "/dev/zero", fifo}, "results /dev/zero is not a regular file (a character device)"},
	} {
		code, out, errOut := runWithin(t, 10*time.Second, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("storbench %v: exit %d, stderr %q; want 2 and one line with %q\n%s", c.args, code, errOut, c.want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "results")); err == nil {
		t.Error("the refused study run made its results folder")
	}
}

// Directories that nest or are one (two targets', a target's WAL through a symbolic
// link or its own path, the results store and a target) are refused by study plan and study run, each at its
// line, before anything is made.
func TestStudyPlanRefusesNestedPaths(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir()) // the only link in the paths is the test's
	if err != nil {
		t.Fatal(err)
	}
	disk := filepath.Join(dir, "disk")
	must(t, os.MkdirAll(filepath.Join(disk, "a"), 0o755))
	alias := filepath.Join(dir, "alias")
	must(t, os.Symlink(filepath.Join(disk, "a"), alias))
	f := filepath.Join(dir, "s.yaml")
	for _, c := range []struct {
		name, b, results, want string
	}{
		{"target in target", "    path: " + filepath.Join(disk, "a", "b") + "\n", "",
			"s.yaml:6: targets[1].path: " + filepath.Join(disk, "a", "b") + " is inside targets[0].path " + filepath.Join(disk, "a") + " (line 4)"},
		{"wal through a link", "    path: " + filepath.Join(disk, "b") + "\n    wal_path: " + filepath.Join(alias, "wal") + "\n", "",
			"s.yaml:7: targets[1].wal_path: " + filepath.Join(alias, "wal") + " (" + filepath.Join(disk, "a", "wal") + ") is inside targets[0].path " + filepath.Join(disk, "a") + " (line 4)"},
		{"two targets one path", "    path: " + filepath.Join(disk, "a") + "/\n", "",
			"s.yaml:6: targets[1].path: " + filepath.Join(disk, "a") + "/ is also targets[0].path " + filepath.Join(disk, "a") + " (line 4)"},
		{"wal_path is its path", "    path: " + filepath.Join(disk, "b") + "\n    wal_path: " + filepath.Join(disk, "b") + "/\n", "",
			"s.yaml:7: targets[1].wal_path: " + filepath.Join(disk, "b") + "/ is also targets[1].path " + filepath.Join(disk, "b") + " (line 6)"},
		{"results in a target", "    path: " + filepath.Join(dir, "b") + "\n", filepath.Join(disk, "a", "results"),
			"s.yaml:4: targets[0].path: " + filepath.Join(disk, "a") + " holds the results store " + filepath.Join(disk, "a", "results") + " (--results)"},
		{"a target in the results", "    path: " + filepath.Join(dir, "b") + "\n", disk,
			"s.yaml:4: targets[0].path: " + filepath.Join(disk, "a") + " is inside the results store " + disk + " (--results)"},
	} {
		must(t, os.WriteFile(f, []byte("name: m\ntargets:\n  - name: a\n    path: "+filepath.Join(disk, "a")+"\n  - name: b\n"+c.b+
			"workload:\n  warehouses: 1\nexperiments:\n  - kind: user-sweep\n    users: [1]\n"), 0o644))
		for _, verb := range []string{"plan", "run"} {
			args := []string{"study", verb, f}
			if c.results != "" {
				args = append(args, "--results", c.results)
			} else if verb == "run" {
				args = append(args, "--results", filepath.Join(dir, "results"))
			}
			code, out, errOut := storbench(t, args...)
			if code != 2 || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("%s: study %s: exit %d, stderr %q; want 2 and one line with %q\n%s", c.name, verb, code, errOut, c.want, out)
			}
		}
		if entries, _ := os.ReadDir(disk); len(entries) != 1 {
			t.Errorf("%s: the refused study made something in %s: %v", c.name, disk, entries)
		}
		if _, err := os.Stat(filepath.Join(dir, "results")); err == nil {
			t.Errorf("%s: the refused study run made its results folder", c.name)
		}
	}
}

// study plan of a study written for another machine prints the plan, then every
// refusal against this machine, each at its line, and exits 2; study run refuses it
// before anything runs.
func TestStudyPlanPrintsPlanThenRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := filepath.Join(dir, "s.yaml")
	must(t, os.WriteFile(f, []byte("name: m\ntargets:\n  - name: a\n    path: "+filepath.Join(dir, "not-mounted", "pg")+
		"\n    cpus: 0-"+strconv.Itoa(runtime.NumCPU())+"\n  - name: b\n    path: "+filepath.Join(dir, "pg")+
		"\nworkload:\n  warehouses: 1\nexperiments:\n  - kind: user-sweep\n    users: [1]\n"), 0o644))
	code, out, errOut := storbench(t, "study", "plan", f)
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if code != 2 || !strings.Contains(out, "study m: 2 targets") || !strings.Contains(out, "estimated total") || len(lines) != 2 ||
		!strings.HasPrefix(lines[0], "storbench: "+f+":4: targets[0].path: "+filepath.Join(dir, "not-mounted")+" does not exist") ||
		!strings.HasPrefix(lines[1], "storbench: "+f+":5: targets[0].cpus: ") {
		t.Errorf("study plan: exit %d; want 2, the plan, then two refusals at lines 4 and 5\n%s%s", code, out, errOut)
	}
	code, out, errOut = storbench(t, "study", "run", f, "--results", filepath.Join(dir, "results"))
	if _, err := os.Stat(filepath.Join(dir, "results")); code != 2 || err == nil || !strings.Contains(errOut, f+":4: targets[0].path: ") ||
		!strings.Contains(errOut, "and 1 more (storbench study plan "+f+" lists them)") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("study run: exit %d, want 2, one line with the first refusal and the count of the others, nothing made\n%s%s", code, out, errOut)
	}

	// The example written for a bigger machine, with the papers' mount points.
	example := filepath.Join("..", "..", "examples", "hdd-vs-ssd-vcores.yaml")
	code, out, errOut = storbench(t, "study", "plan", example)
	if code != 2 || !strings.Contains(out, "study hdd-vs-ssd-vcores: 2 targets") || !strings.Contains(out, "estimated total") {
		t.Errorf("study plan %s: exit %d; want 2 after its plan\n%s%s", example, code, out, errOut)
	}
	for _, l := range strings.Split(strings.TrimSpace(errOut), "\n") {
		if !regexp.MustCompile(`^storbench: ` + regexp.QuoteMeta(example) + `:\d+: `).MatchString(l) {
			t.Errorf("study plan %s: a refusal not at its line: %q", example, l)
		}
	}
}
