package report

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/bottleneck"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/procrole"
	"github.com/storbench/storbench/internal/steady"
	"github.com/storbench/storbench/internal/study"
)

// The fixtures here are built in memory, with round figures, so that every ratio a
// finding states can be worked out by hand beside it.

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

const (
	pgTPMSource     = "pg_stat_database xact_commit + xact_rollback of this database, delta over the timed window"
	sqliteTPMSource = "the engine keeps no transaction counter (sqlite): the client's count, as tpm_client"
)

// figures are one run's measured figures.
type figures struct {
	nopm, p95, await, p99 float64
	window                time.Duration
	tpmSource             string
	steadiness            *steady.Verdict
}

func runResult(users int, f figures) *driver.Result {
	if f.window == 0 {
		f.window = time.Minute
	}
	if f.tpmSource == "" {
		f.tpmSource = pgTPMSource
	}
	r := &driver.Result{Config: driver.RunConfig{Users: users}, Start: t0, End: t0.Add(f.window),
		NOPMDB: f.nopm, TPMDB: 2.2 * f.nopm, NOPMClient: f.nopm, TPMClient: 2.3 * f.nopm,
		Sources: map[string]string{"tpm_db": f.tpmSource, "nopm_db": "sum(district.d_next_o_id), delta over the timed window"},
		System: &metrics.Report{Summary: metrics.Summary{
			Disks:   []metrics.Disk{{Device: "vdb", Roles: []string{"data"}, ReadIOPS: 100, WriteIOPS: 300, ReadAwaitMs: f.await, WriteAwaitMs: f.await}},
			Latency: []metrics.Latency{{Device: "vdb", IOs: 1000, P99Ms: f.p99}}}}}
	r.Transactions.NewOrder.P95Ms = f.p95
	r.Steadiness = f.steadiness
	if f.await == 0 {
		r.System = nil // no metrics sampled
	}
	return r
}

// fixture collects the steps of a study store built in memory.
type fixture struct{ steps []study.StepResult }

// run adds a TPC-C step; id is the series' ID (target/experiment[/variant]).
func (x *fixture) run(kind, experiment, target, id string, users, rep int, f figures, variant func(*study.Step)) {
	st := study.Step{Seq: len(x.steps) + 1, ID: fmt.Sprintf("%s/users=%d/rep=%d", id, users, rep), Target: target,
		Experiment: experiment, Kind: kind, Users: users, Repeat: rep}
	if variant != nil {
		variant(&st)
	}
	x.steps = append(x.steps, study.StepResult{Step: st, Run: runResult(users, f)})
}

func (x *fixture) backup(target string, cycle int, backupS, restoreS float64, bytes int64) {
	transfer := func(s float64) *study.Transfer {
		return &study.Transfer{Transfer: instance.Transfer{Seconds: s, Bytes: bytes, MBps: float64(bytes) / 1e6 / s}}
	}
	x.steps = append(x.steps, study.StepResult{Step: study.Step{Seq: len(x.steps) + 1, ID: fmt.Sprintf("%s/backup/cycle=%d", target, cycle),
		Target: target, Experiment: "backup", Kind: study.BackupRestore, Cycle: cycle}, Backup: transfer(backupS), Restore: transfer(restoreS)})
}

func (x *fixture) fio(target string, iops, mbps float64) {
	p := fio.Point{Name: "4k-randrw70", Pattern: "randrw", BlockSize: 4096, ReadPct: 70, Jobs: 4, QueueDepth: 8, IOPS: iops, MBps: mbps}
	// 7 reads of 3 ms and 3 writes of 8 ms per 10 I/Os on nvme; four times slower on sata.
	scale := 10000 / iops
	p.Read = fio.Side{IOs: 7, MeanLatMs: 3 * scale, P99Ms: 5 * scale}
	p.Write = fio.Side{IOs: 3, MeanLatMs: 8 * scale, P99Ms: 10 * scale}
	x.steps = append(x.steps, study.StepResult{Step: study.Step{Seq: len(x.steps) + 1, ID: target + "/profiles/p", Target: target,
		Experiment: "profiles", Kind: study.StorageProfiles, Profile: "hcibench-4k-70r", PathRole: "data"},
		Fio: []fio.Result{{Profile: "hcibench-4k-70r", Points: []fio.Point{p}}}})
}

// consolidation adds a consolidation step of three instances, c3 noisy in the noisy
// run and, in the baseline, on TPC-C (study.BaselineOLTP) or idle; sys is the shared
// storage's metrics (nil: none).
func (x *fixture) consolidation(noisy bool, baseline string, c1, c2 float64, facts study.ConsolidationFacts, sys *metrics.Report) {
	run := &study.ConsolidationRun{Noisy: noisy, Summary: facts, System: sys, Instances: []study.InstanceResult{
		{Name: "nvme-c1", Role: "oltp", Run: runResult(1, figures{nopm: c1})},
		{Name: "nvme-c2", Role: "oltp", Run: runResult(1, figures{nopm: c2})},
		{Name: "nvme-c3", Role: "oltp", Run: runResult(1, figures{nopm: 1000})},
	}}
	switch {
	case noisy:
		run.Instances[2] = study.InstanceResult{Name: "nvme-c3", Role: "noisy", Backups: []study.BackupCycle{{Cycle: 1}, {Cycle: 2}}}
	case baseline == study.BaselineIdle:
		run.Instances[2] = study.InstanceResult{Name: "nvme-c3", Role: "idle"}
	}
	step := study.Step{Seq: len(x.steps) + 1, ID: fmt.Sprintf("nvme/noisy/noisy=%v", noisy), Target: "nvme", Experiment: "noisy", Kind: study.Consolidation, Noisy: noisy}
	if !noisy {
		step.Baseline = baseline
	}
	x.steps = append(x.steps, study.StepResult{Step: step, Consolidation: run})
}

