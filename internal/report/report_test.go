package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/study"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The fixture is a real study's results store (testdata/study: two managed
// PostgreSQL targets, one limited to one CPU, every experiment kind at one
// warehouse, run with storbench study run) with its base images left out, plus
// single results taken from it: two runs' JSON and two fio results.
const (
	fixtureStore = "testdata/study"
	fixtureRunA  = "testdata/run-fast.json"
	fixtureRunB  = "testdata/run-slow.json"
	fixtureFioA  = "testdata/fio-fast.json"
	fixtureFioB  = "testdata/fio-slow.json"
)

var fixedNow = func() time.Time { return time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) }

func build(t *testing.T, paths ...string) *Report {
	t.Helper()
	srcs, err := Load(paths)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Build(srcs, Options{Version: "test", Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it after a deliberate change):\n%s", name, diffLines(string(want), string(got)))
	}
}

func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d\n  want: %s\n  got:  %s\n", i+1, wl, gl)
		}
	}
	return b.String()
}

func allTables(r *Report) []byte {
	var b bytes.Buffer
	for _, s := range r.Sections {
		fmt.Fprintf(&b, "== %s ==\n", s.ID)
		for _, blk := range s.Blocks {
			if blk.Table != nil {
				if err := blk.Table.WriteText(&b); err != nil {
					panic(err)
				}
				b.WriteString("\n")
			}
		}
	}
	return b.Bytes()
}

// TestGoldenTables pins every data table of the fixture's report: numbers, ranges
// of repeated steps and % columns.
func TestGoldenTables(t *testing.T) {
	golden(t, "study-tables.txt", allTables(build(t, fixtureStore)))
}

func TestGoldenCompare(t *testing.T) {
	for _, c := range []struct{ name, a, b string }{
		{"compare-runs.md", fixtureRunA, fixtureRunB},
		{"compare-fio.md", fixtureFioA, fixtureFioB},
	} {
		srcs, err := Load([]string{c.a, c.b})
		if err != nil {
			t.Fatal(err)
		}
		tables, err := Compare(srcs[0], srcs[1])
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := WriteComparison(&b, srcs[0], srcs[1], tables, true, 0); err != nil {
			t.Fatal(err)
		}
		golden(t, c.name, b.Bytes())
	}
}

// TestHeadlineFromSteps recomputes the headline's figures from the stored steps
// themselves, so the golden file is not the only witness of the arithmetic.
func TestHeadlineFromSteps(t *testing.T) {
	srcs, err := Load([]string{fixtureStore})
	if err != nil {
		t.Fatal(err)
	}
	nopm := map[string]map[int][]float64{}
	for _, r := range srcs[0].Steps {
		if r.Step.Kind != "user-sweep" {
			continue
		}
		if nopm[r.Step.Target] == nil {
			nopm[r.Step.Target] = map[int][]float64{}
		}
		nopm[r.Step.Target][r.Step.Users] = append(nopm[r.Step.Target][r.Step.Users], r.Run.NOPMDB)
	}
	meanOf := func(vs []float64) float64 {
		var s float64
		for _, v := range vs {
			s += v
		}
		return s / float64(len(vs))
	}
	head := headlineTable(sweeps(srcs))
	if len(head.Rows) != 2 || head.Rows[0][0] != "fast/sweep" || head.Rows[1][0] != "slow/sweep" {
		t.Fatalf("headline rows: %v", head.Rows)
	}
	for _, row := range head.Rows {
		if row[3] != "2" {
			t.Errorf("%s: the like-for-like user count is %s, not 2", row[0], row[3])
		}
	}
	for i, target := range []string{"fast", "slow"} {
		peakUsers, peak := 0, -1.0
		for _, u := range []int{1, 2} {
			if m := meanOf(nopm[target][u]); m > peak {
				peakUsers, peak = u, m
			}
		}
		row := head.Rows[i]
		if row[1] != num(peak, 0) || row[2] != fmt.Sprint(peakUsers) {
			t.Errorf("%s: peak %s at %s users, want %s at %d", target, row[1], row[2], num(peak, 0), peakUsers)
		}
		if row[4] != num(meanOf(nopm[target][2]), 0) {
			t.Errorf("%s: NOPM at 2 users %s, want %s", target, row[4], num(meanOf(nopm[target][2]), 0))
		}
		want := fmt.Sprintf("%.0f%%", 100*meanOf(nopm[target][2])/meanOf(nopm["fast"][2]))
		if row[5] != want {
			t.Errorf("%s: %% of fast %s, want %s", target, row[5], want)
		}
	}
}

