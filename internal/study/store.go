package study

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/fio"
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

// StepResult is one finished step.
type StepResult struct {
	Step    Step      `json:"step"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	// RestoreSeconds is the time the step spent restoring the base image first.
	RestoreSeconds float64 `json:"restore_s,omitempty"`
	// One of these, by the step's kind.
	Run     *driver.Result `json:"run,omitempty"`
	Fio     []fio.Result   `json:"fio,omitempty"`
	Backup  *Transfer      `json:"backup,omitempty"`
	Restore *Transfer      `json:"restore,omitempty"`
	// Consolidation is a consolidation step's instances, disks and backups.
	Consolidation *ConsolidationRun `json:"consolidation,omitempty"`
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
func OpenStore(dir string, s *Study, file []byte, restart bool) (*Store, error) {
	// Every path the study hands on (base images, backups, the registry) is made
	// from the store's: absolute once here, whatever directory storbench runs in.
	dir, err := ResultsDir(s, dir)
	if err != nil {
		return nil, err
	}
	st := &Store{Dir: dir, study: s.Name}
	if err := CheckStore(dir, s); err != nil {
		return nil, fmt.Errorf("%w: give another --results directory", err)
	}
	entries, err := os.ReadDir(dir)
	switch {
	case os.IsNotExist(err):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("%w: results directory %s: %v", input.ErrInvalid, dir, err)
		}
	case err != nil:
		return nil, fmt.Errorf("%w: results directory %s: %v", input.ErrInvalid, dir, err)
	case len(entries) > 0:
		stored, _ := os.ReadFile(st.path("study.yaml"))
		if !restart && !bytes.Equal(stored, file) {
			return nil, fmt.Errorf("%w: the study file changed since %s was stored: run it with --restart (stored steps are cleared) or give another --results directory", input.ErrInvalid, dir)
		}
	}
	if err := st.writeFile(storeMarker, []byte(s.Name+"\n")); err != nil {
		return nil, err
	}
	// Two runs into one store would restore base images under each other's steps.
	if err := st.Lock(); err != nil {
		return nil, err
	}
	if restart {
		if err := st.ClearSteps(); err != nil {
			st.Unlock()
			return nil, err
		}
	}
	for _, sub := range []string{"steps", "base", "instances", "scratch"} {
		if err := os.MkdirAll(st.path(sub), 0o755); err != nil {
			st.Unlock()
			return nil, err
		}
	}
	if err := st.writeFile("study.yaml", file); err != nil {
		st.Unlock()
		return nil, err
	}
	return st, nil
}

// CheckStore tells whether dir may take the results of study s: a new or empty
// directory, or a store of that study (results never mix). A command that prepares
// more than the store first (quick) checks before; its error says what is wrong, the
// caller how to give another directory.
func CheckStore(dir string, s *Study) error {
	entries, err := os.ReadDir(dir)
	switch {
	case os.IsNotExist(err) || (err == nil && len(entries) == 0):
		return nil
	case err != nil:
		return fmt.Errorf("%w: results directory %s: %v", input.ErrInvalid, dir, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, storeMarker))
	if err != nil {
		return fmt.Errorf("%w: %s is not empty and not a storbench results store", input.ErrInvalid, dir)
	}
	if name := strings.TrimSpace(string(b)); name != s.Name {
		return fmt.Errorf("%w: %s holds the results of study %q, not %q", input.ErrInvalid, dir, name, s.Name)
	}
	return nil
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
	lock, err := os.OpenFile(s.path(".lock"), os.O_CREATE|os.O_RDWR, 0o644)
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
	b, err := os.ReadFile(s.path("environment.json"))
	if err != nil {
		return nil, err
	}
	var env Environment
	return &env, json.Unmarshal(b, &env)
}

// ReadStore opens an existing store for reading.
func ReadStore(dir string) (*Store, error) {
	if _, err := os.Stat(filepath.Join(dir, storeMarker)); err != nil {
		return nil, fmt.Errorf("%w: %s is not a storbench results store (no %s)", input.ErrInvalid, dir, storeMarker)
	}
	return &Store{Dir: dir}, nil
}

func (s *Store) path(parts ...string) string {
	return filepath.Join(append([]string{s.Dir}, parts...)...)
}

// writeFile writes a file whole: a reader sees the old or the new content, never half.
func (s *Store) writeFile(name string, data []byte) error {
	tmp := s.path(name + ".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, s.path(name))
}

func (s *Store) writeJSON(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return s.writeFile(name, append(b, '\n'))
}

// Registry is the study's own instance registry, so its instances never collide with
// the user's.
func (s *Store) Registry() instance.Registry { return instance.Registry{Dir: s.path("instances")} }

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
		if b, err := os.ReadFile(s.path("steps", e.Name())); err == nil && json.Unmarshal(b, &r) == nil && keep(&r) {
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

// Steps reads every stored step, in plan order.
func (s *Store) Steps() ([]StepResult, error) {
	entries, err := os.ReadDir(s.path("steps"))
	if err != nil {
		return nil, fmt.Errorf("%w: results store %s: %v", input.ErrInvalid, s.Dir, err)
	}
	var out []StepResult
	for _, e := range entries {
		if !stepName.MatchString(e.Name()) {
			continue
		}
		file := s.path("steps", e.Name())
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", input.ErrInvalid, err)
		}
		var r StepResult
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%w: %s is not a stored step (%v): remove it to run the step again", input.ErrInvalid, file, err)
		}
		if seq, _ := strconv.Atoi(strings.TrimSuffix(e.Name(), ".json")); r.Step.Seq != seq || r.Step.ID == "" {
			return nil, fmt.Errorf("%w: %s is not a stored step (it holds step %d %q, not step %d): remove it to run the step again", input.ErrInvalid, file, r.Step.Seq, r.Step.ID, seq)
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Step.Seq < out[j].Step.Seq })
	return out, nil
}

// Plan reads the stored plan.
func (s *Store) Plan() ([]Step, error) {
	file := s.path("plan.json")
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w: results store %s has no readable plan.json: %v", input.ErrInvalid, s.Dir, err)
	}
	var steps []Step
	if err := json.Unmarshal(b, &steps); err != nil {
		return nil, fmt.Errorf("%w: %s is not a study's plan (%v)", input.ErrInvalid, file, err)
	}
	return steps, nil
}

// ClearSteps removes the stored steps (for --restart); the base images stay, so a
// restarted study does not build again.
func (s *Store) ClearSteps() error {
	if err := os.RemoveAll(s.path("steps")); err != nil {
		return err
	}
	return os.MkdirAll(s.path("steps"), 0o755)
}
