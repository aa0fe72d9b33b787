package study

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/blockdev"
	"github.com/storbench/storbench/internal/bottleneck"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/measure"
	"github.com/storbench/storbench/internal/metrics"
)

// ConsolidationRun is one consolidation step: several instances on one storage, TPC-C on
// most of them, the noisy workload on the others, all measured over the same window.
type ConsolidationRun struct {
	Noisy bool `json:"noisy"`
	// Start and End bound the common timed window.
	Start     time.Time        `json:"start"`
	End       time.Time        `json:"end"`
	Instances []InstanceResult `json:"instances"`
	// System is the shared storage's host (a consolidation on one target); across
	// hosts each instance has its own.
	System  *metrics.Report    `json:"system,omitempty"`
	Summary ConsolidationFacts `json:"summary"`
	// Controller is what driving every target at once cost this process (across
	// hosts).
	Controller *ControllerCPU `json:"controller,omitempty"`
}

// InstanceResult is one consolidated instance's share.
type InstanceResult struct {
	Name    string         `json:"name"`
	Role    string         `json:"role"` // RoleOLTP, RoleNoisy or RoleIdle
	Run     *driver.Result `json:"run,omitempty"`
	Backups []BackupCycle  `json:"backups,omitempty"`
	// Host is the instance's host (across hosts; "" : this machine) and System what
	// its node_exporter said over the window.
	Host   string          `json:"host,omitempty"`
	System *metrics.Report `json:"system,omitempty"`
}

// OLTPInstances is how many of the run's instances ran TPC-C.
func (c *ConsolidationRun) OLTPInstances() int {
	n := 0
	for _, in := range c.Instances {
		if in.Role == RoleOLTP {
			n++
		}
	}
	return n
}

// BackupCycle is one backup of the noisy workload, on the step's timeline.
type BackupCycle struct {
	Cycle  int     `json:"cycle"`
	StartT float64 `json:"start_t"` // seconds from the window's start
	EndT   float64 `json:"end_t"`
	instance.Transfer
}

// ConsolidationFacts are the figures the step prints and the report compares.
type ConsolidationFacts struct {
	// Per-second disk latency over the window (from /proc/diskstats averages per
	// interval): the mean and the worst second, reads and writes.
	MeanReadAwaitMs, WorstReadAwaitMs   float64
	MeanWriteAwaitMs, WorstWriteAwaitMs float64
	BackupMeanSeconds, BackupMaxSeconds float64
	BackupTotalSeconds                  float64
}

