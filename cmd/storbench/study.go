package main

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/blockdev"
	"github.com/storbench/storbench/internal/bytesize"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/engine/sqlite"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/metrics"
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
			return runStudy(c, s, file, dir, restart)
		},
	}
	c.Flags().StringVar(&results, "results", "", "results store directory (default results/NAME)")
	c.Flags().BoolVar(&restart, "restart", false, "clear the stored steps and run the study from the start")
	return c
}

// runStudy runs a study with a live view. The driver gets one CPU, as run's default:
// on a box shared with the database more only costs the server CPU.
func runStudy(c *cobra.Command, s *study.Study, file []byte, results string, restart bool) error {
	runtime.GOMAXPROCS(1)
	out := c.OutOrStdout()
	p := newProgress(out)
	opts := study.Options{Version: version, Restart: restart, Log: lineWriter{p}, Progress: func(sp study.Progress) {
		t := sp.Tick
		p.line(fmt.Sprintf("step %d/%d %s: users %d, %s %s, TPM %.0f, NOPM %.0f (client, last second), ~%s left",
			sp.Step.Seq, sp.Of, sp.Step.Target, sp.Step.Users, t.Elapsed.Round(time.Second), t.Phase, t.TPM, t.NOPM,
			sp.Remaining.Round(time.Second)), 10*time.Second)
	}}
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
		Short: "Read a study's results store: list, show, export --csv",
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
	var csvPath string
	export := &cobra.Command{
		Use:   "export RESULTS_DIR --csv FILE",
		Short: "One CSV row per stored step (per fio point), for spreadsheets",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if csvPath == "" {
				return fmt.Errorf("%w: --csv FILE is required", input.ErrInvalid)
			}
			store, err := study.ReadStore(args[0])
			if err != nil {
				return err
			}
			f, err := outfile.Target{Path: csvPath, Flag: "--csv", Kind: study.ExportKind}.Create()
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
			fmt.Fprintf(c.OutOrStdout(), "written to %s\n", csvPath)
			return nil
		},
	}
	export.Flags().StringVar(&csvPath, "csv", "", "CSV file to write")
	c.AddCommand(list, show, export)
	return c
}

// quickMarker marks the directory quick keeps its SQLite database in.
const quickMarker = ".storbench-quick"

// quickDatabase is the file of quick's SQLite database in its own directory.
const quickDatabase = "tpcc.db"

// freshQuickDir removes from quick's own database directory (one it marked) the
// database an earlier quick left, its file and the files SQLite makes beside it
// (sqlite.Files: tpcc.db-wal, -shm, -journal), or creates the directory; it returns
// what else is there, kept (a user's tpcc.db-backup too). A directory that is there
// without the mark is not quick's and is left alone.
func freshQuickDir(dir string) (kept []string, err error) {
	entries, err := os.ReadDir(dir)
	switch {
	case os.IsNotExist(err):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("%w: --path: %v", input.ErrInvalid, err)
		}
		return nil, os.WriteFile(filepath.Join(dir, quickMarker), nil, 0o644)
	case err != nil:
		return nil, fmt.Errorf("%w: --path: %v", input.ErrInvalid, err)
	}
	if _, err := os.Stat(filepath.Join(dir, quickMarker)); err != nil {
		if len(entries) > 0 {
			return nil, fmt.Errorf("%w: %s is not empty and not quick's: give another --path", input.ErrInvalid, dir)
		}
		return nil, os.WriteFile(filepath.Join(dir, quickMarker), nil, 0o644)
	}
	database := sqlite.Files(quickDatabase)
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == quickMarker:
		case e.Type().IsRegular() && slices.Contains(database, name):
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return nil, err
			}
		default:
			kept = append(kept, name)
		}
	}
	return kept, nil
}

// quickProfile is the storage profile quick runs when fio is installed: a step of
// its study on PostgreSQL; on SQLite, beside the study (which tests only the
// directories of the servers it manages).
type quickProfile struct {
	Name, Size string
	Runtime    time.Duration
}

var theQuickProfile = quickProfile{Name: "hcibench-4k-70r", Size: "64MB", Runtime: 3 * time.Second}

// runQuickProfile runs quick's storage profile in dir and writes its result to out,
// for the report.
func runQuickProfile(c *cobra.Command, dir string, out outfile.Target) error {
	profiles, err := fio.Lookup([]string{theQuickProfile.Name}, false)
	if err != nil {
		return err
	}
	size, err := bytesize.Parse(theQuickProfile.Size)
	if err != nil {
		return err
	}
	results, err := fio.Run(c.Context(), profiles, fio.Options{Dir: dir, Size: size, Runtime: theQuickProfile.Runtime,
		Progress: func(profile string, done, of int, p *fio.Point) {
			fmt.Fprintf(c.OutOrStdout(), "  %s %d/%d %s: %.0f IOPS, %.1f MB/s\n", profile, done, of, p.Name, p.IOPS, p.MBps)
		}})
	if err != nil {
		return err
	}
	return writeJSON(c, out, &fio.Runs{StorbenchVersion: version, Results: results})
}

