// Package load builds a TPC-C database: schema, parallel generation and loading of
// the initial data (tpcc.Generator into an engine.Loader), then keys, procedures and
// statistics. It is engine-free: the engine only creates tables and ingests rows.
package load

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/fsplace"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/tpcc"
)

// Options configure a build.
type Options struct {
	Warehouses int
	Workers    int // load connections in parallel
	// Seed: the same seed gives the same rows and C-Load. 0 draws one at random, so
	// that databases built without one do not all share a C-Load (2.1.6.1); the seed
	// used is in the build information either way.
	Seed    uint64
	Version string // storbench version recorded with the build
	// Progress, when set, is called about once a second and at the end of each phase.
	Progress func(Progress)
	// Storage is where the database keeps its files (engine.WatchStorage): a build
	// its free space cannot hold is refused before any table is created. Unset (a
	// server on another host), only MaxWarehouses bounds the build.
	Storage engine.StorageWatch
	// Schema names the schema variant (engine.ParseSchema): the spec's, or HammerDB's
	// to compare with its published figures. "" is DefaultSchema.
	Schema string
}

// Progress is a build's state.
type Progress struct {
	Phase          string // "load", "index", "done"
	WarehousesDone int
	Warehouses     int
	Rows           int64
	Elapsed        time.Duration
	RowsPerSecond  float64
	ETA            time.Duration // of the load phase, from the rows still to come
}

// Summary is what a finished build reports.
type Summary struct {
	Warehouses    int
	Seed          uint64 // the one used: Options.Seed or the one drawn
	Schema        engine.Schema
	CLoad         int // the NURand C of c_last at load (2.1.6.1)
	Rows          int64
	LoadTime      time.Duration // generation + COPY
	IndexTime     time.Duration // keys, indexes, procedures, VACUUM, CHECKPOINT (as Schema.Settle says)
	Total         time.Duration
	RowsPerSecond float64 // over the load phase
	// Notes are the finishing steps the engine skipped (engine.Builder.FinishBuild).
	Notes []string
}

// Bounds of a build, for what the storage cannot tell.
const (
	// MaxWarehouses: about 100 TB in any engine (~100 MB a warehouse), beyond the
	// storage a benchmark runs on and weeks of loading; more is a typo. It bounds a
	// server on another host, whose free space storbench cannot read.
	MaxWarehouses = 1000000
	// MaxWorkers: each is a load connection and a generator; past a few per CPU they
	// only wait on each other and on the server's connection limit.
	MaxWorkers = 1024
)

// CheckWarehouses checks a warehouse count. Errors read "problem (fix)".
func CheckWarehouses(n int) error {
	switch {
	case n < 1:
		return input.Errorf("warehouses", "{warehouses} %d is too few (the schema needs at least 1 warehouse)", n)
	case n > MaxWarehouses:
		return input.Errorf("warehouses", "{warehouses} %d is more than %d (about 100 TB: give the schema size in warehouses of about 100 MB each)", n, MaxWarehouses)
	}
	return nil
}

// DefaultSchema is the schema of a build that names none: the spec's.
const DefaultSchema = engine.SpecSchema

// CheckSchema checks the name of a build's schema.
func CheckSchema(name string) error {
	_, err := engine.ParseSchema(name)
	return err
}

// AddFlags declares the flags of a build's settings, with their defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	input.DecimalVar(fs, &o.Warehouses, "warehouses", 0, "number of warehouses (schema size; required)")
	input.DecimalVar(fs, &o.Workers, "workers", DefaultWorkers(), "load connections in parallel")
	input.DecimalVar(fs, &o.Seed, "seed", 0, "random seed of the generated data (same seed, same rows and C-Load; 0: drawn at random; recorded in the build)")
	fs.StringVar(&o.Schema, "schema", DefaultSchema, "schema and finishing: spec (stock keyed by warehouse, then item; PostgreSQL: VACUUM FREEZE and CHECKPOINT after the load) or hammerdb (HammerDB 4.12's: stock keyed by item, then warehouse; ANALYZE only); recorded in the build")
}

// schemaName is the schema the options name.
func (o Options) schemaName() string {
	if o.Schema == "" {
		return DefaultSchema
	}
	return o.Schema
}

// Validate checks the options before anything connects.
func (o Options) Validate() error {
	if err := cmp.Or(CheckSchema(o.schemaName()), CheckWarehouses(o.Warehouses)); err != nil {
		return err
	}
	if o.Workers < 1 || o.Workers > MaxWorkers {
		return input.Errorf("workers", "{workers} %d is out of range (give 1 to %d load connections; the default is one per CPU)", o.Workers, MaxWorkers)
	}
	return nil
}