// consolidation runs one consolidation step. The target's own instance is stopped
// (its memory goes to the others); each consolidated instance is made beside the
// target's path and given a copy of the base image rather than built again; all
// OLTP instances start their timed window together.
func (r *runner) consolidation(ctx context.Context, t *target, step Step, res *StepResult) error {
	e := r.experiment(step.Experiment)
	if err := t.ready(ctx, variantOf(t, Step{}), false); err != nil {
		return err
	}
	if _, err := t.reg.Stop(ctx, t.name); err != nil {
		return err
	}
	noisy := step.noisyInstances(e)
	names := make([]string, e.Instances)
	defer func() {
		for _, n := range names {
			if n != "" {
				if err := t.reg.Destroy(context.WithoutCancel(ctx), n); err != nil {
					res.Notes = append(res.Notes, fmt.Sprintf("removing instance %s: %v", n, err))
				}
			}
		}
	}()
	dsns := make([]string, e.Instances)
	for i := range names {
		name := fmt.Sprintf("%s-c%d", t.name, i+1)
		spec := instance.Spec{Name: name, Engine: t.spec.Engine, BinDir: t.spec.BinDir, Path: consolidatedPath(t.spec.Path, i),
			MemoryBytes: e.InstanceMemory.Bytes, MaxConnections: driver.ServerConnections(step.Users)}
		if len(e.InstanceCPUs) > 0 {
			spec.CPUs = e.InstanceCPUs[i%len(e.InstanceCPUs)]
		}
		// A run killed during this step left its instances (running): the study's own.
		if err := t.reg.DestroyLeft(ctx, name); err != nil {
			return fmt.Errorf("instance %d of %d: %w", i+1, e.Instances, err)
		}
		st, _, err := t.reg.Create(ctx, spec)
		if err != nil {
			return fmt.Errorf("instance %d of %d: %w", i+1, e.Instances, err)
		}
		res.Notes = append(res.Notes, fmt.Sprintf("instance %s limits: %s", name, strings.Join(st.Limits, "; ")))
		names[i] = name
		if st, err = t.reg.Start(ctx, name); err != nil {
			return err
		}
		if _, err := t.reg.RestoreWith(ctx, name, r.store.BaseDir(t.name), instance.RestoreOptions{OtherInstance: true}); err != nil {
			return fmt.Errorf("instance %s: copy of the base image: %w", name, err)
		}
		dsns[i] = st.DSN()
	}
	fmt.Fprintf(r.opts.Log, "  %d instances of %d MiB on %s, %d with the noisy workload\n", e.Instances, e.InstanceMemory.Bytes>>20, t.spec.Path, noisy)

	var servers []metrics.Server
	var unsampled []string
	for _, n := range names {
		srv, err := t.reg.Server(n, n)
		if err != nil {
			unsampled = append(unsampled, "no I/O by process role: "+err.Error())
			continue
		}
		servers = append(servers, srv)
	}
	// Each instance's sessions' wait events, under its name: the OLTP instances'
	// shares compare across the baseline and the noisy run whatever their count.
	var waiting []metrics.WaitServer
	for i, n := range names {
		db, err := engine.Open(ctx, dsns[i])
		if err != nil {
			unsampled = append(unsampled, fmt.Sprintf("no wait profile of %s: %v", n, err))
			continue
		}
		defer db.Close()
		waiting = append(waiting, metrics.WaitServer{Name: n, DB: db})
	}
	mon, err := metrics.New(ctx, metrics.Config{Interval: r.study.Metrics.Interval.Duration, IOLatency: r.study.Metrics.IOLatency,
		WaitRate: r.study.Metrics.WaitRate, WaitServers: waiting,
		Targets: []metrics.Target{{Path: t.spec.Path, Role: blockdev.RoleData}}, Servers: servers})
	if err != nil {
		return err
	}
	defer mon.Close()
	for _, n := range unsampled {
		mon.Note(n)
	}
	all := measure.Together{Workers: e.Instances, Noisy: noisy, Users: step.Users, Ramp: step.Ramp}
	start := all.Start()
	mon.Start(ctx, start)
	c := &ConsolidationRun{Noisy: step.Noisy, Start: start, End: start.Add(step.Duration), Instances: make([]InstanceResult, e.Instances)}
	for i, name := range names {
		c.Instances[i].Name, c.Instances[i].Role = name, step.roleOf(all, i)
	}
	errs := all.Run(func(i int) (err error) {
		c.Instances[i].Run, err = r.oltp(ctx, dsns[i], step, start)
		return err
	}, step.noise(func(i int) (err error) {
		c.Instances[i].Backups, err = r.noisyBackups(ctx, t, names[i], e.Noisy, start)
		return err
	}))
	c.System = mon.Stop(context.WithoutCancel(ctx), 0, step.Duration.Seconds())
	c.judge()
	c.Summary = consolidationFacts(c)
	res.Consolidation = c
	if err := errors.Join(errs...); err != nil {
		return err
	}
	r.logConsolidation(step, c)
	return nil
}

// experiment finds a step's experiment.
func (r *runner) experiment(name string) *Experiment {
	for i := range r.study.Experiments {
		if r.study.Experiments[i].Name == name {
			return &r.study.Experiments[i]
		}
	}
	return nil
}

// oltp drives one consolidated instance from the common start.
func (r *runner) oltp(ctx context.Context, dsn string, step Step, start time.Time) (*driver.Result, error) {
	cfg := r.driverConfig(step)
	cfg.StartAt = start
	out, err := measure.Run(ctx, measure.Point{DSN: dsn, Driver: cfg, Version: r.opts.Version})
	return out.Run, err
}

// noisyBackups backs an instance up every interval from the common start, each
// backup into the store's scratch directory (or the noisy path), removed once timed.
func (r *runner) noisyBackups(ctx context.Context, t *target, name string, n *Noisy, start time.Time) ([]BackupCycle, error) {
	how, err := instance.ParseBackupMethod(n.Method, max(1, runtime.NumCPU()))
	if err != nil {
		return nil, err
	}
	cycles, err := backupSchedule(ctx, n, start, func(k int) (instance.Transfer, error) {
		dir := r.store.ScratchDir(fmt.Sprintf("%s-noisy-%d", name, k))
		if n.Path != "" {
			dir = filepath.Join(n.Path, fmt.Sprintf("%s-noisy-%d", name, k))
		}
		// A killed run's backup of this cycle, left half made, is the study's own.
		if err := instance.RemoveBackup(dir, name); err != nil {
			return instance.Transfer{}, err
		}
		tr, err := t.reg.Backup(ctx, name, dir, how)
		if err == nil {
			err = instance.RemoveBackup(dir, name)
		}
		return tr, err
	})
	if err != nil {
		return cycles, fmt.Errorf("%s: %w", name, err)
	}
	return cycles, nil
}

// dataDisk is the disk holding the database's data, the first when none says so
// (a consolidation on one target samples its storage's disk alone).
func dataDisk(disks []metrics.Disk) metrics.Disk {
	for _, d := range disks {
		if slices.Contains(d.Roles, "data") {
			return d
		}
	}
	return disks[0]
}

