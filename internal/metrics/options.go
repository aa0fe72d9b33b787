package metrics

// What to sample, as a user sets it and as a database tells it: the command line's
// sampler flags declared beside their fields, and the one choice, shared by run and
// studies, of what to sample for a database.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/storbench/storbench/internal/blockdev"
	"github.com/storbench/storbench/internal/dburl"
	"github.com/storbench/storbench/internal/engine"
)

// Options are the sampler's settings a user gives on the command line.
type Options struct {
	Interval  time.Duration
	Paths     []string // directories whose disks to sample
	Host      string   // node_exporter URL of the database's host
	Devices   []string // disks of Host to sample
	IOLatency string   // auto, on or off
	WaitRate  float64  // readings of the sessions' waits a second
	CSV       string   // file every sample is streamed to
}

// AddFlags declares the sampler's flags, with their defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.Interval, "metrics-interval", DefaultInterval, "metrics sampling interval (at least 100ms)")
	fs.StringArrayVar(&o.Paths, "path", nil, "directory whose disks to sample (repeatable); a server on this host is asked for its data and WAL directories")
	fs.StringVar(&o.Host, "metrics-host", "", "node_exporter URL of the database's host, e.g. http://db1:9100/metrics: CPU, memory and disks from there")
	fs.StringArrayVar(&o.Devices, "metrics-device", nil, "disk of --metrics-host to sample (repeatable; default: every whole disk it reports)")
	fs.StringVar(&o.IOLatency, "io-latency", DefaultIOLatency, "per-I/O latency percentiles traced with bpftrace: auto (when root and available), on (fail if not), off")
	fs.Float64Var(&o.WaitRate, "wait-rate", DefaultWaitRate, "times a second the database's sessions are read for their wait events (where the engine shows them; 0: off)")
	fs.StringVar(&o.CSV, "metrics-csv", "", "write every sample to this CSV file as it is taken (default with --json F: F's name with .metrics.csv)")
}

// Config is what a Monitor samples with these options: the database's own choice
// (ForDatabase), their directories, and cgroups and db's counters (db may be nil).
func (o Options) Config(sel Selection, cgroups []CgroupCPU, db engine.Observer) (Config, error) {
	if err := errors.Join(CheckInterval(o.Interval), CheckIOLatency(o.IOLatency), CheckWaitRate(o.WaitRate)); err != nil {
		return Config{}, err
	}
	cfg := Config{Interval: o.Interval, Host: o.Host, Devices: o.Devices, IOLatency: o.IOLatency, Database: db,
		WaitRate: o.WaitRate, Targets: sel.Targets, Servers: sel.Servers, Cgroups: cgroups}
	for _, p := range o.Paths {
		cfg.Targets = append(cfg.Targets, Target{Path: p, Role: blockdev.RolePath})
	}
	return cfg, nil
}

// Selection is what to sample for a database, and what could not be had.
type Selection struct {
	Targets []Target // its data and WAL directories, as it reports them
	Servers []Server // its server's processes, by role
	Notes   []string // why something is not sampled
	// NoStorage is why the database did not say where its files are (nil: it did).
	NoStorage error
}

// ForDatabase is what to sample for the database db, reached at u: on this host, its
// data and WAL directories (as it reports them) and its server's processes by role;
// on another, nothing of this host's but a note that its CPU and memory are the
// client's.
func ForDatabase(ctx context.Context, db engine.Database, u dburl.URL) Selection {
	host, local := u.Local()
	if !local {
		return Selection{Notes: []string{fmt.Sprintf("the database is on %s, not this host: CPU and memory are this host's (the client's); give --metrics-host for the database host's figures", host)}}
	}
	var sel Selection
	if srv, err := LocalServer(ctx, db); err == nil {
		sel.Servers = append(sel.Servers, srv)
	} else {
		sel.Notes = append(sel.Notes, fmt.Sprintf("no I/O by process role: %v", err))
	}
	st, err := db.Storage(ctx)
	if err != nil {
		sel.NoStorage = err
		return sel
	}
	sel.Targets = []Target{{Path: st.Data, Role: blockdev.RoleData, Reported: true}, {Path: st.WAL, Role: blockdev.RoleWAL, Reported: true}}
	return sel
}

// SampleFor samples for d, or until ctx ends, and returns what it
// sampled and over how many seconds: sampling without a workload.
func (m *Monitor) SampleFor(ctx context.Context, d time.Duration) (*Report, float64) {
	start := time.Now()
	m.Start(ctx, start)
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	elapsed := time.Since(start).Seconds()
	return m.Stop(context.WithoutCancel(ctx), 0, elapsed), elapsed
}
