package study

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/dburl"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/load"
	"github.com/storbench/storbench/internal/remote"
	"github.com/storbench/storbench/internal/tpcc"
)

// variant is the instance configuration a step needs.
type variant struct {
	memory int64
	cpus   string
}

// variantOf is the target's own configuration with the step's memory or CPU set.
func variantOf(t *target, step Step) variant {
	v := variant{memory: t.spec.Memory.Bytes, cpus: t.spec.CPUs}
	if step.Memory > 0 {
		v.memory = step.Memory
	}
	if step.CPUs != "" {
		v.cpus = step.CPUs
	}
	return v
}

// target is one study target while the study runs.
type target struct {
	spec     Target
	reg      instance.Registry
	store    *Store
	workload Workload
	version  string
	log      io.Writer
	maxUsers int

	name    string // the managed instance's name
	dsn     string
	current variant
	// limits are the memory and CPU limits the instance runs with, as applied.
	limits []string
	// empty: the instance was just created and holds no data yet.
	empty bool
	// pristine: the database holds the base image's data and no step has run on it.
	pristine bool
	replica  string
	// restoreSeconds is how long the last ready spent restoring (0: none).
	restoreSeconds float64
	// ssh is the connection to an external target's host, once one was needed;
	// devices are the host's disks its metrics sample (nil: every whole disk).
	engine      string // the external server's engine (postgres), from its DSN
	ssh         *remote.Host
	devices     []string
	deviceRoles map[string][]string // data, wal: of the disks found over SSH
}

// baseRecord says what a base image holds, so a changed workload builds again.
type baseRecord struct {
	Warehouses int    `json:"warehouses"`
	Seed       uint64 `json:"seed"`
	Schema     string `json:"schema"` // absent from records written before schemas had names: the spec's
}

// prepare makes the target's database exist and hold the study's schema: a managed
// instance created (or found from an interrupted run) and started, the schema built
// once and kept as a base image; an external database built unless it already holds
// the same schema.
func (t *target) prepare(ctx context.Context) error {
	if t.spec.Kind == "external" {
		return t.prepareExternal(ctx)
	}
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
		t.dsn = st.DSN()
	}
	return t.ensureBase(ctx)
}

// instanceName makes a target's instance name unique to its results store: the
// instance's cgroup is named after it, and must not be another study's or the user's.
func instanceName(target, store string) string {
	abs, _ := filepath.Abs(store)
	return fmt.Sprintf("%s-%08x", target, crc32.ChecksumIEEE([]byte(abs)))
}

// resume takes over the instance an interrupted run left, if it is what the study
// file asks for and starts; otherwise it is destroyed (it is the study's own) and a
// new one is made. A standby left behind is removed.
func (t *target) resume(ctx context.Context) error {
	if _, err := t.reg.Load(t.name + "-replica"); err == nil {
		if err := t.reg.Destroy(ctx, t.name+"-replica"); err != nil {
			return err
		}
	}
	st, err := t.reg.Load(t.name)
	if err != nil {
		return nil
	}
	same := st.Path == t.spec.Path && st.WALPath == t.spec.WALPath && st.Engine == t.spec.Engine &&
		st.MaxConnections >= driver.ServerConnections(t.maxUsers)
	if same {
		// A restore cut short leaves a data directory the server will not start on.
		if st, err := t.reg.Start(ctx, t.name); err == nil {
			fmt.Fprintf(t.log, "target %s: instance from an earlier run started\n", t.spec.Name)
			t.current, t.limits, t.dsn = variant{memory: st.MemoryBytes, cpus: st.CPUs}, st.Limits, st.DSN()
			return nil
		}
	}
	fmt.Fprintf(t.log, "target %s: the instance of an earlier run does not fit or start: making a new one\n", t.spec.Name)
	return t.reg.Destroy(ctx, t.name)
}

