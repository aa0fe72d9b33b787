package study

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/tpcc"
)

// Step is one unit of a study, in the order it runs; a measured step's result is
// stored under its ID, which stays the same across runs of the same study file, so a
// study that is run again resumes after its last stored step.
type Step struct {
	Seq        int    `json:"seq"` // 1-based position in the plan
	ID         string `json:"id"`
	Target     string `json:"target"`
	Experiment string `json:"experiment"`
	Kind       string `json:"kind"`

	// The instance variant the step needs (memory-sweep, cpu-sweep, io-sweep, replication):
	// zero values are the target's own settings.
	Memory      int64             `json:"memory_bytes,omitempty"`
	CPUs        string            `json:"cpus,omitempty"`
	IOLimit     *instance.IOLimit `json:"io_limit,omitempty"`
	WithReplica bool              `json:"with_replica,omitempty"`

	// A TPROC-C run (user-sweep, memory-sweep, cpu-sweep, replication).
	Users    int           `json:"users,omitempty"`
	Repeat   int           `json:"repeat,omitempty"` // 1-based
	Ramp     time.Duration `json:"ramp,omitempty"`
	Duration time.Duration `json:"duration,omitempty"`
	// UntilSteady is the longest the window may run until steady (0: Duration).
	UntilSteady time.Duration `json:"until_steady,omitempty"`
	// Rate is an open-loop run's offered transactions a minute (0: closed loop).
	Rate float64 `json:"rate_tpm,omitempty"`

	// capacity: the search's objective and its budget of probes (each a window as
	// above, at a rate of its own).
	SLO       *SLO `json:"slo,omitempty"`
	MaxProbes int  `json:"max_probes,omitempty"`

	// storage-profiles: one fio profile on one of the target's paths.
	Profile  string        `json:"profile,omitempty"`
	PathRole string        `json:"path_role,omitempty"` // "data" or "wal"
	Size     int64         `json:"size,omitempty"`
	Runtime  time.Duration `json:"runtime,omitempty"`

	// backup-restore: one backup-then-restore cycle.
	Cycle  int    `json:"cycle,omitempty"` // 1-based
	Method string `json:"method,omitempty"`

	// consolidation: with the noisy workload (false: the baseline).
	Noisy bool `json:"noisy,omitempty"`
	// Baseline is what the noisy instances do in a baseline step (BaselineIdle or
	// BaselineOLTP).
	Baseline string `json:"baseline,omitempty"`
	// Targets are the external targets a consolidation across hosts drives at once
	// (Target is then their names joined by "+").
	Targets []string `json:"targets,omitempty"`

	// Estimate is the step's expected wall time, restore included.
	Estimate time.Duration `json:"estimate"`
}

// Plan lists every step of a study, checked and with its defaults filled in by Load
// or Parse, in the order they run: experiment by experiment as the file lists them,
// and within one, target by target (in the order the experiment names them, else the
// file's). A user sweep runs whole once per repeat (repeat 1: users 1, 2, 4, …;
// then repeat 2: …) rather than repeating each point in a row, as HammerDB's
// autopilot and the papers' averaged runs did: a drift of the machine over the hours
// then spreads over every point instead of biasing the high user counts.
func Plan(s *Study) []Step {
	var steps []Step
	for i := range s.Experiments {
		e := &s.Experiments[i]
		steps = kindNamed(e.Kind).plan(steps, s, e)
	}
	for i := range steps {
		steps[i].Seq = i + 1
	}
	return steps
}

// stepRestore is the restore of the base image that precedes a step on a managed
// target; an external database is used as it is.
func stepRestore(s *Study, t *Target) time.Duration { return t.kindOf().restore(s) }

// The estimates below are rates measured on the development machine (2 vCPUs, a
// virtio disk, PostgreSQL 15, storbench's own build, backup and restore) with nothing
// else running, as a study's machine should be: a build took 5.9 s for 4 warehouses,
// 26.2 s for 25 and 140.7 s for 100 (bench/buildscale.sh; on the same machine loaded
// by other work, load average 9-23, 18.7 s, 111 s and 321 s); a physical backup of 10
// and 30 warehouses 2-4 s and 4.7-7.8 s; a restore 2.1 s and 4.9-7.1 s. The restore
// rates are rounded up, as the storage under test is often slower than that disk;
// slower storage takes longer, which is what a study is there to show, so a plan's
// total is a guide to plan a night by, not a promise.

// BuildEstimate is how long building a target's schema takes: the load phase at the
// 0.7 M rows/s measured at 25 and 100 warehouses (0.7 s for a warehouse's ~500,000
// rows), keys, indexes, VACUUM FREEZE and CHECKPOINT at about 0.7 s per warehouse
// (0.43 s at 25, 0.72 s at 100, where the WAL passes max_wal_size), plus 2 s for the
// server and the procedures (keeping the base image adds about a backup's time, 0.2 s
// per warehouse, which this leaves out). Sizes that do not fit in memory (past ~200
// warehouses on 24 GB) were not measured: the sorts and the checkpoint then wait on
// the disk, so a plan of 1,200 warehouses is a lower bound.
func BuildEstimate(warehouses int) time.Duration {
	const loadPerWarehouse, finishPerWarehouse = 700 * time.Millisecond, 700 * time.Millisecond
	return time.Duration(warehouses)*(loadPerWarehouse+finishPerWarehouse) + 2*time.Second
}

