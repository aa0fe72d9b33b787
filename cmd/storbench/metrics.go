package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/blockdev"
	"github.com/storbench/storbench/internal/dburl"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/outfile"
)

// metricsFlags are the flags of the system and database metrics sampler.
type metricsFlags struct {
	off      bool
	only     bool
	interval time.Duration
	paths    []string
	host     string
	devices  []string
	latency  string
	waitRate float64
	csvPath  string
}

func (f *metricsFlags) register(c *cobra.Command) {
	fl := c.Flags()
	fl.BoolVar(&f.off, "no-metrics", false, "do not sample system and database metrics")
	fl.DurationVar(&f.interval, "metrics-interval", metrics.DefaultInterval, "metrics sampling interval (at least 100ms)")
	fl.StringArrayVar(&f.paths, "path", nil, "directory whose disks to sample (repeatable); a server on this host is asked for its data and WAL directories")
	fl.StringVar(&f.host, "metrics-host", "", "node_exporter URL of the database's host, e.g. http://db1:9100/metrics: CPU, memory and disks from there")
	fl.StringArrayVar(&f.devices, "metrics-device", nil, "disk of --metrics-host to sample (repeatable; default: every whole disk it reports)")
	fl.StringVar(&f.latency, "io-latency", metrics.DefaultIOLatency, "per-I/O latency percentiles traced with bpftrace: auto (when root and available), on (fail if not), off")
	fl.Float64Var(&f.waitRate, "wait-rate", metrics.DefaultWaitRate, "times a second the database's sessions are read for their wait events (where the engine shows them; 0: off)")
	fl.StringVar(&f.csvPath, "metrics-csv", "", "write every sample to this CSV file as it is taken (default with --json F: F's name with .metrics.csv)")
}

// serverTargets asks a database on this host for its data and WAL directories and
// its server's main process (whose processes' I/O is sampled by role); for one
// elsewhere it says why this host's disks are not its own.
func (f *metricsFlags) serverTargets(ctx context.Context, db engine.Database, u dburl.URL) ([]metrics.Target, []metrics.Server, []string) {
	if f.host != "" {
		return nil, nil, nil
	}
	host, local := u.Local()
	if !local {
		return nil, nil, []string{fmt.Sprintf("the database is on %s, not this host: CPU and memory are this host's (the client's); give --metrics-host for the database host's figures", host)}
	}
	var servers []metrics.Server
	var notes []string
	if srv, err := metrics.LocalServer(ctx, db); err == nil {
		servers = append(servers, srv)
	} else {
		notes = append(notes, fmt.Sprintf("no I/O by process role: %v", err))
	}
	st, err := db.Storage(ctx)
	if err != nil {
		if len(f.paths) > 0 {
			return nil, servers, notes
		}
		return nil, servers, append(notes, fmt.Sprintf("no disk figures: %v; give --path DIR", err))
	}
	return []metrics.Target{{Path: st.Data, Role: blockdev.RoleData, Reported: true}, {Path: st.WAL, Role: blockdev.RoleWAL, Reported: true}}, servers, notes
}