// TestSections: a section appears exactly when its data is there.
func TestSections(t *testing.T) {
	for _, c := range []struct {
		name  string
		paths []string
		want  []string
	}{
		{"study", []string{fixtureStore}, []string{"findings", "headline", "tpcc-sweep", "timeline", "storage-profiles",
			"backup-restore", "consolidation", "costs", "audit", "environment"}},
		// One configuration at one user count: no headline, and its charts would be single bars.
		{"one run", []string{fixtureRunA}, []string{"findings", "tpcc", "timeline", "audit", "environment"}},
		{"two runs", []string{fixtureRunA, fixtureRunB}, []string{"findings", "headline", "tpcc", "timeline", "audit", "environment"}},
		{"fio", []string{fixtureFioA, fixtureFioB}, []string{"findings", "storage-profiles"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := build(t, c.paths...).SectionIDs(); !slices.Equal(got, c.want) {
				t.Errorf("sections %v, want %v", got, c.want)
			}
		})
	}
}

func TestLoadBadInput(t *testing.T) {
	dir := t.TempDir()
	notResult := filepath.Join(dir, "x.json")
	os.WriteFile(notResult, []byte(`{"hello": 1}`), 0o644)
	garbage := filepath.Join(dir, "y.json")
	os.WriteFile(garbage, []byte("not json"), 0o644)
	for _, p := range []string{filepath.Join(dir, "missing"), dir, notResult, garbage} {
		_, err := Load([]string{p})
		if !errors.Is(err, input.ErrInvalid) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line of invalid input", p, err)
		}
	}
	if _, err := Load(nil); !errors.Is(err, input.ErrInvalid) {
		t.Errorf("no input: %v", err)
	}
}

func TestCompareNothingInCommon(t *testing.T) {
	srcs, err := Load([]string{fixtureRunA, fixtureFioA})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compare(srcs[0], srcs[1]); !errors.Is(err, input.ErrInvalid) {
		t.Errorf("a run against a fio result: %v, want invalid input", err)
	}
}

func TestCostSeriesMustExist(t *testing.T) {
	srcs, err := Load([]string{fixtureStore})
	if err != nil {
		t.Fatal(err)
	}
	m := *srcs[0].Spec.Costs
	m.Configurations = slices.Clone(m.Configurations)
	m.Configurations[0].Series = "nvme/sweep"
	_, err = Build(srcs, Options{Costs: &m})
	if !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), `"fast/sweep"`) {
		t.Errorf("a cost configuration naming no measured series: %v", err)
	}
}

func TestNumbers(t *testing.T) {
	for _, c := range []struct {
		v    float64
		d    int
		want string
	}{{1234567.891, 0, "1,234,568"}, {999.5, 0, "1,000"}, {-1234.5, 1, "-1,234.5"}, {0.12345, 3, "0.123"}, {-0.0001, 2, "0.00"}} {
		if got := num(c.v, c.d); got != c.want {
			t.Errorf("num(%v, %d) = %q, want %q", c.v, c.d, got, c.want)
		}
	}
	if got := stat(statOf([]float64{10, 20, 30}), 0); got != "20 (10–30)" {
		t.Errorf("stat: %q", got)
	}
	if got := stat(Stat{}, 0); got != "-" {
		t.Errorf("stat of nothing: %q", got)
	}
	if got := percentOf(50, 200); got != "25%" {
		t.Errorf("percentOf: %q", got)
	}
	if got := percentOf(50, 0); got != "-" {
		t.Errorf("percentOf of zero: %q", got)
	}
	nan := math.NaN()
	if got := string(rows([]float64{-1, 0.5}, [][]float64{{123456.7, 0.000123456}, {nan, 12.3456}})); got != `[[-1,123457,"-"],[0.5,0.0001235,12.35]]` {
		t.Errorf("rows: %s", got)
	}
}

// TestReportInChromium opens the fixtures' reports in headless Chromium from a
// file:// URL with the network blocked: every chart container must hold a drawn
// canvas and the console must stay empty. The across-hosts one has several host
// pickers in one section.
func TestReportInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	for _, c := range []struct{ name, store, screenshot string }{
		{"study", fixtureStore, "report.png"},
		{"hosts", fixtureHosts, "report-hosts.png"},
		{"capacity", fixtureCapacity, "report-capacity.png"},
	} {
		t.Run(c.name, func(t *testing.T) { reportInChromium(t, c.store, c.screenshot) })
	}
}

