package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/study"
	"github.com/storbench/storbench/internal/testsupport/looptest"
)

// The capacity study: two managed targets, one whose data disk's writes are
// throttled, so that each commit's WAL flush (synchronous_commit on, storbench's
// default) waits for the limit. The search finds a lower capacity for the limited
// one, every probe is stored whole, and the report draws each target's curve. Both
// loop devices are RAM-backed, so that the limit is the only difference between them,
// whatever else writes to the machine's disk: on them 200 write IOPS carried 6,180
// TPM and the other target 62,985 (internal/report/testdata/capacity).
func TestCapacityStudy(t *testing.T) {
	t.Parallel() // its own servers, loop devices and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("runs a capacity search on two managed instances")
	}
	fast := looptest.MountIn(t, "/dev/shm", 1<<30)
	slow := looptest.MountIn(t, "/dev/shm", 1<<30)
	results, out := runStudyFile(t, `name: capacity
targets:
  - name: fast
    path: `+filepath.Join(fast.Dir, "pg")+`
    memory: 512MB
  - name: slow
    path: `+filepath.Join(slow.Dir, "pg")+`
    memory: 512MB
    io_limit: {wiops: 200}
workload:
  warehouses: 1
experiments:
  - name: cap
    kind: capacity
    users: 8
    ramp: 1s
    duration: 3s
    slo: {transaction: new-order, percentile: 90, ms: 50}
    start_rate: 8000
    precision: 1
    max_probes: 6
`)
	t.Logf("study run:\n%s", out)
	store, err := study.ReadStore(results)
	must(t, err)
	steps, bad, err := store.ReadSteps()
	must(t, err)
	if len(bad) > 0 || len(steps) != 2 {
		t.Fatalf("%d steps stored, %d unreadable: want the two searches", len(steps), len(bad))
	}
	found := map[string]*study.CapacityRun{}
	for _, s := range steps {
		c := s.Capacity
		if c == nil || len(c.Probes) == 0 || len(c.Probes) > 6 {
			t.Fatalf("step %s: search %+v, want 1 to 6 probes", s.Step.ID, c)
		}
		for i, p := range c.Probes {
			if p.Run == nil || p.Run.Rate == nil || p.Run.Config.Rate != p.RateTPM || len(p.Run.Timeline) == 0 || p.Run.System == nil || p.Why == "" {
				t.Errorf("%s probe %d at %.0f TPM is not stored whole: %+v", s.Step.ID, i+1, p.RateTPM, p)
			}
			// Each probe starts from the base image: the first from the build's.
			if restored := p.RestoreSeconds > 0; restored != (i > 0) {
				t.Errorf("%s probe %d restored the base image for %.1f s first", s.Step.ID, i+1, p.RestoreSeconds)
			}
		}
		var restored float64
		for _, p := range c.Probes {
			restored += p.RestoreSeconds
		}
		if s.RestoreSeconds != restored {
			t.Errorf("%s: %.2f s restoring stored for the step, its probes' add up to %.2f", s.Step.ID, s.RestoreSeconds, restored)
		}
		found[s.Step.Target] = c
		t.Logf("%s: %s", s.Step.Target, c.Summary())
	}
	f, s := found["fast"], found["slow"]
	if f == nil || s == nil {
		t.Fatalf("searches of %v, want fast and slow", found)
	}
	// The limited target's capacity is below the other's: its highest passing rate
	// under one the fast target passed, and the fast one passed a rate it failed.
	if s.Best == 0 || f.Best == 0 || s.CapacityNOPM >= f.CapacityNOPM || s.Fail == 0 || f.Probes[f.Best-1].RateTPM < s.Probes[s.Fail-1].RateTPM {
		t.Errorf("capacities: fast %s; slow %s: want the slow one lower", f.Summary(), s.Summary())
	}

	page := reportPage(t, results)
	for _, want := range []string{"Capacity of fast/cap: New-Order p90 against throughput", "Capacity of slow/cap: New-Order p90 against throughput", "objective 50 ms"} {
		if !strings.Contains(page, want) {
			t.Errorf("the report lacks the curve's %q", want)
		}
	}
	// The finding compares them against the first target ("slow/cap carries 0.19x the
	// NOPM of fast/cap within …"), or says why it names no winner.
	if !regexp.MustCompile(`slow/cap (carries 0\.[0-9]+x the NOPM of|vs) fast/cap within New-Order p90 ≤ 50 ms`).MatchString(page) {
		t.Errorf("the report has no finding comparing the capacities:\n%s", findingsText(page))
	}
}
