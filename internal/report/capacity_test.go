package report

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/bottleneck"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/study"
)

// probe is a capacity probe at rate TPM that achieved achieved TPM, half of it
// New-Orders, with its SLO latency and, when given, its bottleneck verdict.
type probe struct {
	rate, achieved, latency float64
	pass                    bool
	verdict                 *bottleneck.Verdict
}

// capacity adds a capacity step of target's search "cap" whose probes ran in order.
func (x *fixture) capacity(target string, probes ...probe) {
	c := &study.CapacityRun{SLO: study.SLO{Transaction: "new-order", Percentile: 90, Ms: 5}, Users: 16, MinAchieved: 0.99,
		StartRate: probes[0].rate, Precision: 0.05, MaxProbes: 12}
	for _, p := range probes {
		latency := p.latency
		run := &driver.Result{Config: driver.RunConfig{Users: 16, Rate: p.rate}, TPMClient: p.achieved, NOPMClient: p.achieved / 2, Bottleneck: p.verdict,
			Rate: &driver.RateResult{OfferedTPM: p.rate, ArrivedTPM: p.rate, AchievedTPM: p.achieved}}
		c.Probes = append(c.Probes, study.CapacityProbe{RateTPM: p.rate, Pass: p.pass, Why: "fixture", LatencyMs: &latency,
			ArrivedTPM: p.rate, AchievedTPM: p.achieved, NOPM: p.achieved / 2, Run: run})
	}
	c.Conclude()
	x.steps = append(x.steps, study.StepResult{Step: study.Step{Seq: len(x.steps) + 1, ID: target + "/cap", Target: target, Experiment: "cap", Kind: study.Capacity},
		Capacity: c})
}

var (
	storageBound = &bottleneck.Verdict{Kind: bottleneck.Storage, Detail: "storage (writes)", Figures: []bottleneck.Figure{{Name: "clients on data-file I/O and WAL", Value: 70, Unit: "%"}}}
	cpuBound     = &bottleneck.Verdict{Kind: bottleneck.CPU, Detail: "cpu (database host)", Figures: []bottleneck.Figure{{Name: "host CPU idle", Value: 2, Unit: "%"}}}
)

