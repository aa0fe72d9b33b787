package study

import (
	"context"
	"fmt"
	"io"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/load"
	"github.com/storbench/storbench/internal/remote"
)

// variant is the instance configuration a step needs.
type variant struct {
	memory int64
	cpus   string
	io     instance.IOLimit
}

// variantOf is the target's own configuration with the step's memory, CPU set or I/O
// limit.
func variantOf(t *target, step Step) variant {
	v := variant{memory: t.spec.Memory.Bytes, cpus: t.spec.CPUs, io: t.spec.IOLimit.IOLimit}
	if step.Memory > 0 {
		v.memory = step.Memory
	}
	if step.CPUs != "" {
		v.cpus = step.CPUs
	}
	if step.IOLimit != nil {
		v.io = *step.IOLimit
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
	// limits are the memory, CPU and I/O limits the instance runs with, as applied,
	// and ioThrottle how its I/O limit was put in force (nil: none asked or applied).
	limits     []string
	ioThrottle *instance.IOThrottle
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
func (t *target) prepare(ctx context.Context) error { return t.spec.kindOf().prepare(ctx, t) }

// build loads the study's schema.
func (t *target) build(ctx context.Context, db engine.Database) error {
	storage := engine.WatchStorage(ctx, db, t.dsn)
	sum, err := load.Build(ctx, db, load.Options{Warehouses: t.workload.Warehouses, Workers: load.DefaultWorkers(),
		Seed: t.workload.Seed, Version: t.version, Storage: storage, Schema: t.workload.Schema})
	for _, n := range sum.Notes {
		fmt.Fprintf(t.log, "target %s: build: %s\n", t.spec.Name, n)
	}
	return storage.Explain(db, err, "then run the study again")
}

// ready puts the instance in the variant a step needs, running, and restores the base
// image unless the data is still pristine. An external database is used as it is.
func (t *target) ready(ctx context.Context, v variant, restore bool) error {
	t.restoreSeconds = 0
	return t.spec.kindOf().ready(ctx, t, v, restore)
}

// release stops the instance, or destroys it when the study is finished.
func (t *target) release(ctx context.Context, finished bool) error {
	return t.spec.kindOf().release(ctx, t, finished)
}

// describe records the target's storage and database.
func (t *target) describe(ctx context.Context) TargetEnv {
	return t.spec.kindOf().environment(ctx, t, TargetEnv{Name: t.spec.Name, Kind: t.spec.Kind})
}