func reportInChromium(t *testing.T, store, screenshot string) {
	r := build(t, store)
	path := filepath.Join(t.TempDir(), "report.html")
	var b bytes.Buffer
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	if external := regexp.MustCompile(`(?i)(src|href)="(https?:)?//`).FindString(b.String()); external != "" {
		t.Errorf("the report loads something from the network: %s", external)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, console := openInChromium(t, path, chromiumScreenshotPath(t, screenshot))
	if len(console) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(console, "\n"))
	}
	if errs := chromiumPreText(t, dom, "script-errors"); errs != "" {
		t.Errorf("script errors: %s", errs)
	}
	charts := chromiumChartsWithCanvas(dom)
	want := 0
	for _, s := range r.Sections {
		for _, blk := range s.Blocks {
			switch {
			case blk.Chart != nil:
				want++
			case blk.Picker != nil:
				want += len(blk.Picker.Charts[0])
			}
		}
	}
	if len(charts) != want {
		t.Errorf("%d chart containers in the DOM, the report has %d charts", len(charts), want)
	}
	for id, drawn := range charts {
		if !drawn {
			t.Errorf("chart %s was not drawn", id)
		}
	}
	if m := regexp.MustCompile(`data-charts-drawn="(\d+)"`).FindStringSubmatch(dom); m == nil || m[1] != fmt.Sprint(want) {
		t.Errorf("the page's script drew %v charts, want %d", m, want)
	}
}

// TestPartialStudy: a study still running (its slow target not measured yet) gets a
// report of what is stored, with notes, not an error.
func TestPartialStudy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "study")
	if err := os.CopyFS(dir, os.DirFS(fixtureStore)); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"0005", "0006", "0007", "0008", "0010"} {
		if err := os.Remove(filepath.Join(dir, "steps", n+".json")); err != nil {
			t.Fatal(err)
		}
	}
	r := build(t, dir)
	notes := strings.Join(r.Notes, "\n")
	if !strings.Contains(notes, "9 of the study's 14 steps are stored") || !strings.Contains(notes, `series "slow/sweep" is not in the results`) {
		t.Errorf("notes:\n%s", notes)
	}
	if !slices.Contains(r.SectionIDs(), "costs") {
		t.Errorf("no costs section: %v", r.SectionIDs())
	}
}

// TestOddResults: results with pieces missing or out of range render, without a
// panic and without a chart that cannot be drawn.
func TestOddResults(t *testing.T) {
	srcs, err := Load([]string{fixtureStore})
	if err != nil {
		t.Fatal(err)
	}
	src := srcs[0]
	for i := range src.Steps {
		r := &src.Steps[i]
		switch {
		case r.Run != nil && r.Step.Seq == 1:
			r.Run.NOPMDB = math.Inf(1)
			r.Run.System = nil
			r.Run.Timeline = nil
		case len(r.Fio) > 0:
			r.Fio[0].Points = nil
		case r.Backup != nil:
			r.Step.Cycle = 0
		case r.Consolidation != nil:
			r.Consolidation.Instances = nil
			r.Consolidation.System = nil
		}
	}
	r, err := Build(srcs, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "could not be drawn") {
		t.Error("a chart's option could not be written")
	}
}

// fixtureHosts is a real results store of a consolidation across hosts (three
// external targets db1–db3, each on its own "host" in a network namespace,
// 198.18.0.11–13, made by cmd/storbench's multi-host integration test): the
// experiments "pull" (db3's backups streamed to the controller) and "onhost" (run
// on db3's host over SSH), each with a baseline and a noisy step.
const fixtureHosts = "testdata/hosts"

// TestGoldenTablesAcrossHosts pins the across-hosts report's tables: per instance
// by host, per host, the controller's CPU and the targets' hosts.
func TestGoldenTablesAcrossHosts(t *testing.T) {
	golden(t, "hosts-tables.txt", allTables(build(t, fixtureHosts)))
}

