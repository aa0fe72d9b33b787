package study

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/blockdev"
	"github.com/storbench/storbench/internal/bytesize"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/load"
	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/tpcc"
)

// managedTarget is a target whose server storbench creates on the target's path:
// it can resize, pin, replicate, back up and restore it, and fio-test its
// directories.
type managedTarget struct{}

// managedKeys are the keys only a managed target reads.
// (io_limit too, refused apart on an external target with its own reason.)
var managedKeys = []string{"engine", "path", "wal_path", "memory", "cpus", "replica", "bindir"}

func (managedTarget) manages() bool { return true }

// managedEngines are the engines storbench can create a server of (those whose
// instance package registered one), the default first.
func managedEngines() []string {
	others := slices.DeleteFunc(instance.Engines(), func(name string) bool { return name == DefaultEngine })
	return append([]string{DefaultEngine}, others...)
}

func (managedTarget) check(c *checker, i int, t *Target) {
	c.foreignKeys(i, externalKeys, "%s is for external targets", "a managed target's server is created on its path; use kind: external to connect to a server")
	c.managed(i, t)
}

func (c *checker) managed(i int, t *Target) {
	p := func(key string) string { return fmt.Sprintf("targets[%d].%s", i, key) }
	if !c.doc.Has(p("engine")) {
		t.Engine = DefaultEngine
	} else if engines := managedEngines(); !slices.Contains(engines, t.Engine) {
		c.errf(p("engine"), "engine %q cannot be managed", "storbench creates %s servers; for another engine use kind: external with a dsn", t.Engine, strings.Join(engines, " and "))
	}

	// As instance create checks its --path; the directories against each other and
	// the machine: CheckMachine.
	ownPath := func(key, dir string) {
		setting := key[strings.LastIndexByte(key, '.')+1:] // replica.path is a path
		if err := instance.CheckPath(setting, dir); err != nil {
			c.refuse(p(key), err, place{setting, p(key)})
		}
	}
	if t.Path == "" {
		c.errf(p("path"), "managed target %s has no path", "add path: the directory on the storage under test, e.g. /mnt/nvme/storbench", t.Name)
	} else {
		ownPath("path", t.Path)
	}
	if t.WALPath != "" {
		ownPath("wal_path", t.WALPath)
	}
	if t.Replica != nil {
		if t.Replica.Path == "" {
			c.errf(p("replica"), "the replica of %s has no path", "add path: under replica, the standby's directory on its own storage", t.Name)
		} else {
			ownPath("replica.path", t.Replica.Path)
		}
	}
	if c.doc.Has(p("memory")) {
		c.memory(p("memory"), []string{t.Engine}, t.Memory.Bytes)
	}
	if c.doc.Has(p("cpus")) {
		c.cpus(p("cpus"), t.CPUs)
	}
	// As a path is checked; whether this machine has the build, CheckMachine says.
	if c.doc.Has(p("bindir")) {
		ownPath("bindir", t.BinDir)
	}
}

// managedEngineNames are the engines of the managed targets an experiment runs on:
// each must run in the memory the experiment gives.
func managedEngineNames(s *Study, e *Experiment) []string {
	var out []string
	for _, t := range experimentTargets(s, e) {
		if t.manages() && !slices.Contains(out, t.Engine) {
			out = append(out, t.Engine)
		}
	}
	return out
}

func (managedTarget) engine(t *Target) (string, bool) { return t.Engine, true }

// restore is the restore of the base image that precedes each step.
func (managedTarget) restore(s *Study) time.Duration {
	if s.Workload.Restore == "never" {
		return 0
	}
	return restoreEstimate(s.Workload.Warehouses)
}

func (managedTarget) buildNote() string { return " + base image" }

func (managedTarget) describe(t Target) string {
	parts := []string{"managed", t.Engine, t.Path}
	if t.WALPath != "" {
		parts = append(parts, "wal "+t.WALPath)
	}
	if t.Memory.Bytes > 0 {
		parts = append(parts, "memory "+bytesize.Format(t.Memory.Bytes))
	}
	if t.CPUs != "" {
		parts = append(parts, "cpus "+t.CPUs)
	}
	if !t.IOLimit.Zero() {
		parts = append(parts, "io "+t.IOLimit.String())
	}
	if t.Replica != nil {
		mode := "async"
		if t.Replica.Sync {
			mode = "sync"
		}
		parts = append(parts, fmt.Sprintf("replica %s (%s)", t.Replica.Path, mode))
	}
	return strings.Join(parts, "  ")
}

// prepare creates the instance (or takes over the one an interrupted run left) and
// starts it; the schema is built once and kept as a base image.
func (managedTarget) prepare(ctx context.Context, t *target) error {
	t.name = instanceName(t.spec.Name, t.store.Dir)
	if err := t.resume(ctx); err != nil {
		return err
	}
	if t.dsn == "" {
		if err := t.create(ctx, variantOf(t, Step{})); err != nil {
			return err
		}
		st, err := t.reg.Start(ctx, t.name)
		if err != nil {
			return err
		}
		t.started(st)
	}
	return t.ensureBase(ctx)
}

