package study

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/durable"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/infile"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/metrics"
)

// Store is a study's results directory: plain files written as results come in, so
// it can be read (and copied) while the study runs.
//
//	study.yaml         the study file as run
//	plan.json          every step, in order
//	environment.json   the machine and each target's storage and database
//	steps/NNNN.json    one file per finished step, written whole (rename)
//	base/TARGET/       each managed target's base image (a physical backup)
//	instances/         the study's own instance registry
//	scratch/           backups of backup-restore cycles, removed after each
type Store struct {
	Dir  string
	lock *os.File // held while a study runs into the store
	// study is the name of the study running into the store (OpenStore).
	study string
}

// storeMarker marks a directory as a study's results store: --restart only ever
// clears a directory that carries it.
const storeMarker = ".storbench-study"

// The kinds of file a store holds, each read only as a regular file (no link
// followed) within its bound (docs/study.md). A step file holds the step's timeline
// and system samples; plan.json is ~300 bytes a step, environment.json a few
// kilobytes a target.
var (
	stepKind   = infile.Kind{What: "step file", Limit: infile.MeasuredLimit}
	recordKind = infile.Kind{What: "store file", Limit: 64 << 20}
	markerKind = infile.Kind{What: "store marker", Limit: 4 << 10}
)

// StepResult is one finished step.
type StepResult struct {
	Step    Step      `json:"step"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	// RestoreSeconds is the time the step spent restoring the base image first (a
	// capacity search: before all its probes).
	RestoreSeconds float64 `json:"restore_s,omitempty"`
	// One of these, by the step's kind.
	Run     *driver.Result `json:"run,omitempty"`
	Fio     []fio.Result   `json:"fio,omitempty"`
	Backup  *Transfer      `json:"backup,omitempty"`
	Restore *Transfer      `json:"restore,omitempty"`
	// Consolidation is a consolidation step's instances, disks and backups.
	Consolidation *ConsolidationRun `json:"consolidation,omitempty"`
	// Capacity is a capacity step's search: every probe and what it found.
	Capacity *CapacityRun `json:"capacity,omitempty"`
	// Checks are the consistency conditions verified on the database after a run.
	Checks []CheckResult `json:"checks,omitempty"`
	// Memory and CPUs are the managed instance's memory and CPU set for the step (the
	// target's own, or the step's variant's), as it was started with them; how far
	// each was applied, Notes say ("instance limits: …").
	Memory int64  `json:"memory_bytes,omitempty"`
	CPUs   string `json:"cpus,omitempty"`
	// IOThrottle is how the managed instance's I/O limit was in force for the step.
	IOThrottle *instance.IOThrottle `json:"io_throttle,omitempty"`
	Notes      []string             `json:"notes,omitempty"`
	// Error is why a failed step failed (failed steps are stored apart from the
	// done ones, with what they measured before failing).
	Error string `json:"error,omitempty"`
}

// CheckResult is one consistency condition of 3.3.2 as verified after a step.
type CheckResult struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Violations int64   `json:"violations"`
	Error      string  `json:"error,omitempty"`
	Seconds    float64 `json:"seconds"`
}

// Transfer is a timed backup or restore with what the disks did meanwhile.
type Transfer struct {
	instance.Transfer
	System *metrics.Report `json:"system,omitempty"`
}

// OpenStore opens or creates the store in dir for a study file. A directory that
// exists must be a store of the same study file (or empty): results never mix, and a
// study file changed since is refused unless restart, which clears the stored steps.
// What it mends on the way (a marker a crash left empty, step files that do not read,
// set aside to run again) and what --restart keeps, it says on log, a line each.
func OpenStore(dir string, s *Study, file []byte, restart bool, log io.Writer) (*Store, error) {
	// Every path the study hands on (base images, backups, the registry) is made
	// from the store's: absolute once here, whatever directory storbench runs in.
	dir, err := ResultsDir(s, dir)
	if err != nil {
		return nil, err
	}
	st := &Store{Dir: dir, study: s.Name}
	repaired, err := checkStore(dir, s)
	if err != nil {
		return nil, fmt.Errorf("%w: give another --results directory", err)
	}
	entries, err := os.ReadDir(dir)
	switch {
	case os.IsNotExist(err):
		if err := durable.MkdirAll(dir); err != nil {
			return nil, fmt.Errorf("%w: results directory %s: %v", input.ErrInvalid, dir, err)
		}
	case err != nil:
		return nil, fmt.Errorf("%w: results directory %s: %v", input.ErrInvalid, dir, err)
	case len(entries) > 0 && !restart:
		if err := st.sameStudyFile(file); err != nil {
			return nil, err
		}
	}
	if err := st.writeFile(storeMarker, []byte(s.Name+"\n")); err != nil {
		return nil, err
	}
	if repaired != "" {
		fmt.Fprintf(log, "the store's marker %s was %s: written again (study %s)\n", storeMarker, repaired, s.Name)
	}
	// Two runs into one store would restore base images under each other's steps.
	if err := st.Lock(); err != nil {
		return nil, err
	}
	if err := st.prepare(restart, file, log); err != nil {
		st.Unlock()
		return nil, err
	}
	return st, nil
}

// prepare readies a locked store for a run: the steps cleared on restart, its
// directories made, the unreadable step files set aside, the study file stored.
func (s *Store) prepare(restart bool, file []byte, log io.Writer) error {
	if restart {
		kept, setAside, err := s.ClearSteps()
		if err != nil {
			return err
		}
		if len(setAside) > 0 {
			fmt.Fprintf(log, "kept in %s: %s (step files that did not read, which a study run set aside to run their steps again)\n", s.path("steps"), strings.Join(setAside, ", "))
		}
		if len(kept) > 0 {
			fmt.Fprintf(log, "kept in %s: %s (not step files of storbench's)\n", s.path("steps"), strings.Join(kept, ", "))
		}
	}
	for _, sub := range []string{"steps", "base", "instances", "scratch"} {
		if err := durable.MkdirAll(s.path(sub)); err != nil {
			return err
		}
	}
	if err := s.setAside(log); err != nil {
		return err
	}
	return s.writeFile("study.yaml", file)
}

// sameStudyFile refuses to add to a store the results of a study file other than
// the one stored, byte for byte: a file with lines added at its end (a ramp-up under
// the last experiment, a metrics block) keeps its step IDs but not what they measure.
// A stored copy a crash cut short (an older storbench, which did not sync it) is
// refused all the same: which settings its steps ran under is unknown.
func (s *Store) sameStudyFile(file []byte) error {
	stored, err := studyKind.ReadIn(s.Dir, "study.yaml")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%w: give another --results directory", err)
	case bytes.Equal(stored, file):
		return nil
	}
	return fmt.Errorf("%w: the study file changed since %s was stored: run it with --restart (stored steps are cleared) or give another --results directory", input.ErrInvalid, s.Dir)
}

// CheckStore tells whether dir may take the results of study s: a new or empty
// directory, or a store of that study (results never mix). A command that prepares
// more than the store first (quick) checks before; its error says what is wrong, the
// caller how to give another directory.
func CheckStore(dir string, s *Study) error {
	_, err := checkStore(dir, s)
	return err
}

// checkStore is CheckStore; repaired says how the store's marker was found ("empty",
// "torn") when its study's name had to be read from the stored study file instead.
func checkStore(dir string, s *Study) (repaired string, err error) {
	entries, err := os.ReadDir(dir)
	switch {
	case os.IsNotExist(err) || (err == nil && len(entries) == 0):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("%w: results directory %s: %v", input.ErrInvalid, dir, err)
	}
	name, repaired, err := storedName(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: %s is not empty and not a storbench results store", input.ErrInvalid, dir)
	}
	if err != nil {
		return "", err
	}
	if name != s.Name {
		return "", fmt.Errorf("%w: %s holds the results of study %q, not %q", input.ErrInvalid, dir, name, s.Name)
	}
	return repaired, nil
}

// storedName is the name of the study whose results are in dir, from its marker
// (its error is fs.ErrNotExist without one). storbench writes the marker whole with
// a newline; one a crash left empty or torn is read again from the stored study
// file, and repaired says which it was.
func storedName(dir string) (name, repaired string, err error) {
	b, err := markerKind.ReadIn(dir, storeMarker)
	if err != nil {
		return "", "", err
	}
	if name, ok := strings.CutSuffix(string(b), "\n"); ok && studyNameRE.MatchString(name) {
		return name, "", nil
	}
	repaired = "torn"
	if len(b) == 0 {
		repaired = "empty"
	}
	var named struct {
		Name string `yaml:"name"`
	}
	if file, err := studyKind.ReadIn(dir, "study.yaml"); err == nil && yaml.Unmarshal(file, &named) == nil && studyNameRE.MatchString(named.Name) {
		return named.Name, repaired, nil
	}
	return "", "", fmt.Errorf("%w: %s: its marker %s is %s and its study.yaml names no study, so which study's results it holds is unknown: write the study's name into %s, or give another directory",
		input.ErrInvalid, dir, storeMarker, repaired, filepath.Join(dir, storeMarker))
}

// ResultsDir is the absolute directory of a study's results store: dir, or
// results/NAME when dir is empty, from the working directory.
func ResultsDir(s *Study, dir string) (string, error) {
	if dir == "" {
		dir = filepath.Join("results", s.Name)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%w: results directory %s: %v", input.ErrInvalid, dir, err)
	}
	return abs, nil
}

// Lock takes the store for this process: a study run, or its cleaning, while no
// other runs into it.
func (s *Store) Lock() error {
	lock, err := os.OpenFile(s.path(".lock"), os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		return fmt.Errorf("%w: another storbench study run is using %s", input.ErrInvalid, s.Dir)
	}
	s.lock = lock
	return nil
}

// Unlock releases the store for another run.
func (s *Store) Unlock() {
	if s.lock != nil {
		s.lock.Close()
		s.lock = nil
	}
}

// Environment reads the stored environment record.
func (s *Store) Environment() (*Environment, error) {
	var env Environment
	if err := recordKind.DecodeJSONIn(s.Dir, "environment.json", &env); err != nil {
		return nil, err
	}
	return &env, nil
}

// ReadStore opens an existing store for reading.
func ReadStore(dir string) (*Store, error) {
	name, _, err := storedName(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s is not a storbench results store (no %s)", input.ErrInvalid, dir, storeMarker)
	}
	if err != nil {
		return nil, err
	}
	return &Store{Dir: dir, study: name}, nil
}

// Name is the name of the study whose results the store holds.
func (s *Store) Name() string { return s.study }

// StudyFile is the study file as run.
func (s *Store) StudyFile() ([]byte, error) { return studyKind.ReadIn(s.Dir, "study.yaml") }

func (s *Store) path(parts ...string) string {
	return filepath.Join(append([]string{s.Dir}, parts...)...)
}

// writeFile writes a file whole and durably before it returns (durable.WriteFile): a
// reader sees the old or the new content, never half, and a crash after it returned
// keeps the file as written.
func (s *Store) writeFile(name string, data []byte) error {
	path := s.path(name)
	if err := durable.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("storing %s: %w", path, err)
	}
	return nil
}

func (s *Store) writeJSON(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return s.writeFile(name, append(b, '\n'))
}

// Registry is the study's own instance registry, so its instances never collide with
// the user's; what no instance command reaches, study clean --force destroys.
func (s *Store) Registry() instance.Registry {
	return instance.Registry{Dir: s.path("instances"), Forcing: "storbench study clean --force " + s.Dir}
}

// linkRegistry links the study's registry into the default one while it holds
// instances, so that storbench instance list shows them with their study.
func (s *Store) linkRegistry() error {
	home, err := instance.DefaultRegistry()
	if err != nil {
		return err
	}
	return home.Link(s.Registry(), s.study)
}

// unlinkRegistry removes the link once the study's instances are all destroyed.
func (s *Store) unlinkRegistry() error {
	home, err := instance.DefaultRegistry()
	if err != nil {
		return nil // then nothing was linked either
	}
	return home.Unlink(s.Registry())
}

// BaseDir is where a managed target's base image lives.
func (s *Store) BaseDir(target string) string { return s.path("base", target) }

// ScratchDir is a directory for a backup-restore cycle's backup.
func (s *Store) ScratchDir(name string) string { return s.path("scratch", name) }

func stepFile(seq int) string { return filepath.Join("steps", fmt.Sprintf("%04d.json", seq)) }

// SaveStep stores a finished step; a failure of it stored earlier is removed.
func (s *Store) SaveStep(r *StepResult) error {
	if err := s.writeJSON(stepFile(r.Step.Seq), r); err != nil {
		return err
	}
	if err := os.Remove(s.path(failedFile(r.Step.Seq))); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// SaveInterrupted keeps what an interrupted step measured, apart from the finished
// steps: the step still counts as not done, and a resumed study runs it again.
func (s *Store) SaveInterrupted(r *StepResult) error {
	return s.writeJSON(strings.TrimSuffix(stepFile(r.Step.Seq), ".json")+"-interrupted.json", r)
}

func failedFile(seq int) string { return strings.TrimSuffix(stepFile(seq), ".json") + "-failed.json" }

// SaveFailed keeps a failed step, its error and what it measured, apart from the
// finished steps: a resumed study runs it again.
func (s *Store) SaveFailed(r *StepResult) error { return s.writeJSON(failedFile(r.Step.Seq), r) }

var (
	failedName      = regexp.MustCompile(`^\d{4}-failed\.json$`)
	interruptedName = regexp.MustCompile(`^\d{4}-interrupted\.json$`)
)

// Failed reads the failed steps that have not succeeded since, in plan order. A
// file that does not read is skipped: it only ever adds to a report.
func (s *Store) Failed() []StepResult {
	return s.keptApart(failedName, func(r *StepResult) bool { return r.Error != "" })
}

// Interrupted reads what the interrupted steps measured before the interruption,
// in plan order; a step stored since is left out.
func (s *Store) Interrupted() []StepResult {
	done, _ := s.Done()
	return s.keptApart(interruptedName, func(r *StepResult) bool { return r.Run != nil && !done[r.Step.ID] })
}

// keptApart reads the step files kept apart from the finished steps whose names
// match name, and that keep says to keep.
func (s *Store) keptApart(name *regexp.Regexp, keep func(*StepResult) bool) []StepResult {
	entries, _ := os.ReadDir(s.path("steps"))
	var out []StepResult
	for _, e := range entries {
		if !name.MatchString(e.Name()) {
			continue
		}
		var r StepResult
		if stepKind.DecodeJSONIn(s.Dir, filepath.Join("steps", e.Name()), &r) == nil && keep(&r) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Step.Seq < out[j].Step.Seq })
	return out
}

// Done returns the IDs of the stored steps.
func (s *Store) Done() (map[string]bool, error) {
	results, err := s.Steps()
	if err != nil {
		return nil, err
	}
	done := map[string]bool{}
	for _, r := range results {
		done[r.Step.ID] = true
	}
	return done, nil
}

var stepName = regexp.MustCompile(`^\d{4}\.json$`)

// Unreadable is a step file that does not read as its step: emptied or cut short by
// a crash, a link, not a regular file, beyond its bound. Its step counts as not
// stored; a resumed study sets the file aside and runs the step again.
type Unreadable struct {
	Seq     int
	File    string // in the store: steps/0001.json
	Problem string // worded to follow the file: "is torn (its JSON ends early)"
}

func (u Unreadable) String() string { return u.File + " " + u.Problem }

// Steps reads every stored step, in plan order; a step file that does not read as
// its step is left out (ReadSteps names it).
func (s *Store) Steps() ([]StepResult, error) {
	steps, _, err := s.ReadSteps()
	return steps, err
}

// ReadSteps reads every stored step, in plan order. A step file that does not read
// as its step is left out and named in bad, so that one torn file costs its step,
// not the store.
func (s *Store) ReadSteps() (steps []StepResult, bad []Unreadable, err error) {
	entries, err := os.ReadDir(s.path("steps"))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: results store %s: %v", input.ErrInvalid, s.Dir, err)
	}
	for _, e := range entries {
		if !stepName.MatchString(e.Name()) {
			continue
		}
		name := filepath.Join("steps", e.Name())
		seq, _ := strconv.Atoi(strings.TrimSuffix(e.Name(), ".json"))
		var r StepResult
		err := stepKind.DecodeJSONIn(s.Dir, name, &r)
		var ie *infile.Error
		switch {
		case errors.As(err, &ie):
			bad = append(bad, Unreadable{Seq: seq, File: name, Problem: ie.Problem()})
		case err != nil:
			return nil, nil, err
		case r.Step.Seq != seq || r.Step.ID == "":
			bad = append(bad, Unreadable{Seq: seq, File: name, Problem: fmt.Sprintf("is not a stored step: it holds step %d %q, not step %d", r.Step.Seq, r.Step.ID, seq)})
		default:
			steps = append(steps, r)
		}
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i].Step.Seq < steps[j].Step.Seq })
	return steps, bad, nil
}

// unreadableSuffix is what setAside adds to the name of a step file that does not
// read: NAME.unreadable, NAME.unreadable.2, …
const unreadableSuffix = ".unreadable"

// setAside moves each unreadable step file out of its step's way, to NAME.unreadable
// (NAME.unreadable.2, … when taken), and says so: the step runs again, and the file
// is kept for whoever wants to see what the crash left, never removed.
func (s *Store) setAside(log io.Writer) error {
	_, bad, err := s.ReadSteps()
	if err != nil || len(bad) == 0 {
		return err
	}
	for _, u := range bad {
		to := u.File + unreadableSuffix
		for n := 2; ; n++ {
			if _, err := os.Lstat(s.path(to)); errors.Is(err, fs.ErrNotExist) {
				break
			}
			to = fmt.Sprintf("%s%s.%d", u.File, unreadableSuffix, n)
		}
		if err := os.Rename(s.path(u.File), s.path(to)); err != nil {
			return err
		}
		fmt.Fprintf(log, "step %d: %s: moved to %s; the step runs again\n", u.Seq, u, to)
	}
	return durable.SyncDir(s.path("steps"))
}

// Plan reads the stored plan.
func (s *Store) Plan() ([]Step, error) {
	var steps []Step
	if err := recordKind.DecodeJSONIn(s.Dir, "plan.json", &steps); err != nil {
		return nil, fmt.Errorf("%w (study run writes it again)", err)
	}
	return steps, nil
}

// ownStepFile tells whether name is one that storbench gives the files of steps/: a
// stored, failed or interrupted step, or the temporary file one is written through.
func ownStepFile(name string) bool {
	name = strings.TrimSuffix(name, durable.TempSuffix)
	return stepName.MatchString(name) || failedName.MatchString(name) || interruptedName.MatchString(name)
}

// setAsideStep tells whether name is one that setAside gives a step file that did
// not read.
func setAsideStep(name string) bool {
	stored, n, ok := strings.Cut(name, unreadableSuffix)
	if n != "" {
		_, err := strconv.Atoi(strings.TrimPrefix(n, "."))
		ok = ok && n[0] == '.' && err == nil
	}
	return ok && stepName.MatchString(stored)
}

// ClearSteps removes the stored steps (for --restart): the regular files of
// storbench's own names in steps/, nothing else. The step files an earlier run set
// aside as unreadable are kept (setAside), as is whatever else is there (kept: a
// user's notes); both are named. The base images stay, so a restarted study does
// not build again.
func (s *Store) ClearSteps() (kept, setAside []string, err error) {
	entries, err := os.ReadDir(s.path("steps"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		switch {
		case e.Type().IsRegular() && ownStepFile(e.Name()):
			if err := os.Remove(s.path("steps", e.Name())); err != nil {
				return nil, nil, err
			}
		case setAsideStep(e.Name()):
			setAside = append(setAside, e.Name())
		default:
			kept = append(kept, e.Name())
		}
	}
	return kept, setAside, durable.SyncDir(s.path("steps"))
}