// TestReportNamesHosts: the across-hosts report names every host where its figures
// are (the per-instance and per-host tables, the targets, the charts) and draws
// each host's disks and CPU per run from that host's own metrics, backups shaded.
func TestReportNamesHosts(t *testing.T) {
	r := build(t, fixtureHosts)
	hosts := []string{"198.18.0.11", "198.18.0.12", "198.18.0.13"}
	var b bytes.Buffer
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, h := range hosts {
		if !strings.Contains(b.String(), h) {
			t.Errorf("the report does not name host %s", h)
		}
	}
	var pickers []*Picker
	tables := map[string]*Table{}
	for _, s := range r.Sections {
		for _, blk := range s.Blocks {
			if blk.Picker != nil && s.ID == "consolidation" {
				pickers = append(pickers, blk.Picker)
			}
			if blk.Table != nil {
				tables[blk.Table.Title] = blk.Table
			}
		}
	}
	// Two experiments, a baseline and a noisy run each: a picker of hosts per run.
	if len(pickers) != 4 {
		t.Fatalf("%d host pickers in the consolidation section, want 4", len(pickers))
	}
	for _, p := range pickers {
		if len(p.Choices) != len(hosts) {
			t.Fatalf("picker %s: choices %v, want the 3 hosts", p.ID, p.Choices)
		}
		noisy := strings.Contains(p.Label, "noisy")
		for i, h := range hosts {
			if want := fmt.Sprintf("%s (db%d)", h, i+1); p.Choices[i] != want {
				t.Errorf("picker %s: choice %d is %q, want %q", p.ID, i, p.Choices[i], want)
			}
			charts := p.Charts[i]
			if len(charts) != 3 {
				t.Fatalf("picker %s, %s: %d charts, want disk rates, latency and CPU", p.ID, h, len(charts))
			}
			// Each host's disk is vda (db2's host sampled every whole disk).
			for k, want := range []string{"read IOPS", "read ms (avg per I/O)", `"name":"iowait"`} {
				opt := string(charts[k].Option)
				if !strings.Contains(charts[k].Title, h) || !strings.Contains(opt, want) || k < 2 && !strings.Contains(opt, `"name":"vda (`) {
					t.Errorf("picker %s, %s: chart %q lacks the host's %s", p.ID, h, charts[k].Title, want)
				}
				if shaded := strings.Contains(opt, "db3 #1"); shaded != noisy {
					t.Errorf("picker %s, %s: chart %q shades db3's first backup: %v, want %v", p.ID, h, charts[k].Title, shaded, noisy)
				}
			}
		}
	}
	for _, title := range []string{"db1+db2+db3/pull: per instance", "db1+db2+db3/onhost: per instance"} {
		tb := tables[title]
		if tb == nil || tb.Columns[1] != "host" {
			t.Fatalf("%s: no host column: %+v", title, tb)
		}
		for i, h := range hosts {
			if row := tb.Rows[i]; row[0] != fmt.Sprintf("db%d", i+1) || row[1] != h {
				t.Errorf("%s: row %d is %v, want db%d on %s", title, i, row, i+1, h)
			}
		}
	}
	if tb := tables["Targets"]; tb == nil || !slices.Contains(tb.Columns, "host") {
		t.Errorf("the targets table has no host column: %+v", tb)
	}
}

// TestRowsGroupedByHost: instances of one host are listed together, hosts in the
// order they first appear, whatever the instances' order.
func TestRowsGroupedByHost(t *testing.T) {
	srcs, err := Load([]string{fixtureHosts})
	if err != nil {
		t.Fatal(err)
	}
	// db3 moves onto db1's host: db1, db3 (198.18.0.11), then db2.
	for i := range srcs[0].Steps {
		if c := srcs[0].Steps[i].Consolidation; c != nil {
			c.Instances[2].Host = c.Instances[0].Host
		}
	}
	pairs := consolidationPairs(srcs)
	tb := consolidationTable(pairs[0])
	var got []string
	for _, row := range tb.Rows[:3] {
		got = append(got, row[0]+"@"+row[1])
	}
	if want := []string{"db1@198.18.0.11", "db3@198.18.0.11", "db2@198.18.0.12"}; !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	hosts := hostsTable(pairs[0])
	if len(hosts.Rows) != 4 || hosts.Rows[0][1] != "db1, db3" {
		t.Errorf("per host rows: %v", hosts.Rows)
	}
}

// TestSweepSeriesNameHost: a user sweep on an external target is named with its
// host; managed targets' series keep their names (TestHeadlineFromSteps).
func TestSweepSeriesNameHost(t *testing.T) {
	srcs, err := Load([]string{fixtureHosts})
	if err != nil {
		t.Fatal(err)
	}
	src := srcs[0]
	run := src.Steps[0].Consolidation.Instances[0].Run
	src.Steps = append(src.Steps, study.StepResult{Step: study.Step{Seq: 5, ID: "db1/sweep/users=2/rep=1", Target: "db1", Experiment: "sweep",
		Kind: study.UserSweep, Users: 2, Repeat: 1}, Run: run})
	head := headlineTable(sweeps(srcs))
	if head == nil || len(head.Rows) != 1 || head.Rows[0][0] != "db1/sweep @ 198.18.0.11" {
		t.Errorf("headline: %+v", head)
	}
}