// sharedStorage is a consolidation's shared metrics: the CPU left idle, the data
// disk's per-I/O p99 and, per instance, the clients' active seconds on I/O (data
// files and WAL, half each) and on CPU, the rest on locks.
func sharedStorage(idle, p99 float64, waits map[string][2]float64) *metrics.Report {
	sys := &metrics.Report{Summary: metrics.Summary{CPU: &metrics.CPU{Idle: idle},
		Disks:   []metrics.Disk{{Device: "vdb", Roles: []string{"data"}}},
		Latency: []metrics.Latency{{Device: "vdb", IOs: 1000, P99Ms: p99}}}}
	if waits != nil {
		sys.Summary.Waits = &metrics.Waits{Source: "fixture"}
		for _, name := range []string{"nvme-c1", "nvme-c2"} {
			w := waits[name]
			sys.Summary.Waits.Roles = append(sys.Summary.Waits.Roles, metrics.RoleWaits{Server: name, Role: procrole.Clients, IntervalSeconds: 60,
				Seconds: map[string]float64{metrics.WaitDataIO: w[0] / 2, metrics.WaitWAL: w[0] / 2, metrics.WaitCPU: w[1], metrics.WaitLock: 100 - w[0] - w[1]}},
				metrics.RoleWaits{Server: name, Role: procrole.Checkpointer, IntervalSeconds: 60, Seconds: map[string]float64{metrics.WaitDataIO: 60}})
		}
	}
	return sys
}

func (x *fixture) source() *Source {
	src := &Source{Label: "fixture", Path: "fixture", Study: "fixture", Steps: x.steps}
	for _, s := range x.steps {
		src.Plan = append(src.Plan, s.Step)
	}
	return src
}

// twoTargetStudy is the study: nvme against sata in a user sweep (nvme peaks
// at 13 users, which sata did not run), nvme's memory and CPU variants at 4 users
// (the smaller listed first), backups, a noisy neighbour and a fio profile.
func twoTargetStudy() *Source {
	var x fixture
	x.run(study.UserSweep, "sweep", "nvme", "nvme/sweep", 1, 1, figures{nopm: 1000, p95: 2, await: 0.1, p99: 0.5}, nil)
	x.run(study.UserSweep, "sweep", "nvme", "nvme/sweep", 8, 1, figures{nopm: 6000, p95: 10, await: 0.2, p99: 1}, nil)
	x.run(study.UserSweep, "sweep", "nvme", "nvme/sweep", 13, 1, figures{nopm: 7000, p95: 12, await: 0.25, p99: 1.5}, nil)
	x.run(study.UserSweep, "sweep", "sata", "sata/sweep", 1, 1, figures{nopm: 900, p95: 3, await: 0.3, p99: 2}, nil)
	x.run(study.UserSweep, "sweep", "sata", "sata/sweep", 8, 1, figures{nopm: 2500, p95: 30, await: 0.6, p99: 4}, nil)
	memory := func(b int64) func(*study.Step) { return func(s *study.Step) { s.Memory = b } }
	x.run(study.MemorySweep, "mem", "nvme", "nvme/mem/memory=2GiB", 4, 1, figures{nopm: 3000, p95: 8, await: 0.4, p99: 2}, memory(2<<30))
	x.run(study.MemorySweep, "mem", "nvme", "nvme/mem/memory=8GiB", 4, 1, figures{nopm: 5000, p95: 4, await: 0.2, p99: 1}, memory(8<<30))
	cpus := func(list string) func(*study.Step) { return func(s *study.Step) { s.CPUs = list } }
	x.run(study.CPUSweep, "cpu", "nvme", "nvme/cpu/cpus=0", 4, 1, figures{nopm: 2000, p95: 9, await: 0.3, p99: 1.2}, cpus("0"))
	x.run(study.CPUSweep, "cpu", "nvme", "nvme/cpu/cpus=0-3", 4, 1, figures{nopm: 5000, p95: 3, await: 0.2, p99: 1}, cpus("0-3"))
	x.backup("nvme", 1, 10, 20, 1e9)
	x.backup("nvme", 2, 12, 20, 1e9)
	x.backup("sata", 1, 20, 40, 1e9)
	x.backup("sata", 2, 24, 40, 1e9)
	// The noisy neighbour: three OLTP instances in the baseline, two beside the
	// backups, on shared CPUs.
	x.consolidation(false, study.BaselineOLTP, 1000, 2000, study.ConsolidationFacts{MeanReadAwaitMs: 0.2, WorstReadAwaitMs: 0.5, MeanWriteAwaitMs: 0.4, WorstWriteAwaitMs: 1},
		sharedStorage(5, 0.9, nil))
	x.consolidation(true, "", 800, 1500, study.ConsolidationFacts{MeanReadAwaitMs: 0.6, WorstReadAwaitMs: 3, MeanWriteAwaitMs: 0.8, WorstWriteAwaitMs: 4,
		BackupMeanSeconds: 5, BackupMaxSeconds: 6}, sharedStorage(35, 2.1, nil))
	x.fio("nvme", 10000, 40)
	x.fio("sata", 2500, 10)
	return x.source()
}

