package main

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/hammerdb"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/live"
	"github.com/storbench/storbench/internal/outfile"
	"github.com/storbench/storbench/internal/report"
	"github.com/storbench/storbench/internal/study"
)

func studyCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "study",
		Short: "Run the papers' experiments from one YAML file: plan, run (resumable)",
	}
	c.AddCommand(studyPlanCmd(), studyRunCmd(), studyCleanCmd())
	return c
}

func studyCleanCmd() *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:   "clean RESULTS_DIR",
		Short: "Stop and remove a study's managed instances (their data), keeping its stored results",
		Long: `Stop and remove the managed instances a study created (after a failed or
interrupted study they hold its data on disk): their data and WAL directories, only
what storbench created in them. The stored results and base images stay; running the
study again creates its instances anew. An instance in use, or whose directory is not
there or holds no marker (its disk not mounted), is refused; --force removes it
anyway, and forgets one whose directory is not there, saying what it left there.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			destroyed, kept, err := study.Clean(c.Context(), args[0], force)
			out := c.OutOrStdout()
			if len(destroyed) > 0 {
				fmt.Fprintf(out, "removed instances %s; results kept in %s\n", strings.Join(destroyed, ", "), args[0])
			} else if err == nil {
				fmt.Fprintf(out, "no instances to remove; results kept in %s\n", args[0])
			}
			for _, k := range kept {
				fmt.Fprintln(out, k)
			}
			return err
		},
	}
	c.Flags().BoolVar(&force, "force", false, "remove the instances even while a build, run, backup or restore uses one, and forget one whose directories are not there (a disk not mounted), leaving what it has there")
	return c
}

func studyPlanCmd() *cobra.Command {
	var results string
	c := &cobra.Command{
		Use:   "plan STUDY.yaml",
		Short: "Print every step of a study in order with an estimated duration; runs nothing",
		Long: `Print every step of the study in order with its estimated duration, then
every refusal of what it asks that this machine cannot give (paths, CPUs, memory,
directories inside one another or the results store), one line each at its line of
the file, and exit 2 if there is any: study run would refuse the study before
running anything. A file that does not parse is refused before the plan.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			s, err := study.Load(args[0])
			if err != nil {
				return err
			}
			dir, err := study.ResultsDir(s, results)
			if err != nil {
				return err
			}
			if err := study.WritePlan(c.OutOrStdout(), s, study.Plan(s), dir); err != nil {
				return err
			}
			refusals := study.CheckMachine(s, dir)
			for _, r := range refusals {
				printError(c.ErrOrStderr(), r.Error())
			}
			if len(refusals) > 0 {
				return exitCode(2)
			}
			return nil
		},
	}
	c.Flags().StringVar(&results, "results", "", "results store directory study run will be given (default results/NAME)")
	return c
}

