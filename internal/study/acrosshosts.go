package study

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/measure"
	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/remote"
)

// acrossHosts runs a consolidation over external targets, each database on its own
// host, as the papers' VMs on several hosts: every target's users driven from this
// process with one common start of the timed window, each host's CPU and disks read
// from its node_exporter and placed on this machine's clock, and physical backups of
// the last targets as the noise, streamed to this machine or run on their hosts over
// SSH. External databases are used as they are (never restored).
func (r *runner) acrossHosts(ctx context.Context, step Step, res *StepResult) error {
	e := r.experiment(step.Experiment)
	ts := make([]*target, len(step.Targets))
	for i, name := range step.Targets {
		t, err := r.target(ctx, name)
		if err != nil {
			return err
		}
		ts[i] = t
	}
	noisy := step.noisyInstances(e)
	mons := make([]*metrics.Monitor, len(ts))
	defer func() {
		for _, m := range mons {
			if m != nil {
				m.Close()
			}
		}
	}()
	for i, t := range ts {
		db, err := engine.Open(ctx, t.dsn)
		if err != nil {
			return fmt.Errorf("target %s: %w", t.spec.Name, err)
		}
		defer db.Close()
		if mons[i], err = metrics.New(ctx, r.metricsConfig(ctx, t, db)); err != nil {
			return fmt.Errorf("target %s: %w", t.spec.Name, err)
		}
	}
	all := measure.Together{Workers: len(ts), Noisy: noisy, Users: step.Users, Ramp: step.Ramp}
	start := all.Start()
	for _, m := range mons {
		m.Start(ctx, start)
	}
	c := &ConsolidationRun{Noisy: step.Noisy, Start: start, End: start.Add(step.Duration), Instances: make([]InstanceResult, len(ts))}
	// Failures that end every target early must not wait for the window's end.
	cpuCtx, cancelCPU := context.WithCancel(ctx)
	defer cancelCPU()
	window := windowCPU(cpuCtx, c.Start, c.End)
	for i, t := range ts {
		ir := &c.Instances[i]
		ir.Name, ir.Host, ir.Role = t.spec.Name, t.spec.Host, step.roleOf(all, i)
	}
	errs := all.Run(func(i int) (err error) {
		c.Instances[i].Run, err = r.oltp(ctx, ts[i].dsn, step, start)
		return err
	}, step.noise(func(i int) (err error) {
		c.Instances[i].Backups, err = backupSchedule(ctx, e.Noisy, start, func(k int) (instance.Transfer, error) {
			return r.externalBackup(ctx, ts[i], e.Noisy, k)
		})
		return err
	}))
	if time.Now().Before(c.End) {
		cancelCPU()
	}
	for i, m := range mons {
		c.Instances[i].System = m.Stop(context.WithoutCancel(ctx), 0, step.Duration.Seconds())
	}
	if cpu, ok := <-window; ok {
		c.Controller = controllerCPU(cpu, c)
	}
	c.Summary = consolidationFacts(c)
	res.Consolidation = c
	res.Notes = append(res.Notes, "each instance's client CPU is this whole process's, shared by the targets driven at once: see the consolidation's controller CPU per transaction")
	var failed []string
	for i, err := range errs {
		if err != nil {
			failed = append(failed, ts[i].spec.Name+": "+err.Error())
		}
	}
	if len(failed) > 0 {
		return errors.New(strings.Join(failed, "; "))
	}
	r.logConsolidation(step, c)
	return nil
}

// ControllerCPU is what driving all the targets at once cost this process.
type ControllerCPU struct {
	// Seconds is user + system CPU time over the timed window (getrusage of the
	// whole process), as a single run's client CPU is measured.
	Seconds      float64 `json:"cpu_s"`
	Transactions int64   `json:"transactions"` // completed in the window, every target's
	// MicrosPerTransaction is Seconds over Transactions.
	MicrosPerTransaction float64 `json:"us_per_txn"`
}

// windowCPU reads this process's CPU time at the window's start and end and sends
// the difference in seconds; nothing (the channel closed) when ctx ends first.
func windowCPU(ctx context.Context, start, end time.Time) <-chan float64 {
	out := make(chan float64, 1)
	at := func(t time.Time) (float64, bool) {
		select {
		case <-time.After(time.Until(t)):
		case <-ctx.Done():
			return 0, false
		}
		var u syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &u)
		sec := func(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }
		return sec(u.Utime) + sec(u.Stime), true
	}
	go func() {
		defer close(out)
		if before, ok := at(start); ok {
			if after, ok := at(end); ok {
				out <- after - before
			}
		}
	}()
	return out
}