// create makes the instance for a variant (the server's settings follow its memory).
func (t *target) create(ctx context.Context, v variant) error {
	spec := instance.Spec{Name: t.name, Engine: t.spec.Engine, Path: t.spec.Path, WALPath: t.spec.WALPath,
		MemoryBytes: v.memory, CPUs: v.cpus, MaxConnections: driver.ServerConnections(t.maxUsers)}
	st, warnings, err := t.reg.Create(ctx, spec)
	if err != nil {
		return err
	}
	if err := t.store.linkRegistry(); err != nil {
		fmt.Fprintf(t.log, "target %s: storbench instance list will not show the study's instances: %v\n", t.spec.Name, err)
	}
	for _, w := range warnings {
		fmt.Fprintf(t.log, "target %s: warning: %s\n", t.spec.Name, w)
	}
	t.current, t.limits, t.empty = v, st.Limits, true
	return nil
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
	// Only storbench's tables: what a build cut short by an interruption left.
	if _, err := db.Drop(ctx); err != nil {
		return err
	}
	if err := t.build(ctx, db); err != nil {
		return err
	}
	base := t.store.BaseDir(t.name)
	if err := os.RemoveAll(base); err != nil {
		return err
	}
	tr, err := t.reg.Backup(ctx, t.name, base, instance.BackupMethod{Jobs: 1})
	if err != nil {
		return fmt.Errorf("base image: %w", err)
	}
	fmt.Fprintf(t.log, "target %s: base image %.0f MB in %.1f s\n", t.spec.Name, float64(tr.Bytes)/1e6, tr.Seconds)
	t.pristine, t.empty = true, false
	b, _ := json.Marshal(want)
	return t.store.writeFile(t.baseRecordName(), b)
}

// build loads the study's schema.
func (t *target) build(ctx context.Context, db engine.Database) error {
	storage := engine.WatchStorage(ctx, db, t.dsn)
	sum, err := load.Build(ctx, db, load.Options{Warehouses: t.workload.Warehouses, Workers: runtime.NumCPU(),
		Seed: t.workload.Seed, Version: t.version, Storage: storage, Schema: t.workload.Schema})
	for _, n := range sum.Notes {
		fmt.Fprintf(t.log, "target %s: build: %s\n", t.spec.Name, n)
	}
	return storage.Explain(db, err, "then run the study again")
}

