package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/dburl"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/outfile"
)

// metricsFlags are the sampler's flags (metrics.Options declares its own) and the
// command's switches of it.
type metricsFlags struct {
	metrics.Options
	off, only bool
}

func (f *metricsFlags) register(c *cobra.Command) {
	c.Flags().BoolVar(&f.off, "no-metrics", false, "do not sample system and database metrics")
	f.AddFlags(c.Flags())
}

// selectFor is what to sample for db, reached at u (metrics.ForDatabase), unless the
// database's host is sampled through its node_exporter; without the directories the
// database did not report nor --path, it says that the disks are not sampled.
func (f *metricsFlags) selectFor(ctx context.Context, db engine.Database, u dburl.URL) metrics.Selection {
	if f.Host != "" {
		return metrics.Selection{}
	}
	sel := metrics.ForDatabase(ctx, db, u)
	if sel.NoStorage != nil && len(f.Paths) == 0 {
		sel.Notes = append(sel.Notes, fmt.Sprintf("no disk figures: %v; give --path DIR", sel.NoStorage))
	}
	return sel
}

// monitor prepares sampling of the selection and --path directories, the cgroups,
// and db's counters when db is not nil. The returned function ends the CSV file.
func (f *metricsFlags) monitor(ctx context.Context, sel metrics.Selection, cgroups []metrics.CgroupCPU, db engine.Observer, jsonPath string, out io.Writer) (*metrics.Monitor, func() error, error) {
	cfg, err := f.Config(sel, cgroups, db)
	if err != nil {
		return nil, nil, err
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
	for _, n := range sel.Notes {
		mon.Note(n)
	}
	return mon, closeCSV, nil
}

// csvPathOf is where the samples are streamed: --metrics-csv, or beside --json.
func csvPathOf(f *metricsFlags, jsonPath string) string {
	if f.CSV == "" && jsonPath != "" {
		return strings.TrimSuffix(jsonPath, filepath.Ext(jsonPath)) + ".metrics.csv"
	}
	return f.CSV
}

// csvTarget is the samples' CSV file; its Path is "" when there is none.
func (f *metricsFlags) csvTarget(jsonPath string) outfile.Target {
	flag := "--metrics-csv"
	if f.CSV == "" {
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
		return err
	}
	if f.off {
		return fmt.Errorf("%w: --metrics-only and --no-metrics contradict each other", input.ErrInvalid)
	}
	if err := f.checkOutputs(jsonPath); err != nil {
		return err
	}
	ctx, out := c.Context(), c.OutOrStdout()
	var observer engine.Observer
	var sel metrics.Selection
	if dsn != "" {
		db, u, err := openDSN(ctx, dsn, false)
		if err != nil {
			return err
		}
		defer db.Close()
		observer = db
		sel = f.selectFor(ctx, db, u)
	}
	mon, closeCSV, err := f.monitor(ctx, sel, nil, observer, jsonPath, out)
	if err != nil {
		return err
	}
	defer closeCSV()
	defer mon.Close()
	fmt.Fprintf(out, "sampling for %s (Ctrl-C ends early)\n", duration)
	var res metricsOnly
	var elapsed float64
	res.System, elapsed = mon.SampleFor(ctx, duration)
	res.Config.DurationSeconds, res.Config.DSN, res.Config.Version = elapsed, dburl.Redact(dsn), version
	metrics.WriteText(out, res.System, "means over the run")
	if jsonPath != "" {
		return writeJSON(c, jsonTarget(jsonPath), res)
	}
	return nil
}
