package study

// storbench quick: a small study on one directory, made and checked here so that the
// command line only wires its flags to it and prints.

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/spf13/pflag"

	"github.com/storbench/storbench/internal/blockdev"
	"github.com/storbench/storbench/internal/bytesize"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/engine/sqlite"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/outfile"
)

// Quick is a quick study's settings.
type Quick struct {
	Path     string        // the directory on the storage to test, made if its parent exists
	Window   time.Duration // each user step's timed window
	WaitRate float64       // the sampler's wait readings a second
}

// AddFlags declares quick's flags, with their defaults.
func (q *Quick) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&q.Window, "duration", driver.CounterWindow, "timed window of each user step (under 30s the report's findings name no winner)")
	fs.Float64Var(&q.WaitRate, "wait-rate", metrics.DefaultWaitRate, "times a second the database's sessions are read for their wait events (0: off)")
	fs.StringVar(&q.Path, "path", "storbench-quick", "directory on the storage to test, made if its parent exists: the database goes to PATH/pg (SQLite: PATH/sqlite), results to PATH/results")
}

// QuickRun is a quick study ready to run: its directory placed, its study file
// checked, its outputs free to write.
type QuickRun struct {
	Dir     string // absolute --path
	Study   *Study
	File    []byte // the study file's text
	Results string // the results store
	// NoPostgres is why the database is the embedded SQLite (nil: a managed
	// PostgreSQL), Fio whether fio runs a storage profile.
	NoPostgres error
	Fio        bool
	// Storage is where the storage profile's result goes when it runs beside the
	// study (on SQLite).
	Storage outfile.Target
}

// quickMarker marks the directory quick keeps its SQLite database in.
const quickMarker = ".storbench-quick"

// quickDatabase is the file of quick's SQLite database in its own directory.
const quickDatabase = "tpcc.db"

// quickProfile is the storage profile quick runs when fio is installed: a step of
// its study on PostgreSQL; on SQLite, beside the study (which tests only the
// directories of the servers it manages).
type quickProfile struct {
	Name, Size string
	Runtime    time.Duration
}

var theQuickProfile = quickProfile{Name: "hcibench-4k-70r", Size: "64MB", Runtime: 3 * time.Second}

// Prepare checks the settings and the directory and writes out what quick will do
// (the directory's filesystem and disk, files it keeps, the database), before
// anything is measured. reportPath is refused as the study's store would be.
func (q Quick) Prepare(out io.Writer, outputs ...outfile.Target) (*QuickRun, error) {
	// Only PostgreSQL's absence falls back to SQLite; a STORBENCH_PG_BINDIR that does
	// not work is the user's to fix.
	pgErr := instance.Installed("postgres")
	if errors.Is(pgErr, input.ErrInvalid) {
		return nil, pgErr
	}
	if err := errors.Join(driver.CheckDuration(q.Window), metrics.CheckWaitRate(q.WaitRate)); err != nil {
		return nil, err
	}
	dir, err := placeQuick(out, q.Path)
	if err != nil {
		return nil, err
	}
	_, fioErr := fio.FindFio()
	r := &QuickRun{Dir: dir, Results: filepath.Join(dir, "results"), NoPostgres: pgErr, Fio: fioErr == nil,
		Storage: outfile.Target{Path: filepath.Join(dir, "storage.json"), Flag: "--path", Kind: outfile.JSON}}
	if r.File, err = QuickFile(dir, r.Fio, pgErr != nil, q.Window, q.WaitRate); err != nil {
		return nil, err
	}
	if r.Study, err = Parse("quick.yaml", r.File); err != nil {
		return nil, err
	}
	// What quick would refuse at the end, after measuring, it refuses now.
	if err := CheckStore(r.Results, r.Study); err != nil {
		return nil, input.Errorf("path", "%w: give another {path}", err)
	}
	if r.profileBeside() {
		outputs = append(outputs, r.Storage)
	}
	for _, f := range outputs {
		if err := f.Check(); err != nil {
			return nil, err
		}
	}
	profile := map[bool]string{true: ", fio profile " + theQuickProfile.Name, false: ", no fio installed: no storage profile"}[r.Fio]
	if pgErr == nil {
		fmt.Fprintf(out, "quick study on %s: managed PostgreSQL (server binaries found)%s\n", dir, profile)
		return r, nil
	}
	// The embedded engine's file is made afresh in a directory of quick's own.
	kept, err := freshQuickDir(r.sqliteDir())
	if err != nil {
		return nil, err
	}
	if len(kept) > 0 {
		fmt.Fprintf(out, "kept in %s: %s (not quick's)\n", r.sqliteDir(), strings.Join(kept, ", "))
	}
	fmt.Fprintf(out, "quick study on %s: embedded SQLite (no PostgreSQL server binaries: %v)%s\n", dir, pgErr, profile)
	return r, nil
}