// CheckSpace refuses a build its storage cannot hold: copies databases (a
// consolidation's, each with its own log) of warehouses each, taking what f says,
// as measured at a build's peak (engine.Footprint): the built files on the filesystem
// of dataDir, the log the build writes meanwhile on logDir's, which is dataDir's when
// logDir is "" or on it. A directory still to be made counts as its nearest existing
// parent. A refused build would have filled its storage. Errors read "problem (fix)".
func CheckSpace(f engine.Footprint, copies, warehouses int, dataDir, logDir string) error {
	build := "a build of " + tpcc.Count(warehouses, "warehouse")
	if copies > 1 {
		build = fmt.Sprintf("a build of %d copies of %s", copies, tpcc.Count(warehouses, "warehouse"))
	}
	data := func(w int) int64 { return int64(copies) * f.Data(w) }
	log := func(w int) int64 { return int64(copies) * f.Log(w) }
	if logDir == "" {
		logDir = dataDir
	}
	// Unknown counts as the same filesystem, the stricter check.
	if same, err := fsplace.SameFilesystem(dataDir, logDir); same || err != nil {
		both := func(w int) int64 { return data(w) + log(w) }
		return fits(warehouses, dataDir, both, build,
			fmt.Sprintf("%s of data, %s of log it writes", size(data(warehouses)), size(log(warehouses))))
	}
	if err := fits(warehouses, dataDir, data, build, "its data"); err != nil {
		return err
	}
	return fits(warehouses, logDir, log, build, "the log it writes")
}

// fits refuses a build of warehouses whose need is beyond what the filesystem of dir
// has free; of says what it needs there.
func fits(warehouses int, dir string, need func(int) int64, build, of string) error {
	free, known := freeSpace(dir)
	if !known || need(warehouses) <= free {
		return nil
	}
	// The most warehouses that fit: need grows with them.
	fit := sort.Search(warehouses, func(w int) bool { return need(w+1) > free })
	fix := "free space there or use a larger target"
	if fit > 0 {
		fix = fmt.Sprintf("give at most %s, or free space there", tpcc.Count(fit, "warehouse"))
	}
	return fmt.Errorf("%s needs about %s on %s (%s), which has %s free (%s)", build, size(need(warehouses)), dir, of, size(free), fix)
}

// size is a byte count for the user, to the precision a space check has.
func size(b int64) string {
	if b >= 1e9 {
		return fmt.Sprintf("%.1f GB", float64(b)/1e9)
	}
	return fmt.Sprintf("%.0f MB", float64(b)/1e6)
}

// freeSpace is what the filesystem of dir, or of its nearest existing parent, has
// free for an unprivileged writer.
func freeSpace(dir string) (int64, bool) {
	dir, err := fsplace.Existing(dir)
	if err != nil {
		return 0, false
	}
	free, err := fsplace.FreeBytes(dir)
	return free, err == nil
}

// Build creates and loads the schema. It refuses to touch a database that already
// holds any of storbench's tables: it never drops anything itself.
func Build(ctx context.Context, db engine.Database, opts Options) (Summary, error) {
	if err := opts.Validate(); err != nil {
		return Summary{}, err
	}
	tables, err := db.ExistingTables(ctx)
	if err != nil {
		return Summary{}, fmt.Errorf("inspect database: %w", err)
	}
	if len(tables) > 0 {
		return Summary{}, engine.Occupied(ctx, db)
	}
	if dir, known := opts.Storage.DataDir(); known {
		f, err := engine.BuildFootprint(ctx, db)
		if err != nil {
			return Summary{}, fmt.Errorf("read the server's settings: %w", err)
		}
		logDir, _ := opts.Storage.LogDir()
		if err := CheckSpace(f, 1, opts.Warehouses, dir, logDir); err != nil {
			return Summary{}, fmt.Errorf("%w: %w", input.ErrInvalid, err)
		}
	}
	for opts.Seed == 0 {
		opts.Seed = rand.Uint64() // the runtime seeds it from the OS's entropy
	}
	schema, _ := engine.ParseSchema(opts.schemaName()) // checked by Validate
	start := time.Now()
	if err := db.CreateTables(ctx, schema); err != nil {
		return Summary{}, fmt.Errorf("create tables: %w", err)
	}
	gen := tpcc.NewGenerator(opts.Seed, start)
	l := &loadRun{opts: opts, gen: gen, start: start}
	stopTicker := l.tick()
	err = l.run(ctx, db)
	stopTicker()
	if err != nil {
		return Summary{}, err
	}
	loaded := time.Now()
	sum := Summary{Warehouses: opts.Warehouses, Seed: opts.Seed, Schema: schema, CLoad: gen.Constants.CLast, Rows: l.rows.Load(),
		LoadTime: loaded.Sub(start)}
	sum.RowsPerSecond = float64(sum.Rows) / sum.LoadTime.Seconds()
	l.report("index")
	info := engine.BuildInfo{Warehouses: opts.Warehouses, Seed: opts.Seed, CLoad: gen.Constants.CLast,
		BuiltAt: start, Version: opts.Version, Schema: schema.Name}
	notes, err := db.FinishBuild(ctx, schema, info)
	if err != nil {
		return Summary{}, err
	}
	sum.Notes = notes
	sum.Total = time.Since(start)
	sum.IndexTime = sum.Total - sum.LoadTime
	l.report("done")
	return sum, nil
}