// restoreEstimate is how long restoring the base image before a step takes: about
// 0.3 s per warehouse copied back, plus 2 s to stop and start the server.
func restoreEstimate(warehouses int) time.Duration {
	return time.Duration(warehouses)*300*time.Millisecond + 2*time.Second
}

// backupRestoreEstimate is one backup-then-restore cycle: each way about 0.25 s per
// warehouse plus 1 s.
func backupRestoreEstimate(warehouses int) time.Duration {
	return 2 * (time.Duration(warehouses)*250*time.Millisecond + time.Second)
}

// WritePlan prints what a study will do, step by step, with estimated durations and
// the total, so a night of runs can be judged before it starts; results is the
// results store it will run into (ResultsDir).
func WritePlan(w io.Writer, s *Study, steps []Step, results string) error {
	width := 0
	for _, t := range s.Targets {
		width = max(width, len(t.Name))
	}
	pad := func(name string) string { return fmt.Sprintf("%-*s", width, name) }

	b := &strings.Builder{}
	fmt.Fprintf(b, "study %s: %s, %s, %s, %s\n", s.Name, tpcc.Count(len(s.Targets), "target"),
		tpcc.Count(len(s.Experiments), "experiment"), tpcc.Count(len(steps), "step"), tpcc.Count(s.Workload.Warehouses, "warehouse"))
	b.WriteString("targets:\n")
	for _, t := range s.Targets {
		fmt.Fprintf(b, "  %s  %s\n", pad(t.Name), describeTarget(t))
	}

	// Every target with a step is prepared, its schema built, before its first step.
	var builds time.Duration
	b.WriteString("builds:\n")
	for _, t := range s.Targets {
		if !slices.ContainsFunc(steps, func(st Step) bool { return st.Target == t.Name }) {
			continue
		}
		d := BuildEstimate(s.Workload.Warehouses)
		builds += d
		fmt.Fprintf(b, "  %s  build %s%s  (~%s)\n", pad(t.Name), tpcc.Count(s.Workload.Warehouses, "warehouse"), t.kindOf().buildNote(), roughDuration(d))
	}

	var total time.Duration
	b.WriteString("steps:\n")
	seqWidth := len(strconv.Itoa(len(steps)))
	for _, st := range steps {
		total += st.Estimate
		fmt.Fprintf(b, "  %*d/%d  %s  %s %q  %s  (~%s)\n", seqWidth, st.Seq, len(steps), pad(st.Target), st.Kind, st.Experiment,
			describeStep(st), roughDuration(st.Estimate))
	}
	fmt.Fprintf(b, "estimated total: ~%s (builds ~%s, steps ~%s)\n", roughDuration(builds+total), roughDuration(builds), roughDuration(total))
	writePlanNotes(b, s, steps, results)
	_, err := io.WriteString(w, b.String())
	return err
}

// writePlanNotes says what the steps measure that their figures alone do not: what
// a kind notes of its steps on a target (a backup-restore cycle backs up into the
// results store, which may be on the data's own disk), a memory limit not applied.
func writePlanNotes(b *strings.Builder, s *Study, steps []Step, results string) {
	var notes []string
	for _, t := range s.Targets {
		for _, k := range experimentKinds {
			n, ok := k.(planNoter)
			if !ok || !slices.ContainsFunc(steps, func(st Step) bool { return st.Target == t.Name && st.Kind == k.name() }) {
				continue
			}
			if note := n.planNote(t, results); note != "" {
				notes = append(notes, fmt.Sprintf("  %s: %s", t.Name, note))
			}
		}
	}
	if _, who, why := memoryLimitsUnapplied(s); who != "" {
		// Only reached with allow_unapplied_limits: CheckMachine refuses it otherwise.
		notes = append(notes, fmt.Sprintf("  %s: MEMORY LIMIT NOT APPLIED, allowed by allow_unapplied_limits (%v): its steps run without it", who, why))
	}
	if len(notes) > 0 {
		b.WriteString("notes:\n" + strings.Join(notes, "\n") + "\n")
	}
}

func describeTarget(t Target) string { return t.kindOf().describe(t) }

func describeStep(st Step) string { return kindNamed(st.Kind).describe(st) }

// roughDuration writes 1m32s, 2m or 3h5m: seconds are dropped from hours, where
// they are noise in an estimate.
func roughDuration(d time.Duration) string {
	if d%time.Second != 0 && d < time.Minute {
		return d.String()
	}
	d = d.Round(time.Second)
	if d >= time.Hour {
		d = d.Round(time.Minute)
	}
	h, m, sec := int(d/time.Hour), int(d%time.Hour/time.Minute), int(d%time.Minute/time.Second)
	var out string
	if h > 0 {
		out += fmt.Sprintf("%dh", h)
	}
	if m > 0 {
		out += fmt.Sprintf("%dm", m)
	}
	if sec > 0 || out == "" {
		out += fmt.Sprintf("%ds", sec)
	}
	return out
}