// TestRunsThatDifferSaySo compares a run of the spec's inputs with one of HammerDB's
// on HammerDB's schema: the comparison says how the two were run, and the environment
// table names each run's inputs and schema.
func TestRunsThatDifferSaySo(t *testing.T) {
	b, err := os.ReadFile(fixtureRunB)
	must(t, err)
	var run map[string]any
	must(t, json.Unmarshal(b, &run))
	cfg := run["config"].(map[string]any)
	cfg["inputs"], cfg["schema"], cfg["built_by"] = "hammerdb", "hammerdb", "HammerDB"
	b, err = json.Marshal(run)
	must(t, err)
	hammerdb := filepath.Join(t.TempDir(), "run-hammerdb.json")
	must(t, os.WriteFile(hammerdb, b, 0o644))

	srcs, err := Load([]string{fixtureRunA, hammerdb})
	must(t, err)
	tables, err := Compare(srcs[0], srcs[1])
	must(t, err)
	var out bytes.Buffer
	must(t, WriteComparison(&out, srcs[0], srcs[1], tables, true, 0))
	if want := "A and B were not run alike: inputs spec vs hammerdb, schema - vs hammerdb (built by HammerDB)"; !strings.Contains(out.String(), want) {
		t.Errorf("the comparison does not say how the runs differ (%q):\n%s", want, out.String())
	}

	env := string(allTables(build(t, fixtureRunA, hammerdb)))
	if !strings.Contains(env, "inputs") || !strings.Contains(env, "hammerdb (built by HammerDB)") {
		t.Errorf("the environment's runs table does not name inputs and schema:\n%s", env)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestIOLimitsShown: io-sweep steps make series named by their limit, a target's own
// limit is added to its series' name, and the environment lists each throttle with
// the disk and what its cgroup version holds back, v1 marked as partial emulation.
func TestIOLimitsShown(t *testing.T) {
	srcs, err := Load([]string{fixtureStore})
	must(t, err)
	src := srcs[0]
	run := src.Steps[0].Run
	gp3, own := instance.IOLimit{Preset: "aws-gp3", ReadIOPS: 3000, WriteIOPS: 3000}, instance.IOLimit{ReadIOPS: 500}
	src.Steps = append(src.Steps,
		study.StepResult{Step: study.Step{Seq: 90, ID: "slow/io/io=aws-gp3/users=1/rep=1", Target: "slow", Experiment: "io", Kind: study.IOSweep, IOLimit: &gp3, Users: 1, Repeat: 1},
			Run: run, IOThrottle: &instance.IOThrottle{Limit: gp3, Device: "254:0", Cgroup: 1}},
		study.StepResult{Step: study.Step{Seq: 91, ID: "slow/sweep/users=1/rep=1", Target: "slow", Experiment: "sweep", Kind: study.UserSweep, Users: 1, Repeat: 1},
			Run: run, IOThrottle: &instance.IOThrottle{Limit: own, Device: "254:0", Cgroup: 2}})
	var names []string
	for _, s := range sweeps(srcs) {
		names = append(names, s.Name)
	}
	for _, want := range []string{"slow/io/io=aws-gp3", "slow/sweep [io riops=500]"} {
		if !slices.Contains(names, want) {
			t.Errorf("no series %q in %q", want, names)
		}
	}
	env := environmentSection(srcs)
	var text bytes.Buffer
	for _, b := range env.Blocks {
		if b.Table != nil && b.Table.Title == "I/O limits" {
			must(t, b.Table.WriteText(&text))
		}
	}
	for _, want := range []string{"slow/io/io=aws-gp3", "aws-gp3 (riops=3000,wiops=3000)", "254:0", "cgroup v1 blkio: reads and direct/synchronous writes only",
		"slow/sweep", "cgroup v2 io.max: reads and writes, buffered writeback included"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the environment's I/O limits table lacks %q:\n%s", want, text.String())
		}
	}
	if !strings.Contains(strings.Join(env.Intro, " "), "PARTIAL EMULATION") {
		t.Errorf("the environment does not mark cgroup v1 limits as partial emulation: %q", env.Intro)
	}
}