func studyRunCmd() *cobra.Command {
	var results string
	var restart bool
	var lo live.Options
	c := &cobra.Command{
		Use:   "run STUDY.yaml",
		Short: "Run a study into a results store; run again to resume after the last stored step",
		Long: `Run every step of the study in order, storing each step's result (with its
timeline and metrics) as it finishes in --results (default results/NAME). Ctrl-C stops
the current step, stops the managed instances and keeps what was stored; running the
same file again resumes after the last stored step, unless --restart.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			file, err := study.ReadFile(args[0])
			if err != nil {
				return err
			}
			s, err := study.Parse(args[0], file)
			if err != nil {
				return err
			}
			dir, err := study.ResultsDir(s, results)
			if err != nil {
				return err
			}
			srv, err := listen(c, lo)
			if err != nil {
				return err
			}
			defer srv.Close()
			return runStudy(c, s, file, dir, restart, srv)
		},
	}
	c.Flags().StringVar(&results, "results", "", "results store directory (default results/NAME)")
	c.Flags().BoolVar(&restart, "restart", false, "clear the stored steps and run the study from the start")
	lo.AddFlags(c.Flags())
	return c
}

// runStudy runs a study with a live view. The driver gets one CPU, as run's default:
// on a box shared with the database more only costs the server CPU.
func runStudy(c *cobra.Command, s *study.Study, file []byte, results string, restart bool, srv *live.Server) error {
	runtime.GOMAXPROCS(1)
	out := c.OutOrStdout()
	p := newProgress(out)
	opts := study.Options{Version: version, Restart: restart, Log: lineWriter{p}, Progress: func(sp study.Progress) {
		t := sp.Tick
		p.line(fmt.Sprintf("step %d/%d %s: users %d, %s %s, TPM %.0f, NOPM %.0f (client, last second), ~%s left",
			sp.Step.Seq, sp.Of, sp.Step.Target, sp.Step.Users, t.Elapsed.Round(time.Second), t.Phase, t.TPM, t.NOPM,
			sp.Remaining.Round(time.Second)), 10*time.Second)
	}}
	if srv != nil {
		opts.Watch = srv.Study()
	}
	err := study.Run(c.Context(), s, file, results, opts)
	p.end()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "results: %s (storbench results list %s)\n", results, results)
	return nil
}

// lineWriter prints the runner's log lines without breaking the live status line.
type lineWriter struct{ p *progress }

func (w lineWriter) Write(b []byte) (int, error) {
	w.p.end()
	return w.p.out.Write(b)
}

func resultsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "results",
		Short: "Read a study's results store: list, show, export --csv or --hammerdb",
	}
	list := &cobra.Command{
		Use:   "list RESULTS_DIR",
		Short: "Every step of the study: stored (with its headline figures) or still to run",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			store, err := study.ReadStore(args[0])
			if err != nil {
				return err
			}
			return study.WriteList(c.OutOrStdout(), store)
		},
	}
	show := &cobra.Command{
		Use:   "show RESULTS_DIR STEP",
		Short: "One stored step in full (STEP: its number or its id)",
		Args:  cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			store, err := study.ReadStore(args[0])
			if err != nil {
				return err
			}
			r, err := store.Find(args[1])
			if err != nil {
				return err
			}
			return study.WriteStep(c.OutOrStdout(), r)
		},
	}
	var csvPath, hammerdbPath string
	export := &cobra.Command{
		Use:   "export SOURCE (--csv FILE | --hammerdb PATH)",
		Short: "A study's steps as CSV rows (--csv); TPC-C runs as HammerDB job reports (--hammerdb: a run's JSON to a file, a study's steps to a directory)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if csvPath == "" && hammerdbPath == "" {
				return fmt.Errorf("%w: give --csv FILE (a study's steps as CSV) or --hammerdb PATH (HammerDB job reports)", input.ErrInvalid)
			}
			if st, err := os.Stat(args[0]); err == nil && !st.IsDir() {
				if csvPath != "" {
					return fmt.Errorf("%w: --csv exports a study's results store, and %s is a file: give the store's directory", input.ErrInvalid, args[0])
				}
				w, err := hammerdb.ExportRun(args[0], outfile.Target{Path: hammerdbPath, Flag: "--hammerdb"}, version)
				if err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "written to %s (HammerDB job report)\n", w.Path)
				return nil
			}
			store, err := study.ReadStore(args[0])
			if err != nil {
				return err
			}
			if csvPath != "" {
				if err := exportCSV(c, store, csvPath); err != nil {
					return err
				}
			}
			if hammerdbPath == "" {
				return nil
			}
			written, skipped, err := hammerdb.ExportStudy(store, outfile.Target{Path: hammerdbPath, Flag: "--hammerdb"}, version)
			for _, s := range skipped {
				fmt.Fprintf(c.OutOrStdout(), "note: %s is not exported: %s\n", s.Step, s.Why)
			}
			for _, w := range written {
				fmt.Fprintf(c.OutOrStdout(), "%s: %s\n", w.Step, w.Path)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "%d HammerDB job reports written to %s\n", len(written), hammerdbPath)
			return nil
		},
	}
	export.Flags().StringVar(&csvPath, "csv", "", "CSV file to write (a study's results store)")
	export.Flags().StringVar(&hammerdbPath, "hammerdb", "", "HammerDB job reports to write: a file for a run's JSON, a directory for a study's steps (docs/hammerdb-results.md)")
	c.AddCommand(list, show, export)
	return c
}

// exportCSV writes a store's steps as CSV rows to path (results export --csv).
func exportCSV(c *cobra.Command, store *study.Store, path string) error {
	f, err := outfile.Target{Path: path, Flag: "--csv", Kind: study.ExportKind}.Create()
	if err != nil {
		return err
	}
	unreadable, err := study.ExportCSV(f, store)
	if err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	for _, u := range unreadable {
		fmt.Fprintf(c.OutOrStdout(), "note: step %d is not exported: %s\n", u.Seq, u)
	}
	fmt.Fprintf(c.OutOrStdout(), "written to %s\n", path)
	return nil
}

func quickCmd() *cobra.Command {
	var q study.Quick
	var lo live.Options
	c := &cobra.Command{
		Use:   "quick",
		Short: "A small study in a few minutes: build, short user sweep, a storage profile, one backup/restore",
		Long: `Run a small study on --path: a managed PostgreSQL with one warehouse, users 1, 2
and 4, a short fio profile when fio is installed and one backup/restore cycle, then
print where the results are and write PATH/report.html. PATH's parent must exist (a
missing one is most often a disk not mounted); quick says which filesystem and disk
PATH is on before measuring. Without PostgreSQL's server binaries the database is the
embedded SQLite, a file in PATH/sqlite (users 1, 2, 4 in sql mode, its best), and the
fio profile runs beside the study (PATH/storage.json); a STORBENCH_PG_BINDIR without
them is an error. Each quick starts afresh, removing only what the last one wrote
(anything else in PATH/results/steps or PATH/sqlite is kept and named): Ctrl-C keeps
nothing to resume. Each user
step measures a --duration window (30s by default: over a shorter one the database's
counters lag, and the report's findings name no winner).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			abs, err := filepath.Abs(q.Path)
			if err != nil {
				return err
			}
			reportFile := report.File(filepath.Join(abs, "report.html"), "--path")
			// The endpoint's address is checked before Prepare clears the last quick's files.
			srv, err := listen(c, lo)
			if err != nil {
				return err
			}
			defer srv.Close()
			r, err := q.Prepare(c.OutOrStdout(), reportFile)
			if err != nil {
				return err
			}
			// Each quick run measures afresh into the same store.
			sources := []string{r.Results}
			err = runStudy(c, r.Study, r.File, r.Results, true, srv)
			// A failed profile after a measured study still gets the study's report.
			var profileErr error
			if err == nil {
				var runs *fio.Runs
				if runs, profileErr = r.Profile(c.Context(), c.OutOrStdout(), version); runs != nil {
					if profileErr = writeJSON(c, r.Storage, runs); profileErr == nil {
						sources = append(sources, r.Storage.Path)
					}
				}
			}
			if err == nil && profileErr != nil && c.Context().Err() != nil {
				err = profileErr
			}
			if err != nil && c.Context().Err() != nil {
				return r.Interrupted()
			}
			if err != nil {
				return err
			}
			if err := makeReport(c, sources, report.Options{Version: version}, reportFile); err != nil {
				return err
			}
			if profileErr != nil {
				return fmt.Errorf("the storage profile failed, so the report has none: %w", profileErr)
			}
			return nil
		},
	}
	q.AddFlags(c.Flags())
	lo.AddFlags(c.Flags())
	return c
}