func (managedTarget) ready(ctx context.Context, t *target, v variant, restore bool) error {
	if v != t.current {
		// A new variant is a new instance on the same storage, given the base image.
		fmt.Fprintf(t.log, "target %s: instance with memory %d MiB, cpus %q, io limit %q\n", t.spec.Name, v.memory>>20, v.cpus, v.io)
		if err := t.reg.Destroy(ctx, t.name); err != nil {
			return err
		}
		if err := t.create(ctx, v); err != nil {
			return err
		}
		t.pristine = false
	}
	st, err := t.reg.Start(ctx, t.name)
	if err != nil {
		return err
	}
	t.started(st)
	// A new instance holds nothing yet: it gets the base image even with restore: never.
	if (restore || t.empty) && !t.pristine {
		start := time.Now()
		if _, err := t.reg.Restore(ctx, t.name, t.store.BaseDir(t.name), 0); err != nil {
			return fmt.Errorf("restore the base image: %w", err)
		}
		t.restoreSeconds = time.Since(start).Seconds()
	}
	t.pristine, t.empty = false, false
	return nil
}

func (managedTarget) release(ctx context.Context, t *target, finished bool) error {
	err := t.dropReplica(ctx)
	if finished {
		return errors.Join(err, t.reg.Destroy(ctx, t.name))
	}
	_, serr := t.reg.Stop(ctx, t.name)
	return errors.Join(err, serr)
}

func (managedTarget) environment(ctx context.Context, t *target, env TargetEnv) TargetEnv {
	env.Placements, env.Models = targetPlacements(t.spec)
	if st, err := t.reg.Load(t.name); err == nil {
		env.ServerVersion, env.Settings, env.Limits = st.Version, st.Settings, st.Limits
	}
	return env
}

// limits notes the limits the instance runs with, and fails the step when one could
// not be applied, unless allowed: the step would then measure another machine than
// the study file says.
func (managedTarget) limits(t *target, allow bool, res *StepResult) error {
	res.Notes = append(res.Notes, "instance limits: "+strings.Join(t.limits, "; "))
	res.IOThrottle, res.Memory, res.CPUs = t.ioThrottle, t.current.memory, t.current.cpus
	missing := t.unapplied()
	if len(missing) == 0 {
		return nil
	}
	if !allow {
		return fmt.Errorf("%w: target %s: %s (run as root on a machine with cgroup controllers, or set allow_unapplied_limits: true in the study to run without them)",
			input.ErrInvalid, t.spec.Name, strings.Join(missing, "; "))
	}
	res.Notes = append(res.Notes, "LIMITS NOT APPLIED, allowed by allow_unapplied_limits: "+strings.Join(missing, "; "))
	return nil
}

// sample samples the target's directories.
func (managedTarget) sample(_ context.Context, t *target, cfg *metrics.Config) {
	cfg.Targets = append(cfg.Targets, metrics.Target{Path: t.spec.Path, Role: blockdev.RoleData})
	if t.spec.WALPath != "" {
		cfg.Targets = append(cfg.Targets, metrics.Target{Path: t.spec.WALPath, Role: blockdev.RoleWAL})
	}
	// A stopped instance (a restore in progress) has no processes to sample.
	if srv, err := t.reg.Server(t.name, ""); err == nil {
		cfg.Servers = append(cfg.Servers, srv)
	}
	if g, err := t.reg.CPUGroup(t.name, ""); err == nil {
		cfg.Cgroups = append(cfg.Cgroups, g)
	}
}

// instanceName makes a target's instance name unique to its results store: the
// instance's cgroup is named after it, and must not be another study's or the user's.
func instanceName(target, store string) string {
	abs, _ := filepath.Abs(store)
	return fmt.Sprintf("%s-%08x", target, crc32.ChecksumIEEE([]byte(abs)))
}

// resume takes over the instance an interrupted run left, if it is what the study
// file asks for and starts; otherwise it is destroyed (it is the study's own, maybe
// left incomplete by a kill) and a new one is made. A standby left behind is removed.
func (t *target) resume(ctx context.Context) error {
	if err := t.reg.DestroyLeft(ctx, t.name+"-replica"); err != nil {
		return err
	}
	if !t.reg.Recorded(t.name) {
		return nil
	}
	st, err := t.reg.Load(t.name)
	same := err == nil && st.Path == t.spec.Path && st.WALPath == t.spec.WALPath && st.Engine == t.spec.Engine &&
		(t.spec.BinDir == "" || st.BinDir == t.spec.BinDir) && st.MaxConnections >= driver.ServerConnections(t.maxUsers)
	if same {
		// A restore cut short leaves a data directory the server will not start on.
		if st, err := t.reg.Start(ctx, t.name); err == nil {
			fmt.Fprintf(t.log, "target %s: instance from an earlier run started\n", t.spec.Name)
			t.current = variant{memory: st.MemoryBytes, cpus: st.CPUs, io: st.IOLimit}
			t.started(st)
			return nil
		}
	}
	fmt.Fprintf(t.log, "target %s: the instance of an earlier run does not fit or start: making a new one\n", t.spec.Name)
	return t.reg.Destroy(ctx, t.name)
}