// TestCapacityFindings: a capacity is compared in NOPM within the SLO, each side's
// verdict at its capacity quoted; no winner where a search ended without a bracket,
// where the brackets overlap, or where neither side was limited by its storage.
func TestCapacityFindings(t *testing.T) {
	var x fixture
	// slow: 17,100 NOPM at 34,200 TPM achieved; fast: 41,200 NOPM at 82,400.
	x.capacity("slow", probe{rate: 32000, achieved: 32000, latency: 2, pass: true}, probe{rate: 64000, achieved: 40000, latency: 900},
		probe{rate: 48000, achieved: 39000, latency: 400}, probe{rate: 34000, achieved: 34200, latency: 4, pass: true, verdict: storageBound},
		probe{rate: 35000, achieved: 35000, latency: 7})
	x.capacity("fast", probe{rate: 32000, achieved: 32000, latency: 1, pass: true}, probe{rate: 64000, achieved: 64000, latency: 2, pass: true},
		probe{rate: 128000, achieved: 90000, latency: 300}, probe{rate: 82000, achieved: 82400, latency: 3, pass: true, verdict: cpuBound},
		probe{rate: 84000, achieved: 83000, latency: 6})
	got := findingsOf(t, x.source())
	// 41,200 ÷ 17,100 = 2.409.
	want := []string{"cap (capacity): fast/cap carries 2.41x the NOPM of slow/cap within New-Order p90 ≤ 5 ms (41,200 vs 17,100, client counts); " +
		"limited by fast/cap: cpu (database host) — host CPU idle 2%, slow/cap: storage (writes) — clients on data-file I/O and WAL 70%."}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Both limited by the CPU: no storage winner.
	x.steps[0].Capacity.Probes[3].Run.Bottleneck = cpuBound
	if got := findingsOf(t, x.source()); len(got) != 1 || !strings.HasSuffix(got[0], "the difference does not measure the storage, no winner named.") {
		t.Errorf("findings with both CPU-bound: %q", got)
	}

	var y fixture
	y.capacity("slow", probe{rate: 32000, achieved: 32000, latency: 2, pass: true}, probe{rate: 34000, achieved: 33000, latency: 7})
	y.capacity("fast", probe{rate: 33000, achieved: 33000, latency: 2, pass: true}, probe{rate: 35000, achieved: 34000, latency: 8})
	y.capacity("budget", probe{rate: 32000, achieved: 32000, latency: 2, pass: true}, probe{rate: 64000, achieved: 64000, latency: 3, pass: true})
	y.capacity("overrun", probe{rate: 32000, achieved: 20000, latency: 900}, probe{rate: 16000, achieved: 15000, latency: 60})
	got = findingsOf(t, y.source())
	want = []string{
		// 32,000-34,000 and 33,000-35,000 overlap.
		"cap (capacity): fast/cap vs slow/cap within New-Order p90 ≤ 5 ms: 16,500 vs 16,000 NOPM; the searches' brackets overlap (fast/cap passed 33,000 TPM and failed 35,000, slow/cap passed 32,000 and failed 34,000): no winner named.",
		"cap (capacity): budget/cap vs slow/cap within New-Order p90 ≤ 5 ms: no winner named: budget/cap's search ended without a bracket: every probe passed, up to 64,000 TPM offered, so its capacity is higher (a higher start_rate or more max_probes finds it).",
		"cap (capacity): overrun/cap vs slow/cap within New-Order p90 ≤ 5 ms: no winner named: overrun/cap's search ended without a bracket: no probe passed, down to 16,000 TPM offered, so its capacity is lower (a lower start_rate or more max_probes finds it).",
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// One target: its search in a sentence, with its verdict at capacity.
	var z fixture
	z.capacity("nvme", probe{rate: 32000, achieved: 32000, latency: 2, pass: true, verdict: storageBound}, probe{rate: 33000, achieved: 33000, latency: 7})
	want = []string{"cap (capacity): nvme/cap: capacity 32000 TPM (16000 NOPM) within New-Order p90 ≤ 5 ms: passed at 32000 TPM, failed at 33000 TPM (2 probes); at its capacity limited by storage (writes) — clients on data-file I/O and WAL 70%."}
	if got := findingsOf(t, z.source()); !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCapacitySection: per target a chart of the SLO's latency against the
// throughput achieved, probe by probe in the order of their rates, with the
// objective as a line and the capacity as a point; and every probe in a table.
func TestCapacitySection(t *testing.T) {
	var x fixture
	x.capacity("nvme", probe{rate: 32000, achieved: 32000, latency: 2, pass: true}, probe{rate: 64000, achieved: 40000, latency: 900},
		probe{rate: 48000, achieved: 39000, latency: 400}, probe{rate: 40000, achieved: 39500, latency: 4, pass: true, verdict: storageBound})
	r, err := Build([]*Source{x.source()}, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(r.SectionIDs(), "capacity-cap")
	if i < 0 {
		t.Fatalf("sections %v: no capacity-cap", r.SectionIDs())
	}
	sec := r.Sections[i]
	if len(sec.Blocks) != 2 || sec.Blocks[0].Chart == nil || sec.Blocks[1].Table == nil {
		t.Fatalf("blocks %+v: want the target's chart and the probes' table", sec.Blocks)
	}
	chart := string(sec.Blocks[0].Chart.Option)
	for _, want := range []string{`"Capacity of nvme/cap: New-Order p90 against throughput"`, `"probes: New-Order p90"`, `"objective 5 ms"`, `"capacity 39,500 TPM"`,
		// The probes by rate: 32,000, 40,000, 48,000, 64,000 offered, at the throughput achieved.
		`[[32000,2],[39500,4],[39000,400],[40000,900]]`, `[[0,5],[40000,5]]`, `[[39500,4]]`} {
		if !strings.Contains(chart, want) {
			t.Errorf("chart lacks %s:\n%s", want, chart)
		}
	}
	table := sec.Blocks[1].Table
	if len(table.Rows) != 4 {
		t.Fatalf("probe rows %v, want 4", table.Rows)
	}
	if got, want := strings.Join(table.Rows[3], " | "), "nvme/cap | 4 | 40,000 | 40,000 | 39,500 | 19,750 | 4.00 | - | pass, capacity | fixture | storage (writes) — clients on data-file I/O and WAL 70%"; got != want {
		t.Errorf("row %q, want %q", got, want)
	}
	if got := strings.Join(table.Notes, "\n"); !strings.Contains(got, "nvme/cap: capacity at least 39500 TPM (19750 NOPM) within New-Order p90 ≤ 5 ms: passed at 40000 TPM, failed at 48000 TPM, 20% apart when the 4 probes ran out (precision 0.05).") ||
		!strings.Contains(got, "a probe passes with at least 99% of its arrivals completed in its window and New-Order p90 ≤ 5 ms") {
		t.Errorf("notes %q", got)
	}
	// The probes are audited with the runs.
	if runs := auditedRuns([]*Source{x.source()}); len(runs) != 4 || runs[3].Label != "nvme/cap probe 4 (40,000 TPM)" {
		t.Errorf("audited runs %+v", runs)
	}
}

// fixtureCapacity is a real capacity study's store: two RAM-backed loop devices, the
// second throttled to 200 write IOPS, searched from 8,000 TPM to 50% in 6 probes.
const fixtureCapacity = "testdata/capacity"

// TestCapacityFromStore: a stored capacity study gets its section, a curve per
// target, every probe in the table, and a finding that names the throttled target's
// capacity as a share of the other's.
func TestCapacityFromStore(t *testing.T) {
	r := build(t, fixtureCapacity)
	var sec *Section
	for i := range r.Sections {
		if r.Sections[i].ID == "capacity-cap" {
			sec = &r.Sections[i]
		}
	}
	if sec == nil {
		t.Fatalf("sections %v: no capacity-cap", r.SectionIDs())
	}
	var charts []string
	rows := 0
	for _, b := range sec.Blocks {
		if b.Chart != nil {
			charts = append(charts, b.Chart.Title)
		}
		if b.Table != nil {
			rows += len(b.Table.Rows)
		}
	}
	if want := []string{"Capacity of fast/cap: New-Order p90 against throughput", "Capacity of slow/cap: New-Order p90 against throughput"}; !slices.Equal(charts, want) || rows != 9 {
		t.Errorf("charts %q and %d probe rows, want %q and the 6 + 3 probes", charts, rows, want)
	}
	// 2,625 ÷ 27,450 = 0.0956.
	want := "slow/cap carries 0.1x the NOPM of fast/cap within New-Order p90 ≤ 50 ms (2,625 vs 27,450, client counts); limited by slow/cap: "
	if got := findingsOf(t, r.Sources...); len(got) != 1 || !strings.HasPrefix(got[0], "cap (capacity): "+want+"storage (reads)") || !strings.Contains(got[0], ", fast/cap: mixed (storage, cpu) — ") {
		t.Errorf("findings %q, want one starting %q and quoting each side's verdict", got, want)
	}
}

// A run whose own verdict is mixed is quoted as it is: "its repeats differed" is for
// repeats whose verdicts disagree (the fast target of fixtureCapacity was "mixed
// (storage, cpu)" at its capacity, and the finding said its repeats differed).
func TestFindingsQuoteAMixedVerdict(t *testing.T) {
	mixed := &bottleneck.Verdict{Kind: bottleneck.Mixed, Detail: "mixed (storage, cpu)", Figures: []bottleneck.Figure{{Name: "host CPU idle", Value: 3, Unit: "%"}}}
	one := &Point{Steps: []*study.StepResult{{Run: &driver.Result{Bottleneck: mixed}}}}
	if got, want := pointVerdict(one), "mixed (storage, cpu) — host CPU idle 3%"; got != want {
		t.Errorf("one mixed run: %q, want %q", got, want)
	}
	two := &Point{Steps: []*study.StepResult{{Run: &driver.Result{Bottleneck: mixed}}, {Run: &driver.Result{Bottleneck: cpuBound}}}}
	if got, want := pointVerdict(two), "its repeats differed: mixed (storage, cpu), cpu (database host)"; got != want {
		t.Errorf("repeats that differ: %q, want %q", got, want)
	}
}

// A stored search is not trusted to point at probes it has: the report takes the
// outcome its probes give, and the one-line summary states none it cannot show.
func TestCapacityStoredOutcomeNotTrusted(t *testing.T) {
	var x fixture
	x.capacity("nvme", probe{rate: 32000, achieved: 32000, latency: 2, pass: true}, probe{rate: 33000, achieved: 33000, latency: 7})
	c := x.steps[0].Capacity
	c.Best, c.Fail, c.Outcome = 9, -3, study.CapacityFound
	if got := c.Summary(); got != "2 probes within New-Order p90 ≤ 5 ms, no outcome" {
		t.Errorf("summary of a search pointing past its probes: %q", got)
	}
	r, err := Build([]*Source{x.source()}, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(io.Discard, r); err != nil {
		t.Fatal(err)
	}
	want := []string{"cap (capacity): nvme/cap: capacity 32000 TPM (16000 NOPM) within New-Order p90 ≤ 5 ms: passed at 32000 TPM, failed at 33000 TPM (2 probes)."}
	if got := findingsOf(t, x.source()); !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
}