// sqliteDir is where quick's SQLite database lives.
func (r *QuickRun) sqliteDir() string { return filepath.Join(r.Dir, "sqlite") }

// profileBeside tells whether the storage profile runs beside the study (on SQLite,
// whose study manages no server's directories to test).
func (r *QuickRun) profileBeside() bool { return r.NoPostgres != nil && r.Fio }

// Profile runs the storage profile beside the study when it does not run in it (on
// SQLite, with fio), telling out of each point; nil when it does not run.
func (r *QuickRun) Profile(ctx context.Context, out io.Writer, version string) (*fio.Runs, error) {
	if !r.profileBeside() {
		return nil, nil
	}
	profiles, err := fio.Lookup([]string{theQuickProfile.Name}, false)
	if err != nil {
		return nil, err
	}
	size, err := bytesize.Parse(theQuickProfile.Size)
	if err != nil {
		return nil, err
	}
	results, err := fio.Run(ctx, profiles, fio.Options{Dir: r.sqliteDir(), Size: size, Runtime: theQuickProfile.Runtime,
		Progress: func(profile string, done, of int, p *fio.Point) {
			fmt.Fprintf(out, "  %s %d/%d %s: %.0f IOPS, %.1f MB/s\n", profile, done, of, p.Name, p.IOPS, p.MBps)
		}})
	if err != nil {
		return nil, err
	}
	return &fio.Runs{StorbenchVersion: version, Results: results}, nil
}

// Interrupted is quick's own message for an interrupted run: the study's offers a
// resume quick does not do.
func (r *QuickRun) Interrupted() error {
	msg := fmt.Sprintf("quick interrupted: the steps measured so far are in %s; the next storbench quick starts afresh (it does not resume)", r.Results)
	if r.NoPostgres == nil {
		msg += fmt.Sprintf(", and storbench study clean %s removes the PostgreSQL data it left in %s", r.Results, filepath.Join(r.Dir, "pg"))
	}
	return errors.New(msg)
}

// placeQuick makes quick's --path absolute and creates it when its parent exists (as
// instance create does: a missing parent is most often a disk not mounted), then says
// which filesystem and disk it is on, before anything is measured there.
func placeQuick(out io.Writer, dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", input.Errorf("path", "{path}: %w", err)
	}
	if err := instance.CheckParent(abs); err != nil {
		return "", input.Errorf("path", "{path} %s: %w", abs, err)
	}
	if err := os.Mkdir(abs, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", input.Errorf("path", "{path}: %w", err)
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
	fmt.Fprintln(out, where)
	return abs, nil
}

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
			return nil, input.Errorf("path", "{path}: %w", err)
		}
		return nil, os.WriteFile(filepath.Join(dir, quickMarker), nil, 0o644)
	case err != nil:
		return nil, input.Errorf("path", "{path}: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, quickMarker)); err != nil {
		if len(entries) > 0 {
			return nil, input.Errorf("path", "%s is not empty and not quick's: give another {path}", dir)
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

//go:embed quick.yaml
var quickStudy string

var quickTemplate = template.Must(template.New("quick.yaml").Parse(quickStudy))

// QuickFile is quick's study file for path; its sweep measures over window (by
// default the report's CounterWindow, the shortest it names a winner by).
func QuickFile(path string, fio, sqlite bool, window time.Duration, waitRate float64) ([]byte, error) {
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
