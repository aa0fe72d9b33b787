package study

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"

	"github.com/storbench/storbench/internal/blockdev"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/metrics"
)

// BackupRestore is an experiment kind: backup-then-restore cycles of each managed
// target's loaded database.
const BackupRestore = "backup-restore"

type backupRestore struct{ onManaged }

func (backupRestore) name() string    { return BackupRestore }
func (backupRestore) knobs() []string { return []string{"cycles", "method"} }

func (backupRestore) check(c *checker, _ *Study, i int, e *Experiment) {
	p := func(key string) string { return fmt.Sprintf("experiments[%d].%s", i, key) }
	if !c.doc.Has(p("cycles")) {
		e.Cycles = DefaultCycles
	} else if e.Cycles < 1 {
		c.errf(p("cycles"), "cycles %d is too few", "give 1 or more backup-then-restore cycles", e.Cycles)
	}
	if !c.doc.Has(p("method")) {
		e.Method = DefaultMethod
	} else if e.Method != "physical" && e.Method != "logical" {
		c.errf(p("method"), "method %q is unknown", "use physical, a copy of the server's files, or logical, a dump", e.Method)
	}
}

func (backupRestore) plan(steps []Step, s *Study, e *Experiment) []Step {
	return eachTarget(steps, s, e, func(steps []Step, t *Target) []Step {
		base, id := stepBase(e, t)
		for c := 1; c <= e.Cycles; c++ {
			b := base
			b.ID = fmt.Sprintf("%s/cycle=%d", id, c)
			b.Cycle, b.Method = c, e.Method
			b.Estimate = backupRestoreEstimate(s.Workload.Warehouses) + stepRestore(s, t)
			steps = append(steps, b)
		}
		return steps
	})
}

func (backupRestore) describe(st Step) string {
	return fmt.Sprintf("cycle %d  %s", st.Cycle, st.Method)
}

// planNote: a cycle backs up into the results store (by default results/NAME), which
// may be on the data's own disk.
func (backupRestore) planNote(t Target, results string) string {
	if note := sameFilesystem(t.Path, filepath.Join(results, "scratch")); note != "" {
		return fmt.Sprintf("%s (backups go to the results store, %s by default: give study run --results on another disk)", note, results)
	}
	return ""
}

func (backupRestore) run(ctx context.Context, r *runner, step Step, res *StepResult) error {
	return r.onTarget(ctx, step, res, r.backupRestore)
}

// backupRestore backs the loaded database up and restores it, timing both with what
// the disks did.
func (r *runner) backupRestore(ctx context.Context, t *target, step Step, res *StepResult) error {
	if err := t.ready(ctx, variantOf(t, Step{}), r.study.Workload.Restore != "never"); err != nil {
		return err
	}
	if err := r.limitsApplied(t, res); err != nil {
		return err
	}
	how, err := instance.ParseBackupMethod(step.Method, max(1, runtime.NumCPU()))
	if err != nil {
		return err
	}
	dir := r.store.ScratchDir(fmt.Sprintf("%s-cycle-%d", t.name, step.Cycle))
	if note := sameFilesystem(t.spec.Path, dir); note != "" {
		res.Notes = append(res.Notes, note)
	}
	// A killed run's backup of this cycle, left half made, is the study's own.
	if err := instance.RemoveBackup(dir, t.name); err != nil {
		return err
	}
	defer func() {
		if err := instance.RemoveBackup(dir, t.name); err != nil {
			res.Notes = append(res.Notes, "removing the cycle's backup: "+err.Error())
		}
	}()
	scratch := metrics.Target{Path: r.store.path("scratch"), Role: blockdev.RoleBackup}
	res.Backup, err = r.timed(ctx, t, scratch, func() (instance.Transfer, error) { return t.reg.Backup(ctx, t.name, dir, how) })
	if err != nil {
		return err
	}
	res.Restore, err = r.timed(ctx, t, scratch, func() (instance.Transfer, error) { return t.reg.Restore(ctx, t.name, dir, 0) })
	if err != nil {
		return err
	}
	fmt.Fprintf(r.opts.Log, "  %s cycle %d: backup %.1f s (%.0f MB/s), restore %.1f s (%.0f MB/s)\n", t.name, step.Cycle,
		res.Backup.Seconds, res.Backup.MBps, res.Restore.Seconds, res.Restore.MBps)
	return nil
}