// controllerCPU is the window's CPU seconds per transaction completed in the
// window, over all targets.
func controllerCPU(seconds float64, c *ConsolidationRun) *ControllerCPU {
	cc := &ControllerCPU{Seconds: seconds}
	for _, in := range c.Instances {
		if in.Run != nil {
			t := &in.Run.Transactions
			cc.Transactions += t.NewOrder.Count + t.Payment.Count + t.OrderStatus.Count + t.Delivery.Count + t.StockLevel.Count
		}
	}
	if cc.Transactions > 0 {
		cc.MicrosPerTransaction = cc.Seconds * 1e6 / float64(cc.Transactions)
	}
	return cc
}

// externalBackup takes backup k of an external target: pg_basebackup from this
// machine into the store's scratch (or the noisy path), or over SSH on its host.
func (r *runner) externalBackup(ctx context.Context, t *target, n *Noisy, k int) (instance.Transfer, error) {
	if n.RunOn == "host" {
		return t.backupOnHost(ctx, n.Path)
	}
	owner := "study-" + r.study.Name
	dir := r.store.ScratchDir(fmt.Sprintf("%s-noisy-%d", t.spec.Name, k))
	if n.Path != "" {
		dir = filepath.Join(n.Path, fmt.Sprintf("%s-%s-noisy-%d", r.study.Name, t.spec.Name, k))
	}
	tr, err := instance.BackupExternal(ctx, t.engine, t.dsn, dir, owner)
	if err == nil {
		err = instance.RemoveBackup(dir, owner)
	}
	return tr, err
}

// backupOnHost backs the target's server up on its own host over SSH, with the
// engine's script (instance.HostBackup: a new directory under path there, removed
// once timed and when cancelled — the remote group gets SIGTERM first —, the
// password through stdin, the seconds the backup tool's own, timed there).
func (t *target) backupOnHost(ctx context.Context, path string) (instance.Transfer, error) {
	script, stdin, err := instance.HostBackup(t.engine, t.dsn, path)
	if err != nil {
		return instance.Transfer{}, err
	}
	run := func() (string, error) {
		h, err := t.sshHost(ctx)
		if err != nil {
			return "", err
		}
		return h.Run(ctx, script, strings.NewReader(stdin))
	}
	out, err := run()
	if errors.Is(err, remote.ErrNoSession) {
		// A connection held since the target was prepared may have been dropped
		// (a firewall's idle timeout): dial again, once.
		t.ssh.Close()
		t.ssh = nil
		out, err = run()
	}
	if err != nil {
		return instance.Transfer{}, fmt.Errorf("backup of %s on its host over SSH: %w", t.spec.Name, err)
	}
	tr, err := instance.ParseHostBackup(out)
	if err != nil {
		return tr, fmt.Errorf("backup of %s on its host: %w", t.spec.Name, err)
	}
	return tr, nil
}

// sshHost is the SSH connection to an external target's host, opened once.
func (t *target) sshHost(ctx context.Context) (*remote.Host, error) {
	if t.ssh != nil {
		return t.ssh, nil
	}
	h, err := remote.Dial(ctx, remote.Config{Target: t.spec.SSH, KeyFile: t.spec.SSHKey, KnownHosts: t.spec.KnownHosts})
	if err != nil {
		return nil, err
	}
	t.ssh = h
	return h, nil
}

// backupSchedule takes a backup every interval from the common start, n.Cycles
// times, each placed on the step's timeline.
func backupSchedule(ctx context.Context, n *Noisy, start time.Time, backup func(k int) (instance.Transfer, error)) ([]BackupCycle, error) {
	var cycles []BackupCycle
	for k := 1; k <= n.Cycles; k++ {
		at := start.Add(time.Duration(k-1) * n.Interval.Duration)
		select {
		case <-time.After(time.Until(at)):
		case <-ctx.Done():
			return cycles, ctx.Err()
		}
		began := time.Now()
		tr, err := backup(k)
		if err != nil {
			return cycles, fmt.Errorf("noisy backup %d: %w", k, err)
		}
		cycles = append(cycles, BackupCycle{Cycle: k, StartT: began.Sub(start).Seconds(), EndT: time.Since(start).Seconds(), Transfer: tr})
	}
	return cycles, nil
}