// consolidationFacts summarises the shared disks' per-second latency and the backups.
func consolidationFacts(c *ConsolidationRun) ConsolidationFacts {
	var f ConsolidationFacts
	// The shared storage's disk; across hosts, every host's data disk.
	reports := []*metrics.Report{c.System}
	if c.System == nil {
		reports = reports[:0]
		for _, in := range c.Instances {
			if in.System != nil {
				reports = append(reports, in.System)
			}
		}
	}
	var n int
	for _, sys := range reports {
		for _, s := range sys.Samples {
			if s.T <= 0 || s.T > c.End.Sub(c.Start).Seconds()+0.5 || len(s.Disks) == 0 {
				continue
			}
			d := dataDisk(s.Disks)
			n++
			f.MeanReadAwaitMs += d.ReadAwaitMs
			f.MeanWriteAwaitMs += d.WriteAwaitMs
			f.WorstReadAwaitMs = max(f.WorstReadAwaitMs, d.ReadAwaitMs)
			f.WorstWriteAwaitMs = max(f.WorstWriteAwaitMs, d.WriteAwaitMs)
		}
	}
	if n > 0 {
		f.MeanReadAwaitMs /= float64(n)
		f.MeanWriteAwaitMs /= float64(n)
	}
	var count int
	for _, in := range c.Instances {
		for _, b := range in.Backups {
			count++
			f.BackupTotalSeconds += b.Seconds
			f.BackupMeanSeconds += b.Seconds
			f.BackupMaxSeconds = max(f.BackupMaxSeconds, b.Seconds)
		}
	}
	if count > 0 {
		f.BackupMeanSeconds /= float64(count)
	}
	return f
}

// logConsolidation prints each instance's figures, against the baseline when it ran.
func (r *runner) logConsolidation(step Step, c *ConsolidationRun) {
	var baseline *ConsolidationRun
	if step.Noisy {
		if steps, err := r.store.Steps(); err == nil {
			for _, s := range steps {
				if s.Consolidation != nil && !s.Consolidation.Noisy && s.Step.Experiment == step.Experiment && s.Step.Target == step.Target {
					baseline = s.Consolidation
				}
			}
		}
	}
	if baseline != nil && baseline.OLTPInstances() != c.OLTPInstances() {
		fmt.Fprintf(r.opts.Log, "  the baseline ran %d OLTP instances, this run %d: the changes mix the noise with the CPU the others left (baseline: idle compares like with like)\n",
			baseline.OLTPInstances(), c.OLTPInstances())
	}
	for i, in := range c.Instances {
		switch {
		case in.Role == RoleIdle:
			fmt.Fprintf(r.opts.Log, "  %s: idle\n", in.Name)
		case in.Run != nil:
			line := fmt.Sprintf("  %s: NOPM %.0f, TPM %.0f (database counters)", in.Name, in.Run.NOPMDB, in.Run.TPMDB)
			if baseline != nil && i < len(baseline.Instances) && baseline.Instances[i].Run != nil && baseline.Instances[i].Run.NOPMDB > 0 {
				line += fmt.Sprintf(", %+.1f%% NOPM vs the baseline", 100*(in.Run.NOPMDB/baseline.Instances[i].Run.NOPMDB-1))
			}
			fmt.Fprintln(r.opts.Log, line)
		default:
			fmt.Fprintf(r.opts.Log, "  %s: %d backups\n", in.Name, len(in.Backups))
		}
	}
	f := c.Summary
	disks := "shared disk"
	if c.System == nil {
		disks = "every host's data disk"
	}
	fmt.Fprintf(r.opts.Log, "  %s, per-second averages per I/O: read %.2f ms mean, %.2f ms worst; write %.2f ms mean, %.2f ms worst",
		disks, f.MeanReadAwaitMs, f.WorstReadAwaitMs, f.MeanWriteAwaitMs, f.WorstWriteAwaitMs)
	if f.BackupMaxSeconds > 0 {
		fmt.Fprintf(r.opts.Log, "; backups %.1f s mean, %.1f s max, %.1f s in all", f.BackupMeanSeconds, f.BackupMaxSeconds, f.BackupTotalSeconds)
	}
	fmt.Fprintln(r.opts.Log)
}

// judge gives each OLTP instance's run its bottleneck verdict from the shared
// figures (the host's CPUs, the disk) and its own sessions' wait profile. The driver
// is not judged: every instance's users run in this one process, whose CPU is no one
// instance's.
func (c *ConsolidationRun) judge() {
	if c.System == nil {
		return
	}
	for i := range c.Instances {
		in := &c.Instances[i]
		if in.Run == nil {
			continue
		}
		sum := c.System.Summary
		sum.Waits = sum.Waits.ForServer(in.Name)
		in.Run.Bottleneck = bottleneck.Judge(&sum, bottleneck.Driver{Users: in.Run.Config.Users})
	}
}