// quickPath makes quick's --path absolute and creates it when its parent exists (as
// instance create does: a missing parent is most often a disk not mounted), then says
// which filesystem and disk it is on, before anything is measured there.
func quickPath(c *cobra.Command, dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%w: --path: %v", input.ErrInvalid, err)
	}
	if err := instance.CheckParent(abs); err != nil {
		return "", fmt.Errorf("--path %s: %w", abs, err)
	}
	if err := os.Mkdir(abs, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("%w: --path: %v", input.ErrInvalid, err)
	}
	p, err := blockdev.NewResolver().Resolve(abs, blockdev.RolePath)
	if err != nil {
		return "", err
	}
	where := fmt.Sprintf("%s is on %s %s mounted at %s", abs, p.FSType, p.Source, p.Mount)
	if p.Chain != "" { // a tmpfs has no disk
		where += " (disk: " + p.Chain + ")"
	}
	if p.Note != "" {
		where += "; " + p.Note
	}
	fmt.Fprintln(c.OutOrStdout(), where)
	return abs, nil
}

//go:embed quick.yaml
var quickStudy string

var quickTemplate = template.Must(template.New("quick.yaml").Parse(quickStudy))

// quickStudyFile is quick's study file for path; its sweep measures over window
// (by default the report's CounterWindow, the shortest it names a winner by).
func quickStudyFile(path string, fio, sqlite bool, window time.Duration, waitRate float64) ([]byte, error) {
	var file bytes.Buffer
	err := quickTemplate.Execute(&file, struct {
		Path, Database string
		Fio, SQLite    bool
		Profile        quickProfile
		Window         time.Duration
		WaitRate       float64
	}{path, quickDatabase, fio, sqlite, theQuickProfile, window, waitRate})
	return file.Bytes(), err
}

func quickCmd() *cobra.Command {
	var dir string
	var window time.Duration
	var waitRate float64
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
			// Only PostgreSQL's absence falls back to SQLite; a STORBENCH_PG_BINDIR that
			// does not work is the user's to fix.
			pgErr := instance.Installed("postgres")
			if errors.Is(pgErr, input.ErrInvalid) {
				return pgErr
			}
			if err := errors.Join(driver.CheckDuration(window), metrics.CheckWaitRate(waitRate)); err != nil {
				return err
			}
			abs, err := quickPath(c, dir)
			if err != nil {
				return err
			}
			_, fioErr := fio.FindFio()
			file, err := quickStudyFile(abs, fioErr == nil, pgErr != nil, window, waitRate)
			if err != nil {
				return err
			}
			s, err := study.Parse("quick.yaml", file)
			if err != nil {
				return err
			}
			// What quick would refuse at the end, after measuring, it refuses now.
			results := filepath.Join(abs, "results")
			if err := study.CheckStore(results, s); err != nil {
				return fmt.Errorf("%w: give another --path", err)
			}
			reportFile := report.File(filepath.Join(abs, "report.html"), "--path")
			outputs := []outfile.Target{reportFile}
			// On SQLite the storage profile runs beside the study, into PATH/storage.json.
			storage := outfile.Target{Path: filepath.Join(abs, "storage.json"), Flag: "--path", Kind: outfile.JSON}
			if pgErr != nil && fioErr == nil {
				outputs = append(outputs, storage)
			}
			for _, f := range outputs {
				if err := f.Check(); err != nil {
					return err
				}
			}
			profile := map[bool]string{true: ", fio profile " + theQuickProfile.Name, false: ", no fio installed: no storage profile"}[fioErr == nil]
			if pgErr != nil {
				// The embedded engine's file is made afresh in a directory of quick's own.
				kept, err := freshQuickDir(filepath.Join(abs, "sqlite"))
				if err != nil {
					return err
				}
				if len(kept) > 0 {
					fmt.Fprintf(c.OutOrStdout(), "kept in %s: %s (not quick's)\n", filepath.Join(abs, "sqlite"), strings.Join(kept, ", "))
				}
				fmt.Fprintf(c.OutOrStdout(), "quick study on %s: embedded SQLite (no PostgreSQL server binaries: %v)%s\n", abs, pgErr, profile)
			} else {
				fmt.Fprintf(c.OutOrStdout(), "quick study on %s: managed PostgreSQL (server binaries found)%s\n", abs, profile)
			}
			// Each quick run measures afresh into the same store.
			sources := []string{results}
			err = runStudy(c, s, file, results, true)
			// A failed profile after a measured study still gets the study's report.
			var profileErr error
			if err == nil && pgErr != nil && fioErr == nil {
				if profileErr = runQuickProfile(c, filepath.Join(abs, "sqlite"), storage); profileErr == nil {
					sources = append(sources, storage.Path)
				}
			}
			if err == nil && profileErr != nil && c.Context().Err() != nil {
				err = profileErr
			}
			if err != nil && c.Context().Err() != nil {
				// The study's own message offers a resume quick does not do.
				msg := fmt.Sprintf("quick interrupted: the steps measured so far are in %s; the next storbench quick starts afresh (it does not resume)", results)
				if pgErr == nil {
					msg += fmt.Sprintf(", and storbench study clean %s removes the PostgreSQL data it left in %s", results, filepath.Join(abs, "pg"))
				}
				return errors.New(msg)
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
	c.Flags().DurationVar(&window, "duration", driver.CounterWindow, "timed window of each user step (under 30s the report's findings name no winner)")
	c.Flags().Float64Var(&waitRate, "wait-rate", metrics.DefaultWaitRate, "times a second the database's sessions are read for their wait events (0: off)")
	c.Flags().StringVar(&dir, "path", "storbench-quick", "directory on the storage to test, made if its parent exists: the database goes to PATH/pg (SQLite: PATH/sqlite), results to PATH/results")
	return c
}