// create makes the instance for a variant (the server's settings follow its memory).
func (t *target) create(ctx context.Context, v variant) error {
	spec := instance.Spec{Name: t.name, Engine: t.spec.Engine, BinDir: t.spec.BinDir, Path: t.spec.Path, WALPath: t.spec.WALPath,
		MemoryBytes: v.memory, CPUs: v.cpus, IOLimit: v.io, MaxConnections: driver.ServerConnections(t.maxUsers)}
	_, warnings, err := t.reg.Create(ctx, spec)
	if err != nil {
		return err
	}
	if err := t.store.linkRegistry(); err != nil {
		fmt.Fprintf(t.log, "target %s: storbench instance list will not show the study's instances: %v\n", t.spec.Name, err)
	}
	for _, w := range warnings {
		fmt.Fprintf(t.log, "target %s: warning: %s\n", t.spec.Name, w)
	}
	t.current, t.empty = v, true
	return nil
}

// started notes what a start of the instance put in force: its limits are applied by
// each start, not by create.
func (t *target) started(st *instance.State) {
	t.dsn, t.limits, t.ioThrottle = st.DSN(), st.Limits, st.IOThrottle
}

// baseRecordName is the base image's record, beside it in the store.
func (t *target) baseRecordName() string { return filepath.Join("base", t.name+".json") }

// ensureBase builds the schema into the instance and keeps a physical backup of it as
// the base image, unless one of the same workload exists.
func (t *target) ensureBase(ctx context.Context) error {
	want := baseRecord{Warehouses: t.workload.Warehouses, Seed: t.workload.Seed, Schema: t.workload.Schema}
	if b, err := os.ReadFile(t.store.path(t.baseRecordName())); err == nil {
		have := baseRecord{Schema: load.DefaultSchema}
		if json.Unmarshal(b, &have) == nil && have == want {
			return nil
		}
	}
	fmt.Fprintf(t.log, "target %s: building %s\n", t.spec.Name, tpcc.Count(want.Warehouses, "warehouse"))
	db, err := engine.OpenOrCreate(ctx, t.dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	// What a build cut short by an interruption left, if anything. The instance is
	// the study's own, whole: its database holds nothing of the user's, and an older
	// storbench's interrupted build (MariaDB's, SQLite's: storbench_build came last)
	// has no record to go by; so the TPC-C tables and routines go, recorded or not.
	inv, err := db.Inventory(ctx)
	if err != nil {
		return err
	}
	if _, err := engine.Drop(ctx, db, t.dsn, inv.Database); err != nil {
		return err
	}
	if err := t.build(ctx, db); err != nil {
		return err
	}
	base := t.store.BaseDir(t.name)
	if err := os.RemoveAll(base); err != nil {
		return err
	}
	how := instance.BackupMethod{Jobs: 1}
	if instance.CheckTools(t.spec.Engine, t.spec.BinDir, how) != nil {
		// A build without the engine's backup tool (some bundles have only the
		// server's programs): a copy of the stopped server's files does.
		how.Cold = true
		fmt.Fprintf(t.log, "target %s: its server build has no backup tool: the base image is a copy of the stopped server's files\n", t.spec.Name)
	}
	tr, err := t.reg.Backup(ctx, t.name, base, how)
	if err != nil {
		return fmt.Errorf("base image: %w", err)
	}
	fmt.Fprintf(t.log, "target %s: base image %.0f MB in %.1f s\n", t.spec.Name, float64(tr.Bytes)/1e6, tr.Seconds)
	t.pristine, t.empty = true, false
	b, _ := json.Marshal(want)
	return t.store.writeFile(t.baseRecordName(), b)
}

// unapplied says which of a variant's limits the instance runs without (no cgroups,
// a CPU the machine does not have): a memory or CPU sweep without them measures
// nothing it claims to.
func (t *target) unapplied() []string { return instance.Unapplied(t.limits) }

// startReplica makes a streaming standby of the instance on the replica's storage;
// with sync, each commit waits for it. (resume removed any standby a killed run left.)
func (t *target) startReplica(ctx context.Context) error {
	t.replica = t.name + "-replica"
	spec := instance.Spec{Name: t.replica, Engine: t.spec.Engine, BinDir: t.spec.BinDir, Path: t.spec.Replica.Path, MaxConnections: driver.ServerConnections(t.maxUsers),
		ReplicaOf: t.name, Sync: t.spec.Replica.Sync}
	if _, _, err := t.reg.Create(ctx, spec); err != nil {
		return fmt.Errorf("replica: %w", err)
	}
	_, err := t.reg.Start(ctx, t.replica)
	return err
}

// dropReplica removes the standby (the primary's next restore would leave it behind).
func (t *target) dropReplica(ctx context.Context) error {
	if t.replica == "" {
		return nil
	}
	err := t.reg.Destroy(ctx, t.replica)
	t.replica = ""
	return err
}