// prepareExternal connects with the password from the environment and builds the
// schema unless the database holds the study's already.
func (t *target) prepareExternal(ctx context.Context) error {
	u, err := url.Parse(t.spec.DSN)
	if err != nil {
		return fmt.Errorf("%w: dsn: %v", input.ErrInvalid, err)
	}
	if t.spec.PasswordEnv != "" && u.User != nil {
		u.User = url.UserPassword(u.User.Username(), os.Getenv(t.spec.PasswordEnv))
	}
	t.dsn = u.String()
	db, err := engine.OpenOrCreate(ctx, t.dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	t.engine = db.Engine()
	if err := t.ensureSchema(ctx, db); err != nil {
		return err
	}
	return t.findDevices(ctx, db)
}

// ensureSchema builds an external database that holds no tables, and accepts one
// that holds the study's schema.
func (t *target) ensureSchema(ctx context.Context, db engine.Database) error {
	tables, err := db.ExistingTables(ctx)
	if err != nil {
		return err
	}
	if len(tables) > 0 {
		info, err := db.BuildInfo(ctx)
		if err == nil && info.Schema != t.workload.Schema {
			return fmt.Errorf("%w: %s holds a TPC-C schema built as %s, the study wants %s: storbench drop it first, or use another database",
				input.ErrInvalid, dburl.Redact(t.spec.DSN), info.Schema, t.workload.Schema)
		}
		if (err == nil || errors.Is(err, engine.ErrNoBuildInfo)) && info.Warehouses == t.workload.Warehouses {
			return nil
		}
		return fmt.Errorf("%w: %s holds a TPC-C schema of %d warehouses, the study wants %d: storbench drop it first, or use another database",
			input.ErrInvalid, dburl.Redact(t.spec.DSN), info.Warehouses, t.workload.Warehouses)
	}
	fmt.Fprintf(t.log, "target %s: building %s\n", t.spec.Name, tpcc.Count(t.workload.Warehouses, "warehouse"))
	return t.build(ctx, db)
}

// findDevices chooses the host's disks an external target's metrics sample: those
// the study names, or the disks holding the server's data and WAL directories,
// found over SSH (node_exporter says what each disk did, not what is on it).
// Without either, every whole disk of the host is sampled.
func (t *target) findDevices(ctx context.Context, db engine.Database) error {
	if t.spec.MetricsHost == "" {
		return nil
	}
	if len(t.spec.MetricsDevices) > 0 {
		t.devices = t.spec.MetricsDevices
		return nil
	}
	if t.spec.SSH == "" {
		return nil
	}
	st, err := db.Storage(ctx)
	if err != nil || st.Data == "" {
		return fmt.Errorf("%w: target %s: the server does not say where its data is (%v): name the disks in metrics_devices", input.ErrInvalid, t.spec.Name, err)
	}
	h, err := t.sshHost(ctx)
	if err != nil {
		return err
	}
	disk, err := h.DataDevice(ctx, st.Data)
	if err != nil {
		return fmt.Errorf("target %s: the disk of its data directory %s on its host: %w (or name the disks in metrics_devices)", t.spec.Name, st.Data, err)
	}
	t.devices, t.deviceRoles = []string{disk}, map[string][]string{disk: {"data"}}
	// A WAL directory of its own (elsewhere than DATA/pg_wal, which the SSH user
	// often may not read: the data directory is the server's, mode 0700) may be on
	// another disk; one that cannot be found leaves the data disk sampled alone.
	if wal := st.WAL; wal != "" && !strings.HasPrefix(wal, st.Data+string(filepath.Separator)) {
		if disk, err := h.DataDevice(ctx, wal); err != nil {
			fmt.Fprintf(t.log, "target %s: the disk of its WAL directory %s not found (%v): sampling the data disk only\n", t.spec.Name, wal, err)
		} else {
			if !slices.Contains(t.devices, disk) {
				t.devices = append(t.devices, disk)
			}
			t.deviceRoles[disk] = append(t.deviceRoles[disk], "wal")
		}
	}
	fmt.Fprintf(t.log, "target %s: sampling disk %s of its host (holding %s)\n", t.spec.Name, strings.Join(t.devices, ", "), st.Data)
	return nil
}

// ready puts the instance in the variant a step needs, running, and restores the base
// image unless the data is still pristine. An external database is used as it is.
func (t *target) ready(ctx context.Context, v variant, restore bool) error {
	t.restoreSeconds = 0
	if t.spec.Kind == "external" {
		return nil
	}
	if v != t.current {
		// A new variant is a new instance on the same storage, given the base image.
		fmt.Fprintf(t.log, "target %s: instance with memory %d MiB, cpus %q\n", t.spec.Name, v.memory>>20, v.cpus)
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
	t.dsn = st.DSN()
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

// unapplied says which of a variant's limits the instance runs without (no cgroups,
// a CPU the machine does not have): a memory or CPU sweep without them measures
// nothing it claims to.
func (t *target) unapplied() []string { return instance.Unapplied(t.limits) }

// startReplica makes a streaming standby of the instance on the replica's storage;
// with sync, each commit waits for it. (resume removed any standby a killed run left.)
func (t *target) startReplica(ctx context.Context) error {
	t.replica = t.name + "-replica"
	spec := instance.Spec{Name: t.replica, Engine: t.spec.Engine, Path: t.spec.Replica.Path, MaxConnections: driver.ServerConnections(t.maxUsers),
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

// release stops the instance, or destroys it when the study is finished.
func (t *target) release(ctx context.Context, finished bool) error {
	if t.spec.Kind == "external" {
		if t.ssh != nil {
			t.ssh.Close()
			t.ssh = nil
		}
		return nil
	}
	err := t.dropReplica(ctx)
	if finished {
		return errors.Join(err, t.reg.Destroy(ctx, t.name))
	}
	_, serr := t.reg.Stop(ctx, t.name)
	return errors.Join(err, serr)
}

// describe records the target's storage and database.
func (t *target) describe(ctx context.Context) TargetEnv {
	env := TargetEnv{Name: t.spec.Name, Kind: t.spec.Kind}
	if t.spec.Kind != "external" {
		env.Placements, env.Models = targetPlacements(t.spec)
		if st, err := t.reg.Load(t.name); err == nil {
			env.ServerVersion, env.Settings, env.Limits = st.Version, st.Settings, st.Limits
		}
		return env
	}
	env.Host, env.HostDevices = t.spec.Host, t.devices
	if t.spec.MetricsHost != "" {
		env.HostMetrics = dburl.Redact(t.spec.MetricsHost)
	}
	if db, err := engine.Open(ctx, t.dsn); err == nil {
		env.ServerVersion, _ = db.ServerVersion(ctx)
		db.Close()
	}
	return env
}
