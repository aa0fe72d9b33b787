package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/bottleneck"
	"github.com/storbench/storbench/internal/check"
	"github.com/storbench/storbench/internal/dburl"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/live"
	"github.com/storbench/storbench/internal/load"
	"github.com/storbench/storbench/internal/measure"
	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/outfile"
	"github.com/storbench/storbench/internal/tpcc"
)

// dsnFlag declares --dsn, whose default is $STORBENCH_DSN, read when the command runs:
// a flag's default is printed by --help, and that DSN may hold a password.
func dsnFlag(c *cobra.Command, dsn *string) {
	c.Flags().StringVar(dsn, "dsn", "", "database URL, e.g. postgres://user:pass@127.0.0.1:5432/tpcc (default $STORBENCH_DSN)")
	c.PreRun = func(c *cobra.Command, _ []string) {
		if !c.Flags().Changed("dsn") {
			*dsn = os.Getenv("STORBENCH_DSN")
		}
	}
}

func buildCmd() *cobra.Command {
	var dsn string
	opts := load.Options{Version: version}
	c := &cobra.Command{
		Use:   "build",
		Short: "Create the TPC-C schema and load it",
		Long: `Create the TPC-C tables, load the initial data of --warehouses warehouses over
--workers connections in parallel, then create keys, indexes and stored procedures and
refresh statistics. Refuses a database that already holds TPC-C tables.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := opts.Validate(); err != nil {
				return err
			}
			db, u, err := openDSN(c.Context(), dsn, true)
			if err != nil {
				return err
			}
			defer db.Close()
			lease, err := useInstance(c, u)
			if err != nil {
				return err
			}
			defer lease.Release()
			p := newProgress(c.OutOrStdout())
			opts.Progress = p.build
			opts.Storage = engine.WatchStorageOf(c.Context(), db, u)
			sum, err := load.Build(c.Context(), db, opts)
			p.end()
			if err != nil && c.Context().Err() != nil {
				// The tables hold part of the data: a run would measure a wrong schema.
				return fmt.Errorf("build interrupted: %s holds an incomplete schema; remove it with storbench drop --dsn … %s before building again", u.Redacted(), engine.DSNYouGave)
			}
			if err != nil {
				return lease.Explain(opts.Storage.Explain(db, err, "then drop the database and build again"))
			}
			// What finishing does depends on the engine and the schema (docs/workload.md:
			// PostgreSQL's spec schema freezes and checkpoints, MariaDB analyzes only).
			fmt.Fprintf(c.OutOrStdout(), "built %s (schema %s, seed %d, C-Load %d): %d rows loaded in %.1fs (%.0f rows/s), keys, indexes, procedures and finishing in %.1fs, total %.1fs\n",
				tpcc.Count(sum.Warehouses, "warehouse"), sum.Schema.Name, sum.Seed, sum.CLoad, sum.Rows, sum.LoadTime.Seconds(), sum.RowsPerSecond, sum.IndexTime.Seconds(), sum.Total.Seconds())
			for _, n := range sum.Notes {
				fmt.Fprintln(c.OutOrStdout(), "note:", n)
			}
			return nil
		},
	}
	dsnFlag(c, &dsn)
	opts.AddFlags(c.Flags())
	_ = c.MarkFlagRequired("warehouses")
	return c
}

func runCmd() *cobra.Command {
	var dsn, jsonPath string
	var cfg driver.Config
	var mf metricsFlags
	var lo live.Options
	c := &cobra.Command{
		Use:   "run",
		Short: "Drive the database with virtual users (TPROC-C) and report TPM and NOPM",
		Long: `Run --users virtual users, each on its own connection with a home warehouse, for
--ramp then --duration. Only transactions completed inside the timed window count.
Prints a progress line every second and a summary with both throughput views: the
database's own counters (HammerDB-compatible) and storbench's client count.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if mf.only {
				if lo.Listen != "" {
					return fmt.Errorf("%w: --listen serves a run's figures, and --metrics-only runs none: leave one out", input.ErrInvalid)
				}
				return runMetricsOnly(c, &mf, dsn, jsonPath, cfg.Duration)
			}
			if err := mf.checkOutputs(jsonPath); err != nil {
				return err
			}
			if cfg.Seed == 0 {
				cfg.Seed = uint64(time.Now().UnixNano())
			}
			srv, err := listen(c, lo)
			if err != nil {
				return err
			}
			defer srv.Close()
			p := newProgress(c.OutOrStdout())
			cfg.Progress = p.run
			var lease *instance.Lease
			defer func() { lease.Release() }()
			closeCSV := func() error { return nil }
			defer func() { closeCSV() }()
			point := measure.Point{DSN: dsn, Driver: cfg, Version: version,
				Prepare: func(ctx context.Context, db engine.Database, u dburl.URL) (*metrics.Monitor, error) {
					var err error
					if lease, err = useInstance(c, u); err != nil || mf.off {
						return nil, err
					}
					var cgroups []metrics.CgroupCPU
					if g, err := lease.CPUGroup(); err == nil && mf.Host == "" {
						cgroups = append(cgroups, g)
					}
					mon, closeFile, err := mf.monitor(ctx, mf.selectFor(ctx, db, u), cgroups, db, jsonPath, c.OutOrStdout())
					if err != nil {
						return nil, err
					}
					closeCSV = closeFile
					return mon, nil
				}}
			if srv != nil {
				point.Watch = srv.Point(live.RunTarget, cfg.Users)
			}
			out, runErr := measure.Run(c.Context(), point)
			p.end()
			res := out.Run
			if res == nil && c.Context().Err() != nil {
				return interruptedBeforeWindow(out.Sampled, csvPathOf(&mf, jsonPath))
			}
			if res == nil && lease == nil {
				// It did not connect (or was refused before): a managed instance
				// refusing a DSN without its password says how to give it.
				if u, err := dburl.Parse(dsn); err == nil {
					runErr = explainConnect(u, runErr)
				}
			}
			if res == nil {
				return lease.Explain(runErr)
			}
			// An interrupted run still reports and stores the part of the window that ran.
			if why := lease.OOMKilled(); why != "" {
				// The users rode out the server's restart; the result must say why it had one.
				res.Notes = append(res.Notes, why)
			}
			if err := driver.WriteText(c.OutOrStdout(), res); err != nil {
				return err
			}
			if res.System != nil {
				metrics.WriteText(c.OutOrStdout(), res.System, "means over the timed window")
			}
			bottleneck.WriteText(c.OutOrStdout(), res.Bottleneck)
			kept := "the result above"
			if jsonPath != "" {
				if err := writeJSON(c, jsonTarget(jsonPath), res); err != nil {
					return errors.Join(runErr, err)
				}
				kept += ", written to " + jsonPath + ","
			}
			switch {
			case runErr == nil:
				return nil
			case !res.Interrupted:
				// The window ran whole; only the database's figures are missing.
				return fmt.Errorf("%w; %s has the whole window", lease.Explain(runErr), kept)
			case errors.Is(runErr, context.Canceled):
				return fmt.Errorf("run interrupted after %.0f s of the %.0f s timed window; %s covers that part", res.End.Sub(res.Start).Seconds(), cfg.Duration.Seconds(), kept)
			}
			return fmt.Errorf("run stopped after %.0f s of the timed window; %s covers that part: %w", res.End.Sub(res.Start).Seconds(), kept, lease.Explain(runErr))
		},
	}
	dsnFlag(c, &dsn)
	cfg.AddFlags(c.Flags())
	lo.AddFlags(c.Flags())
	c.Flags().StringVar(&jsonPath, "json", "", "write the whole result as JSON to this file")
	mf.register(c)
	c.Flags().BoolVar(&mf.only, "metrics-only", false, "sample metrics for --duration without a workload (e.g. beside another tool); --dsn is optional and adds the database's counters")
	return c
}