type loadRun struct {
	opts   Options
	gen    *tpcc.Generator
	start  time.Time
	rows   atomic.Int64 // loaded, as the loader counted them at each table's end
	sent   atomic.Int64 // handed to the loaders so far, for progress
	whDone atomic.Int64
}

// rowCounter counts the rows passing to a loader: the generator writes whole rows in
// chunks of ~256 KB, so progress moves every few thousand rows, not once per table.
type rowCounter struct {
	w    io.Writer
	rows *atomic.Int64
}

func (c *rowCounter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.rows.Add(int64(bytes.Count(p[:n], []byte{'\n'})))
	return n, err
}

// run hands the item table and then each warehouse to the workers, each with its own
// connection, and stops them all at the first error.
func (l *loadRun) run(ctx context.Context, db engine.Database) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// Handed out one at a time: a queue of every warehouse up front would take
	// memory in proportion to the build.
	jobs := make(chan int)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(jobs)
		for w := 0; w <= l.opts.Warehouses; w++ { // 0: the item table
			select {
			case jobs <- w:
			case <-ctx.Done():
				return
			}
		}
	})
	for range min(l.opts.Workers, l.opts.Warehouses+1) {
		wg.Go(func() {
			ld, err := db.NewLoader(ctx)
			if err != nil {
				cancel(fmt.Errorf("open load connection: %w", err))
				return
			}
			defer ld.Close()
			for w := range jobs {
				if ctx.Err() != nil {
					return
				}
				if err := l.loadJob(ctx, ld, w); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && ctx.Err() != nil {
		return err
	}
	return nil
}

func (l *loadRun) loadJob(ctx context.Context, ld engine.Loader, w int) error {
	if w == 0 {
		return l.stream(ctx, ld, tpcc.ItemTable, 0, l.gen.WriteItems)
	}
	wh := l.gen.Warehouse(w)
	for _, t := range tpcc.WarehouseTables {
		if err := l.stream(ctx, ld, t, w, func(out io.Writer) (int64, error) { return wh.Write(t, out) }); err != nil {
			return err
		}
	}
	l.whDone.Add(1)
	return nil
}

// stream pipes the generator into the loader: generation and ingestion overlap.
func (l *loadRun) stream(ctx context.Context, ld engine.Loader, t tpcc.Table, w int, gen func(io.Writer) (int64, error)) error {
	pr, pw := io.Pipe()
	go func() {
		_, err := gen(&rowCounter{w: pw, rows: &l.sent})
		pw.CloseWithError(err)
	}()
	n, err := ld.Load(ctx, t, pr)
	pr.CloseWithError(io.ErrClosedPipe) // unblocks the generator if the load failed
	if err != nil {
		if w == 0 {
			return fmt.Errorf("load %s: %w", t, err)
		}
		return fmt.Errorf("load %s for warehouse %d: %w", t, w, err)
	}
	l.rows.Add(n)
	return nil
}

// tick reports progress every second until the returned stop is called.
func (l *loadRun) tick() (stop func()) {
	if l.opts.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				l.report("load")
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

func (l *loadRun) report(phase string) {
	if l.opts.Progress == nil {
		return
	}
	p := Progress{Phase: phase, WarehousesDone: int(l.whDone.Load()), Warehouses: l.opts.Warehouses,
		Rows: l.sent.Load(), Elapsed: time.Since(l.start)}
	p.RowsPerSecond = float64(p.Rows) / p.Elapsed.Seconds()
	if left := expectedRows(l.opts.Warehouses) - p.Rows; phase == "load" && p.Rows > 0 && left > 0 {
		p.ETA = time.Duration(float64(left) / p.RowsPerSecond * float64(time.Second))
	}
	l.opts.Progress(p)
}

// expectedRows is the initial row count of a database (order_line on average).
func expectedRows(warehouses int) int64 {
	var per int64
	for _, n := range tpcc.RowsPerWarehouse {
		per += n
	}
	return tpcc.Items + int64(warehouses)*per
}

// DefaultWorkers is one load connection per CPU: the server's COPY and the
// generators then keep every core busy (bench/buildscale.sh: CPU-bound either way).
func DefaultWorkers() int { return runtime.NumCPU() }