// monitor prepares sampling of the targets and --path directories, the servers'
// processes and cgroups, and db's counters when db is not nil. The returned function
// ends the CSV file.
func (f *metricsFlags) monitor(ctx context.Context, targets []metrics.Target, servers []metrics.Server, cgroups []metrics.CgroupCPU, db engine.Observer, notes []string, jsonPath string, out io.Writer) (*metrics.Monitor, func() error, error) {
	if err := errors.Join(metrics.CheckInterval(f.interval), metrics.CheckIOLatency(f.latency),
		metrics.CheckWaitRate(f.waitRate)); err != nil {
		return nil, nil, err
	}
	cfg := metrics.Config{Interval: f.interval, Host: f.host, Devices: f.devices, IOLatency: f.latency, Database: db,
		WaitRate: f.waitRate, Targets: targets, Servers: servers, Cgroups: cgroups}
	for _, p := range f.paths {
		cfg.Targets = append(cfg.Targets, metrics.Target{Path: p, Role: blockdev.RolePath})
	}
	// The CSV is created only once the sampler has accepted its flags: a refused run
	// leaves the previous run's CSV as it was.
	mon, err := metrics.New(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	closeCSV := func() error { return nil }
	if csv := f.csvTarget(jsonPath); csv.Path != "" {
		file, err := csv.Create()
		if err != nil {
			mon.Close()
			return nil, nil, err
		}
		mon.StreamCSV(file)
		closeCSV = file.Close
		fmt.Fprintf(out, "samples written to %s as they are taken\n", csv.Path)
	}
	for _, n := range notes {
		mon.Note(n)
	}
	return mon, closeCSV, nil
}

// csvPathOf is where the samples are streamed: --metrics-csv, or beside --json.
func csvPathOf(f *metricsFlags, jsonPath string) string {
	if f.csvPath == "" && jsonPath != "" {
		return strings.TrimSuffix(jsonPath, filepath.Ext(jsonPath)) + ".metrics.csv"
	}
	return f.csvPath
}

// csvTarget is the samples' CSV file; its Path is "" when there is none.
func (f *metricsFlags) csvTarget(jsonPath string) outfile.Target {
	flag := "--metrics-csv"
	if f.csvPath == "" {
		// The CSV is named after --json; --metrics-csv names it otherwise.
		flag = "--json or --metrics-csv"
	}
	return outfile.Target{Path: csvPathOf(f, jsonPath), Flag: flag, Kind: metrics.SamplesCSV}
}

// checkOutputs refuses, before anything is measured, a --json or samples' CSV file
// that cannot be written or is not storbench's to replace.
func (f *metricsFlags) checkOutputs(jsonPath string) error {
	if err := jsonTarget(jsonPath).Check(); err != nil {
		return err
	}
	if f.off {
		return nil
	}
	return f.csvTarget(jsonPath).Check()
}

// metricsOnly is the result of `run --metrics-only`.
type metricsOnly struct {
	Config struct {
		DurationSeconds float64 `json:"duration_s"`
		DSN             string  `json:"dsn,omitempty"`
		Version         string  `json:"storbench_version"`
	} `json:"config"`
	System *metrics.Report `json:"system"`
}

// runMetricsOnly samples for the duration (or until interrupted) without a workload.
func runMetricsOnly(c *cobra.Command, f *metricsFlags, dsn, jsonPath string, duration time.Duration) error {
	if err := driver.CheckDuration(duration); err != nil {
		return fmt.Errorf("%w: %v", input.ErrInvalid, err)
	}
	if f.off {
		return fmt.Errorf("%w: --metrics-only and --no-metrics contradict each other", input.ErrInvalid)
	}
	if err := f.checkOutputs(jsonPath); err != nil {
		return err
	}
	ctx, out := c.Context(), c.OutOrStdout()
	var observer engine.Observer
	var targets []metrics.Target
	var servers []metrics.Server
	var notes []string
	if dsn != "" {
		db, u, err := openDSN(ctx, dsn, false)
		if err != nil {
			return err
		}
		defer db.Close()
		observer = db
		targets, servers, notes = f.serverTargets(ctx, db, u)
	}
	mon, closeCSV, err := f.monitor(ctx, targets, servers, nil, observer, notes, jsonPath, out)
	if err != nil {
		return err
	}
	defer closeCSV()
	defer mon.Close()
	start := time.Now()
	fmt.Fprintf(out, "sampling for %s (Ctrl-C ends early)\n", duration)
	mon.Start(ctx, start)
	select {
	case <-time.After(duration):
	case <-ctx.Done():
	}
	elapsed := time.Since(start).Seconds()
	res := metricsOnly{System: mon.Stop(context.WithoutCancel(ctx), 0, elapsed)}
	res.Config.DurationSeconds, res.Config.DSN, res.Config.Version = elapsed, dburl.Redact(dsn), version
	metrics.WriteText(out, res.System, "means over the run")
	if jsonPath != "" {
		return writeJSON(c, jsonTarget(jsonPath), res)
	}
	return nil
}