// findingsOf lists the findings as "experiment: finding".
func findingsOf(t *testing.T, srcs ...*Source) []string {
	t.Helper()
	sec := findingsSection(srcs, sweeps(srcs))
	if sec == nil {
		t.Fatal("no findings section")
	}
	var out []string
	for _, r := range sec.Blocks[0].Table.Rows {
		out = append(out, r[0]+": "+r[1])
	}
	return out
}

// TestFindingsTwoTargets: each experiment's finding, its ratios worked out by hand
// from the fixture's figures.
func TestFindingsTwoTargets(t *testing.T) {
	got := findingsOf(t, twoTargetStudy())
	want := []string{
		// 2,500 ÷ 6,000 = 0.4167; p95 30 ÷ 10 = 3; await 0.6 ÷ 0.2 = 3; p99 4 ÷ 1 = 4.
		"sweep (user-sweep): sata/sweep delivers 0.42x the NOPM of nvme/sweep at 8 users (2,500 vs 6,000); New-Order p95 30.00 vs 10.00 ms (3x), data disk average I/O 0.600 vs 0.200 ms (3x), p99 I/O 4.000 vs 1.000 ms (4x); what limited each side was not recorded.",
		// nvme peaks at 13 users: 2,500 ÷ 7,000 = 0.357; 30 ÷ 12 = 2.5; 0.6 ÷ 0.25 = 2.4; 4 ÷ 1.5 = 2.667.
		"sweep (user-sweep): sata/sweep (peak at 8 users) delivers 0.36x the NOPM of nvme/sweep (peak at 13 users) at each one's peak (2,500 vs 7,000); New-Order p95 30.00 vs 12.00 ms (2.5x), data disk average I/O 0.600 vs 0.250 ms (2.4x), p99 I/O 4.000 vs 1.500 ms (2.67x); what limited each side was not recorded.",
		// Against the largest variant, 8 GiB, though listed second: 3,000 ÷ 5,000 = 0.6.
		"mem on nvme (memory variants): nvme/mem/memory=2GiB delivers 0.6x the NOPM of nvme/mem/memory=8GiB at 4 users (3,000 vs 5,000); New-Order p95 8.00 vs 4.00 ms (2x), data disk average I/O 0.400 vs 0.200 ms (2x), p99 I/O 2.000 vs 1.000 ms (2x); what limited each side was not recorded.",
		// Against 4 CPUs: 2,000 ÷ 5,000 = 0.4; 9 ÷ 3 = 3; 0.3 ÷ 0.2 = 1.5; 1.2 ÷ 1 = 1.2.
		"cpu on nvme (CPU variants): nvme/cpu/cpus=0 delivers 0.4x the NOPM of nvme/cpu/cpus=0-3 at 4 users (2,000 vs 5,000); New-Order p95 9.00 vs 3.00 ms (3x), data disk average I/O 0.300 vs 0.200 ms (1.5x), p99 I/O 1.200 vs 1.000 ms (1.2x); what limited each side was not recorded.",
		// Backups: mean 22 s ÷ 11 s = 2; MB/s 2,000 MB ÷ 44 s = 45.45 vs 2,000 ÷ 22 = 90.9: 0.5.
		"backup (backup and restore): sata's backups take 2x the seconds of nvme's (22.0 vs 11.0 s, mean of 2 cycles) at 0.5x its MB/s (45.5 vs 90.9).",
		// Restores: 40 ÷ 20 = 2; 25 vs 50 MB/s.
		"backup (backup and restore): sata's restores take 2x the seconds of nvme's (40.0 vs 20.0 s, mean of 2 cycles) at 0.5x its MB/s (25.0 vs 50.0).",
		// Three OLTP instances against two: (1,000 + 2,000 + 1,000) ÷ 3 = 1,333 per
		// instance, (800 + 1,500) ÷ 2 = 1,150; no change named. 0.6 ÷ 0.2 = 3; 0.8 ÷ 0.4 = 2.
		"nvme/noisy (consolidation): The baseline ran 3 OLTP instances, the noisy run 2: the NOPM difference mixes the backup's effect with one instance less; NOPM per OLTP instance 1,333 → 1,150 (c1 1,000 → 800, c2 2,000 → 1,500), not the noise's effect alone.",
		"nvme/noisy (consolidation): CPU idle went 5% → 35% (baseline → noisy run).",
		"nvme/noisy (consolidation): On the shared disk, read latency went 0.20 → 0.60 ms on average (3x), 0.50 → 3.00 ms in the worst interval; write 0.40 → 0.80 ms on average (2x), 1.00 → 4.00 ms in the worst interval; per-I/O p99 0.90 → 2.10 ms.",
		"nvme/noisy (consolidation): The noisy instance's 2 backups took 5.0 s on average, 6.0 s the longest.",
		// 2,500 ÷ 10,000 = 25%; 10 ÷ 40 = 25%; mean latency (7×3 + 3×8) ÷ 10 = 4.5 ms on nvme, 18 ms on sata: 400%.
		"hcibench-4k-70r (fio): sata delivers 25% of nvme's IOPS on 4k-randrw70 (2,500 vs 10,000) and 25% of its MB/s, at 400% of its mean latency (18.000 vs 4.500 ms).",
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestFindingsConsolidationMatched: an idle baseline runs the noisy run's OLTP
// instances alone, so each instance's change is stated, beside the CPU left idle and
// where the instances' sessions waited in both runs.
func TestFindingsConsolidationMatched(t *testing.T) {
	var x fixture
	x.consolidation(false, study.BaselineIdle, 1000, 2000, study.ConsolidationFacts{MeanReadAwaitMs: 0.2, WorstReadAwaitMs: 0.5, MeanWriteAwaitMs: 0.4, WorstWriteAwaitMs: 1},
		sharedStorage(30, 0.9, map[string][2]float64{"nvme-c1": {10, 80}, "nvme-c2": {20, 70}}))
	x.consolidation(true, "", 800, 1500, study.ConsolidationFacts{MeanReadAwaitMs: 0.6, WorstReadAwaitMs: 3, MeanWriteAwaitMs: 0.8, WorstWriteAwaitMs: 4,
		BackupMeanSeconds: 5, BackupMaxSeconds: 6}, sharedStorage(28, 2.1, map[string][2]float64{"nvme-c1": {40, 50}, "nvme-c2": {45, 50}}))
	got := findingsOf(t, x.source())
	want := []string{
		"nvme/noisy (consolidation): With 1 noisy instance backing up, the OLTP instances' NOPM went c1 1,000 → 800 (-20%), c2 2,000 → 1,500 (-25%).",
		"nvme/noisy (consolidation): CPU idle went 30% → 28% (baseline → noisy run).",
		// The clients' role (first per server), not the checkpointer's all-I/O profile.
		"nvme/noisy (consolidation): Of their active time the OLTP instances' sessions spent c1 10% → 40% on I/O, 80% → 50% on CPU; c2 20% → 45% on I/O, 70% → 50% on CPU.",
		"nvme/noisy (consolidation): On the shared disk, read latency went 0.20 → 0.60 ms on average (3x), 0.50 → 3.00 ms in the worst interval; write 0.40 → 0.80 ms on average (2x), 1.00 → 4.00 ms in the worst interval; per-I/O p99 0.90 → 2.10 ms.",
		"nvme/noisy (consolidation): The noisy instance's 2 backups took 5.0 s on average, 6.0 s the longest.",
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestFindingsConsolidationVerdicts: each OLTP instance's change says what limited it
// in the baseline and under the noise.
func TestFindingsConsolidationVerdicts(t *testing.T) {
	var x fixture
	x.consolidation(false, study.BaselineIdle, 1000, 2000, study.ConsolidationFacts{}, sharedStorage(30, 0.9, nil))
	x.consolidation(true, "", 800, 1500, study.ConsolidationFacts{}, sharedStorage(28, 2.1, nil))
	for i, detail := range []string{"cpu (database host)", "cpu (database host)", "storage (reads)", "cpu (database host)"} {
		// The baseline's two OLTP instances, then the noisy run's.
		x.steps[i/2].Consolidation.Instances[i%2].Run.Bottleneck = &bottleneck.Verdict{Kind: strings.Fields(detail)[0], Detail: detail}
	}
	got := findingsOf(t, x.source())
	want := "nvme/noisy (consolidation): With 1 noisy instance backing up, the OLTP instances' NOPM went " +
		"c1 1,000 → 800 (-20%; limited by cpu (database host) → storage (reads)), c2 2,000 → 1,500 (-25%; limited by cpu (database host) → cpu (database host))."
	if len(got) == 0 || got[0] != want {
		t.Errorf("findings:\n%s\nwant first:\n%s", strings.Join(got, "\n"), want)
	}
}

// TestFindingsNoWinner: a difference inside the repeats' spread, or over windows
// under 30 s, is stated with its numbers but names no winner.
func TestFindingsNoWinner(t *testing.T) {
	var x fixture
	for rep, nopm := range [][2]float64{{1000, 1100}, {1200, 1300}} {
		x.run(study.UserSweep, "rep", "a", "a/rep", 4, rep+1, figures{nopm: nopm[0], p95: 5}, nil)
		x.run(study.UserSweep, "rep", "b", "b/rep", 4, rep+1, figures{nopm: nopm[1], p95: 5}, nil)
	}
	x.run(study.UserSweep, "short", "a", "a/short", 4, 1, figures{nopm: 1000, p95: 5, window: 5 * time.Second}, nil)
	x.run(study.UserSweep, "short", "b", "b/short", 4, 1, figures{nopm: 3000, p95: 5, window: 5 * time.Second}, nil)
	x.run(study.UserSweep, "alone", "a", "a/alone", 4, 1, figures{nopm: 1000, p95: 5, window: 5 * time.Second}, nil)
	got := findingsOf(t, x.source())
	want := []string{
		// b's repeats 1,100 and 1,300 reach into a's 1,000–1,200.
		"rep (user-sweep): b/rep vs a/rep at 4 users: 1,200 (1,100–1,300) vs 1,100 (1,000–1,200) NOPM is within the spread of the repeats; New-Order p95 5.00 vs 5.00 ms (1x); what limited each side was not recorded: no winner named.",
		"short (user-sweep): b/short vs a/short at 4 users: 3,000 vs 1,000 NOPM; New-Order p95 5.00 vs 5.00 ms (1x); what limited each side was not recorded; the timed windows (5 s) are under 30 s, too short for the database counters: no winner named.",
		"alone (user-sweep): a/alone peaks at 1,000 NOPM at 4 users (New-Order p95 5.00 ms); the timed windows (5 s) are under 30 s, too short for the database counters: indicative only.",
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestFindingsUnsteady: a comparison with an unsteady window on either side is stated
// with its numbers and the verdicts but names no winner, and one sweep's figures
// over unsteady windows are indicative only; windows too short to judge, or steady,
// leave the comparison standing. The per-step table marks the unsteady points.
func TestFindingsUnsteady(t *testing.T) {
	drifting := &steady.Verdict{SlopePctPerMin: -38, SlopeErrPct: 2, CVPct: 21, Seconds: 60}
	swinging := &steady.Verdict{SlopePctPerMin: 1, SlopeErrPct: 5, CVPct: 40, Seconds: 60}
	steadyOne := &steady.Verdict{Steady: true, SlopePctPerMin: 1, SlopeErrPct: 5, CVPct: 4, Seconds: 60}
	tooShort := &steady.Verdict{TooShort: true, Seconds: 12}
	var x fixture
	x.run(study.UserSweep, "drift", "a", "a/drift", 4, 1, figures{nopm: 1000, p95: 5, steadiness: steadyOne}, nil)
	x.run(study.UserSweep, "drift", "b", "b/drift", 4, 1, figures{nopm: 3000, p95: 5, steadiness: drifting}, nil)
	for rep, v := range []*steady.Verdict{steadyOne, swinging, swinging} {
		x.run(study.UserSweep, "swing", "a", "a/swing", 4, rep+1, figures{nopm: 1000, p95: 5, steadiness: v}, nil)
		x.run(study.UserSweep, "swing", "b", "b/swing", 4, rep+1, figures{nopm: 3000, p95: 5, steadiness: steadyOne}, nil)
	}
	x.run(study.UserSweep, "judged", "a", "a/judged", 4, 1, figures{nopm: 1000, p95: 5, steadiness: tooShort}, nil)
	x.run(study.UserSweep, "judged", "b", "b/judged", 4, 1, figures{nopm: 3000, p95: 5, steadiness: steadyOne}, nil)
	x.run(study.UserSweep, "alone", "a", "a/alone", 1, 1, figures{nopm: 500, p95: 5, steadiness: steadyOne}, nil)
	x.run(study.UserSweep, "alone", "a", "a/alone", 4, 1, figures{nopm: 1000, p95: 5, steadiness: drifting}, nil)
	got := findingsOf(t, x.source())
	want := []string{
		"drift (user-sweep): b/drift vs a/drift at 4 users: 3,000 vs 1,000 NOPM; New-Order p95 5.00 vs 5.00 ms (1x); what limited each side was not recorded; not every timed window was steady (b/drift: UNSTEADY (slope -38%/min)), so a mean is over a changing rate: no winner named.",
		"swing (user-sweep): b/swing vs a/swing at 4 users: 3,000 vs 1,000 NOPM; New-Order p95 5.00 vs 5.00 ms (1x); what limited each side was not recorded; not every timed window was steady (a/swing: 2 of 3 runs UNSTEADY), so a mean is over a changing rate: no winner named.",
		// Too short to judge is not unsteady: the comparison stands.
		"judged (user-sweep): b/judged delivers 3x the NOPM of a/judged at 4 users (3,000 vs 1,000); New-Order p95 5.00 vs 5.00 ms (1x); what limited each side was not recorded.",
		"alone (user-sweep): a/alone peaks at 1,000 NOPM at 4 users (New-Order p95 5.00 ms); 2x the NOPM of 1 user; not every timed window was steady (at 4 users: UNSTEADY (slope -38%/min)): indicative only.",
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The per-step table marks the database figures of the points with an unsteady run.
	table := stepTable(sweeps([]*Source{x.source()}))
	var cells []string
	for _, r := range table.Rows {
		cells = append(cells, r[0]+" "+r[3])
	}
	wantCells := []string{"a/drift 1,000", "b/drift 3,000 §", "a/swing 1,000 (1,000–1,000) §", "b/swing 3,000 (3,000–3,000)",
		"a/judged 1,000", "b/judged 3,000", "a/alone 500", "a/alone 1,000 §"}
	if !slices.Equal(cells, wantCells) || !strings.Contains(strings.Join(table.Notes, "\n"), "§ a run of this point had a timed window judged unsteady") {
		t.Errorf("per-step NOPM cells:\n%s\nwant:\n%s\nnotes %q", strings.Join(cells, "\n"), strings.Join(wantCells, "\n"), table.Notes)
	}
}

// TestHeadlineWithinExperiments: a sweep at 1, 2, 3, 5, 8 users beside memory
// variants at 4 users share no user count; each experiment still gets its
// like-for-like column, against its own reference.
func TestHeadlineWithinExperiments(t *testing.T) {
	var x fixture
	for _, u := range []int{1, 2, 3, 5, 8} {
		x.run(study.UserSweep, "sweep", "nvme", "nvme/sweep", u, 1, figures{nopm: float64(1000 * u)}, nil)
		x.run(study.UserSweep, "sweep", "sata", "sata/sweep", u, 1, figures{nopm: float64(500 * u)}, nil)
	}
	memory := func(b int64) func(*study.Step) { return func(s *study.Step) { s.Memory = b } }
	x.run(study.MemorySweep, "mem", "nvme", "nvme/mem/memory=2GiB", 4, 1, figures{nopm: 3000}, memory(2<<30))
	x.run(study.MemorySweep, "mem", "nvme", "nvme/mem/memory=8GiB", 4, 1, figures{nopm: 4000}, memory(8<<30))
	head := headlineTable(sweeps([]*Source{x.source()}))
	var got []string
	for _, r := range head.Rows {
		got = append(got, strings.Join(r[:6], " | "))
	}
	want := []string{
		"nvme/sweep | 8,000 | 8 | 8 | 8,000 | 100%",
		"sata/sweep | 4,000 | 8 | 8 | 4,000 | 50%",
		// The largest memory first, as the reference: 3,000 ÷ 4,000 = 75%.
		"nvme/mem/memory=8GiB | 4,000 | 4 | 4 | 4,000 | 100%",
		"nvme/mem/memory=2GiB | 3,000 | 4 | 4 | 3,000 | 75%",
	}
	if !slices.Equal(got, want) {
		t.Errorf("headline rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestClientCountLabels: on SQLite, which keeps no transaction counter, the TPM
// charts and the per-step table say "client count"; a database TPM (and TPM per
// user) over a window under 30 s is marked in the table.
func TestClientCountLabels(t *testing.T) {
	var x fixture
	for _, u := range []int{1, 2} {
		x.run(study.UserSweep, "sweep", "lite", "lite/sweep", u, 1, figures{nopm: 1000, tpmSource: sqliteTPMSource}, nil)
		x.run(study.UserSweep, "sweep", "pg", "pg/sweep", u, 1, figures{nopm: 1000, window: 5 * time.Second}, nil)
	}
	series := sweeps([]*Source{x.source()})
	if got := throughputSource(series[:1], "tpm_db"); !strings.HasPrefix(got, "client count") {
		t.Errorf("SQLite's TPM source %q, want the client count", got)
	}
	if got := throughputSource(series, "tpm_db"); !strings.Contains(got, "client count for lite/sweep") {
		t.Errorf("a mixed report's TPM source %q does not name the SQLite series", got)
	}
	if got := throughputSource(series, "nopm_db"); got != "database counter" {
		t.Errorf("NOPM source %q: sum(d_next_o_id) is the database's", got)
	}
	sections := sweepSections(series[:1])
	tpmChart := sections[0].Blocks[1].Chart
	if !strings.Contains(string(tpmChart.Option), "client count") || strings.Contains(string(tpmChart.Option), "database counter") {
		t.Errorf("SQLite's TPM chart does not say client count: %s", tpmChart.Option)
	}
	table := stepTable(series)
	notes := strings.Join(table.Notes, "\n")
	for _, r := range table.Rows {
		switch {
		case r[0] == "lite/sweep" && !strings.HasSuffix(r[4], markClient):
			t.Errorf("SQLite's TPM (database) cell %q is not marked as the client count", r[4])
		case r[0] == "pg/sweep" && !strings.HasSuffix(r[4], markShortWindow):
			t.Errorf("a database TPM over 5 s, cell %q, is not marked", r[4])
		case r[0] == "pg/sweep" && !strings.HasSuffix(r[7], markShortWindow):
			t.Errorf("a database TPM per user over 5 s, cell %q, is not marked", r[7])
		case strings.ContainsAny(r[3], markClient+markShortWindow):
			t.Errorf("NOPM (database) cell %q is marked: it is read from the data", r[3])
		}
	}
	if !strings.Contains(notes, markClient+" client count") || !strings.Contains(notes, markShortWindow+" timed window under 30 s") {
		t.Errorf("the table's notes do not explain its marks:\n%s", notes)
	}
}

// TestSingleConfiguration: a report of one configuration (quick's) opens with its
// findings, has no one-row headline and no chart of a single bar or two.
func TestSingleConfiguration(t *testing.T) {
	var x fixture
	for _, u := range []int{1, 2, 4} {
		x.run(study.UserSweep, "sweep", "quick", "quick/sweep", u, 1, figures{nopm: float64(1000 * u), p95: 5, await: 0.2, p99: 1}, nil)
	}
	x.backup("quick", 1, 10, 20, 1e9)
	x.fio("quick", 10000, 40)
	r, err := Build([]*Source{x.source()}, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	ids := r.SectionIDs()
	if ids[0] != "findings" || slices.Contains(ids, "headline") {
		t.Errorf("sections %v: want findings first and no headline", ids)
	}
	for _, s := range r.Sections {
		for _, b := range s.Blocks {
			if b.Chart != nil && singleCategory(b.Chart) {
				t.Errorf("%s: chart %q draws one category", s.ID, b.Chart.Title)
			}
		}
	}
	got := findingsOf(t, x.source())
	want := []string{
		// 4,000 ÷ 1,000 = 4.
		"sweep (user-sweep): quick/sweep peaks at 4,000 NOPM at 4 users (New-Order p95 5.00 ms, data disk average I/O 0.200 ms, p99 I/O 1.000 ms); 4x the NOPM of 1 user.",
		"backup (backup and restore): quick: a backup takes 10.0 s at 100.0 MB/s (1 cycle).",
		"backup (backup and restore): quick: a restore takes 20.0 s at 50.0 MB/s (1 cycle).",
		"hcibench-4k-70r (fio): quick, 4k-randrw70: 10,000 IOPS, 40.0 MB/s, 4.500 ms mean and 10.000 ms p99 latency.",
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Each run's bottleneck verdict is listed per step with its figures; a sweep whose runs
// have none (stored before verdicts, or not sampled) gets no table.
func TestVerdictTable(t *testing.T) {
	var x fixture
	for rep := 1; rep <= 2; rep++ {
		x.run(study.UserSweep, "sweep", "nvme", "nvme/sweep", 4, rep, figures{nopm: 1000, await: 1}, nil)
	}
	x.steps[1].Run.Bottleneck = &bottleneck.Verdict{Kind: bottleneck.Storage, Detail: "storage (reads)",
		Figures: []bottleneck.Figure{{Name: "data disk read await", Value: 8.14, Unit: "ms"}}}
	series := sweeps([]*Source{x.source()})
	table := verdictTable(series)
	if table == nil || len(table.Rows) != 1 {
		t.Fatalf("verdict table %+v, want the one run that has a verdict", table)
	}
	if got, want := strings.Join(table.Rows[0], " | "), "nvme/sweep | 4 | 2 | storage (reads) | data disk read await 8.1 ms"; got != want {
		t.Errorf("row %q, want %q", got, want)
	}
	x.steps[1].Run.Bottleneck = nil
	if table := verdictTable(sweeps([]*Source{x.source()})); table != nil {
		t.Errorf("runs without verdicts give a table: %+v", table)
	}
}

// TestFindingsSayWhatLimited: a comparison says what limited each side. Two targets
// both limited by the CPU (the RAM-backed loop device and the virtual disk at 54,283 vs
// 53,601 NOPM) name no storage winner, however far apart; one limited by its storage
// and one by the CPU are compared, each side's verdict quoted.
func TestFindingsSayWhatLimited(t *testing.T) {
	verdict := func(kind, detail string, figs ...bottleneck.Figure) *bottleneck.Verdict {
		return &bottleneck.Verdict{Kind: kind, Detail: detail, Figures: figs}
	}
	cpu := func(idle float64) *bottleneck.Verdict {
		return verdict(bottleneck.CPU, "cpu (database host)", bottleneck.Figure{Name: "host CPU idle", Value: idle, Unit: "%"},
			bottleneck.Figure{Name: "clients on data-file I/O and WAL", Value: 4, Unit: "%"})
	}
	storage := verdict(bottleneck.Storage, "storage (reads)", bottleneck.Figure{Name: "clients on data-file I/O and WAL", Value: 61, Unit: "%"},
		bottleneck.Figure{Name: "data disk read await", Value: 8.14, Unit: "ms"})
	var x fixture
	add := func(experiment, target string, nopm float64, v *bottleneck.Verdict) {
		x.run(study.UserSweep, experiment, target, target+"/"+experiment, 8, 1, figures{nopm: nopm, p95: 5, await: 0.2, p99: 1}, nil)
		x.steps[len(x.steps)-1].Run.Bottleneck = v
	}
	add("both-cpu", "ram", 54283, cpu(2))
	add("both-cpu", "vdisk", 30000, cpu(3))
	add("mixed", "ram", 54283, cpu(2))
	add("mixed", "hdd", 20000, storage)
	got := findingsOf(t, x.source())
	want := []string{
		"both-cpu (user-sweep): vdisk/both-cpu vs ram/both-cpu at 8 users: 30,000 vs 54,283 NOPM; New-Order p95 5.00 vs 5.00 ms (1x), data disk average I/O 0.200 vs 0.200 ms (1x), p99 I/O 1.000 vs 1.000 ms (1x); " +
			"neither was limited by its storage (vdisk/both-cpu: cpu (database host) — host CPU idle 3%, clients on data-file I/O and WAL 4%; ram/both-cpu: cpu (database host) — host CPU idle 2%, clients on data-file I/O and WAL 4%): " +
			"the difference does not measure the storage, no winner named.",
		"mixed (user-sweep): hdd/mixed delivers 0.37x the NOPM of ram/mixed at 8 users (20,000 vs 54,283); New-Order p95 5.00 vs 5.00 ms (1x), data disk average I/O 0.200 vs 0.200 ms (1x), p99 I/O 1.000 vs 1.000 ms (1x); " +
			"limited by hdd/mixed: storage (reads) — clients on data-file I/O and WAL 61%, data disk read await 8.1 ms, ram/mixed: cpu (database host) — host CPU idle 2%, clients on data-file I/O and WAL 4%.",
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestTimelineSteadiness: a run's throughput chart says whether its window was steady;
// one run until steady is drawn to its end, not its planned duration, with the
// seconds judged shaded.
func TestTimelineSteadiness(t *testing.T) {
	run := runResult(1, figures{nopm: 1000, window: 95 * time.Second, steadiness: &steady.Verdict{Steady: true, CVPct: 4, Seconds: 30}})
	run.Config.DurationSeconds, run.Config.UntilSteadySeconds, run.UntilSteadyEnded = 30, 600, driver.EndedSteady
	for s := -2; s <= 95; s++ {
		run.Timeline = append(run.Timeline, driver.Second{T: s, TPM: 60000})
	}
	option := string(runCharts(run, false, false)[0].Option)
	for _, want := range []string{"window steady, run until steady: 95 s (shaded: the last 30 s, judged)", `"judged"`, "[95,60000,"} {
		if !strings.Contains(option, want) {
			t.Errorf("the throughput chart lacks %q:\n%s", want, option)
		}
	}
	run.Steadiness, run.Config.UntilSteadySeconds, run.UntilSteadyEnded = &steady.Verdict{SlopePctPerMin: -38, SlopeErrPct: 2, CVPct: 21, Seconds: 30}, 0, ""
	option = string(runCharts(run, false, false)[0].Option)
	if !strings.Contains(option, "window UNSTEADY (slope -38%/min)") || strings.Contains(option, "[95,60000,") || strings.Contains(option, `"judged"`) {
		t.Errorf("an unsteady 30 s window's chart is not marked, or is drawn past its end:\n%s", option)
	}
}

// TestFindingsNameServerVersions: the papers' old stack against the new one. Where
// the compared targets ran different server releases, each is named with its own
// and a winner is said to be the whole stack's; where they ran the same release,
// nothing is added.
func TestFindingsNameServerVersions(t *testing.T) {
	var x fixture
	x.run(study.UserSweep, "sweep", "old", "old/sweep", 4, 1, figures{nopm: 2000, p95: 6, await: 0.4, p99: 2}, nil)
	x.run(study.UserSweep, "sweep", "new", "new/sweep", 4, 1, figures{nopm: 5000, p95: 3, await: 0.2, p99: 1}, nil)
	x.run(study.UserSweep, "same", "new", "new/same", 4, 1, figures{nopm: 5000, p95: 3, await: 0.2, p99: 1}, nil)
	x.run(study.UserSweep, "same", "new2", "new2/same", 4, 1, figures{nopm: 2500, p95: 3, await: 0.2, p99: 1}, nil)
	x.backup("old", 1, 20, 40, 1e9)
	x.backup("new", 1, 10, 20, 1e9)
	versions := map[string]string{
		"old":  "PostgreSQL 13.23 on x86_64-pc-linux-gnu, compiled by gcc (GCC) 8.5.0, 64-bit",
		"new":  "PostgreSQL 17.10 on x86_64-pc-linux-gnu, compiled by gcc (GCC) 8.5.0, 64-bit",
		"new2": "PostgreSQL 17.10 on x86_64-pc-linux-gnu, compiled by gcc (GCC) 8.5.0, 64-bit",
	}
	for i := range x.steps {
		if r := x.steps[i].Run; r != nil {
			r.Config.ServerVersion = versions[x.steps[i].Step.Target]
		}
	}
	src := x.source()
	src.Env = &study.Environment{}
	// A managed target's environment holds its binary's version line.
	binaries := map[string]string{"old": "postgres (PostgreSQL) 13.23", "new": "postgres (PostgreSQL) 17.10", "new2": "postgres (PostgreSQL) 17.10"}
	for _, name := range []string{"old", "new", "new2"} {
		src.Env.Targets = append(src.Env.Targets, study.TargetEnv{Name: name, ServerVersion: binaries[name]})
	}
	got := findingsOf(t, src)
	want := []string{
		"sweep (user-sweep): new/sweep (PostgreSQL 17.10) delivers 2.5x the NOPM of old/sweep (PostgreSQL 13.23) at 4 users (5,000 vs 2,000); New-Order p95 3.00 vs 6.00 ms (0.5x), data disk average I/O 0.200 vs 0.400 ms (0.5x), p99 I/O 1.000 vs 2.000 ms (0.5x); what limited each side was not recorded; the servers differ (PostgreSQL 17.10 vs PostgreSQL 13.23), so this compares the stacks, not the storage alone.",
		"same (user-sweep): new2/same delivers 0.5x the NOPM of new/same at 4 users (2,500 vs 5,000); New-Order p95 3.00 vs 3.00 ms (1x), data disk average I/O 0.200 vs 0.200 ms (1x), p99 I/O 1.000 vs 1.000 ms (1x); what limited each side was not recorded.",
		"backup (backup and restore): new (PostgreSQL 17.10)'s backups take 0.5x the seconds of old (PostgreSQL 13.23)'s (10.0 vs 20.0 s, 1 cycle) at 2x its MB/s (100.0 vs 50.0); the servers differ (PostgreSQL 17.10 vs PostgreSQL 13.23), so this compares the stacks, not the storage alone.",
		"backup (backup and restore): new (PostgreSQL 17.10)'s restores take 0.5x the seconds of old (PostgreSQL 13.23)'s (20.0 vs 40.0 s, 1 cycle) at 2x its MB/s (50.0 vs 25.0); the servers differ (PostgreSQL 17.10 vs PostgreSQL 13.23), so this compares the stacks, not the storage alone.",
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestFindingsDifferentTools: a HammerDB run beside a storbench run names no winner:
// their windows and response times are not taken alike.
func TestFindingsDifferentTools(t *testing.T) {
	var x fixture
	x.run(study.UserSweep, "sweep", "ours", "ours/sweep", 4, 1, figures{nopm: 2000, p95: 6}, nil)
	x.run(study.UserSweep, "sweep", "theirs", "theirs/sweep", 4, 1, figures{nopm: 5000, p95: 3}, nil)
	x.steps[1].Run.Config.Version = "HammerDB v6.0"
	got := findingsOf(t, x.source())
	want := []string{"sweep (user-sweep): theirs/sweep vs ours/sweep at 4 users: 5,000 vs 2,000 NOPM; New-Order p95 3.00 vs 6.00 ms (0.5x); " +
		"what limited each side was not recorded; measured by different tools (HammerDB, storbench), over windows and response times not taken alike: no winner named."}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