// listen starts the live endpoint --listen asks for (nil: none) and says where it is.
func listen(c *cobra.Command, o live.Options) (*live.Server, error) {
	srv, err := live.Listen(o, version)
	if srv != nil {
		fmt.Fprintf(c.OutOrStdout(), "live metrics at %s\n", srv.URL())
	}
	return srv, err
}

// jsonTarget is a --json file.
func jsonTarget(path string) outfile.Target {
	return outfile.Target{Path: path, Flag: "--json", Kind: outfile.JSON}
}

// writeJSON writes the result to file (jsonTarget); it replaces only a result
// storbench wrote.
func writeJSON(c *cobra.Command, file outfile.Target, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	f, err := file.Create()
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", file.Path, err)
	}
	fmt.Fprintf(c.OutOrStdout(), "result written to %s\n", file.Path)
	return nil
}

func checkCmd() *cobra.Command {
	var dsn string
	var all bool
	c := &cobra.Command{
		Use:   "check",
		Short: "Run the TPC-C consistency conditions (3.3.2); exit code 1 if any fails",
		Long: `Run consistency conditions 3.3.2.1-3.3.2.10 and 3.3.2.12, each as one query that
counts violations. --all adds 3.3.2.11, which holds only before the first Delivery
(right after build).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			db, _, err := openDSN(c.Context(), dsn, false)
			if err != nil {
				return err
			}
			defer db.Close()
			if err := engine.RequireSchema(c.Context(), db, dsn); err != nil {
				return err
			}
			start := time.Now()
			outcomes := check.Run(c.Context(), db, all)
			check.WriteText(c.OutOrStdout(), outcomes)
			// Checked all the same (that is check's job), but the violations are the
			// build's, not a run's.
			if _, err := db.BuildInfo(c.Context()); errors.Is(err, engine.ErrBuildUnfinished) {
				fmt.Fprintf(c.OutOrStdout(), "note: the storbench build of this database did not finish (it holds no build record): violations above may be data it never loaded; storbench drop --dsn … %s, then build again\n", engine.DSNYouGave)
			}
			if !check.AllPassed(outcomes) {
				fmt.Fprintln(c.ErrOrStderr(), "storbench: consistency check failed")
				return exitCode(1)
			}
			fmt.Fprintf(c.OutOrStdout(), "all %d conditions hold (%.1fs)\n", len(outcomes), time.Since(start).Seconds())
			return nil
		},
	}
	dsnFlag(c, &dsn)
	c.Flags().BoolVar(&all, "all", false, "also check 3.3.2.11 (valid only before the first Delivery)")
	return c
}

func dropCmd() *cobra.Command {
	var dsn, force string
	c := &cobra.Command{
		Use:   "drop",
		Short: "Remove what a storbench build created (only that)",
		Long: `Remove the tables and stored procedures a storbench build created in the database,
as its record lists them (an interrupted build's too), and nothing else. A database
without that record (built by HammerDB or another tool, or a user's tables with
TPC-C's names) is refused: --force NAME, where NAME repeats the database's own name
(a server's database, a SQLite file's absolute path), drops its TPC-C tables and
routines (storbench's and HammerDB's) and never another table.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			db, _, err := openDSN(c.Context(), dsn, false)
			if err != nil {
				return err
			}
			defer db.Close()
			dropped, err := engine.Drop(c.Context(), db, dsn, force)
			if err != nil {
				return err
			}
			if len(dropped) == 0 {
				fmt.Fprintln(c.OutOrStdout(), "nothing to drop: no TPC-C tables here")
				return nil
			}
			fmt.Fprintf(c.OutOrStdout(), "dropped %d objects: %v\n", len(dropped), dropped)
			return nil
		},
	}
	dsnFlag(c, &dsn)
	c.Flags().StringVar(&force, "force", "", "drop the TPC-C tables and routines of a database storbench did not build; give the database's name (a SQLite file's absolute path)")
	return c
}

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print storbench's version",
		Args:  cobra.NoArgs,
		Run: func(c *cobra.Command, _ []string) {
			fmt.Fprintf(c.OutOrStdout(), "storbench %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		},
	}
}

// interruptedBeforeWindow says what an interruption before the timed window kept:
// no result, and the ramp-up's samples when the sampler had started.
func interruptedBeforeWindow(sampled bool, csvPath string) error {
	msg := "interrupted during ramp-up: nothing measured yet, no result written"
	if sampled && csvPath != "" {
		msg += "; the ramp-up's metrics samples are in " + csvPath
	}
	return errors.New(msg)
}
