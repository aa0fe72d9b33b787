// Package report turns stored results into what the papers end with: charts and
// tables, a headline comparison and a cost model, as one self-contained HTML file
// (Write) or as terminal and Markdown tables (Compare).
package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/hammerdb"
	"github.com/storbench/storbench/internal/infile"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/study"
)

// Source is one input of a report: a study's results store, or one result file
// (a run's or a fio profile's JSON) seen as a study of one step.
type Source struct {
	// Label names the source in series names and tables: the store's directory or
	// the file's name without .json.
	Label string
	Path  string
	// Study is the study's name and StudyFile the study file as run (stores only).
	Study     string
	StudyFile []byte
	Env       *study.Environment
	Plan      []study.Step
	Steps     []study.StepResult
	// Spec is the parsed study file (stores only), for its costs block.
	Spec *study.Study
	// Notes say what of the source the report cannot show, and why.
	Notes []string
}

// Load reads each path as a study's results store or a result file.
func Load(paths []string) ([]*Source, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: give at least one results store or result JSON file", input.ErrInvalid)
	}
	var out []*Source
	labels := map[string]int{}
	for _, p := range paths {
		src, err := loadOne(p)
		if err != nil {
			return nil, err
		}
		labels[src.Label]++
		out = append(out, src)
	}
	// Inputs with one name (a/results, b/results) all get their parent's name too.
	for _, src := range out {
		if labels[src.Label] > 1 {
			src.Label = filepath.Base(filepath.Dir(filepath.Clean(src.Path))) + "/" + src.Label
		}
	}
	return out, nil
}

// qualified names something of one source in a report of several: "label:name".
// A result file's own step is named by its label already.
func qualified(srcs []*Source, src *Source, name string) string {
	if len(srcs) == 1 || name == src.Label {
		return name
	}
	return src.Label + ":" + name
}

// configName names where a step ran: its target, and its experiment too when the
// target ran several experiments of that kind (physical and logical backups, two
// sets of fio profiles), which must not be mixed.
func configName(src *Source, step study.Step) string {
	for i := range src.Steps {
		o := src.Steps[i].Step
		if o.Target == step.Target && o.Kind == step.Kind && o.Experiment != step.Experiment {
			return step.Target + "/" + step.Experiment
		}
	}
	return step.Target
}

func loadOne(path string) (*Source, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: results %s: %v", input.ErrInvalid, path, err)
	}
	if fi.IsDir() {
		return loadStore(path)
	}
	return loadFile(path)
}

func loadStore(dir string) (*Source, error) {
	st, err := study.ReadStore(dir)
	if err != nil {
		return nil, err
	}
	src := &Source{Label: filepath.Base(filepath.Clean(dir)), Path: dir, Study: st.Name()}
	if src.StudyFile, err = st.StudyFile(); err != nil {
		return nil, err
	}
	// Only the study file's text and costs are used here, so a file that no
	// longer parses (a newer storbench's) costs the report its costs, not more.
	if spec, perr := study.Parse(filepath.Join(dir, "study.yaml"), src.StudyFile); perr == nil {
		src.Spec, src.Study = spec, spec.Name
	} else {
		src.Notes = append(src.Notes, fmt.Sprintf("%s: the study file does not parse here, so its costs block is not used: %v", src.Label, perr))
	}
	// Plan and ReadSteps name the bad file and wrap input.ErrInvalid themselves.
	if src.Plan, err = st.Plan(); err != nil {
		return nil, err
	}
	var unreadable []study.Unreadable
	if src.Steps, unreadable, err = st.ReadSteps(); err != nil {
		return nil, err
	}
	for _, u := range unreadable {
		src.Notes = append(src.Notes, fmt.Sprintf("%s: step %d is not shown: %s", src.Label, u.Seq, u))
	}
	for i := range src.Steps {
		judgeStored(src.Steps[i].Run)
	}
	// A store without its environment record (no target prepared yet) has nothing
	// to say; one that does not read is named.
	env, err := st.Environment()
	switch {
	case err == nil:
		src.Env = env
	case !errors.Is(err, fs.ErrNotExist):
		src.Notes = append(src.Notes, fmt.Sprintf("%s: the environment is not shown: %s", src.Label, unreadableProblem(err)))
	}
	if len(src.Steps) < len(src.Plan) {
		src.Notes = append(src.Notes, fmt.Sprintf("%s: %d of the study's %d steps are stored (the study has not finished, or is running): the report shows those",
			src.Label, len(src.Steps), len(src.Plan)))
	}
	for _, f := range st.Failed() {
		src.Notes = append(src.Notes, fmt.Sprintf("%s: step %d %s failed and is not shown: %s", src.Label, f.Step.Seq, f.Step.ID, f.Error))
	}
	return src, nil
}

// unreadableProblem is what is wrong with a store's file, named by its place in the
// store ("environment.json is a symbolic link …").
func unreadableProblem(err error) string {
	var ie *infile.Error
	if errors.As(err, &ie) {
		return filepath.Base(ie.Path) + " " + ie.Problem()
	}
	return err.Error()
}

// resultKind is a result file given to report or compare: a run's JSON holds its
// per-second timeline and samples, as a study's step file does.
var resultKind = infile.Kind{What: "results", Limit: infile.MeasuredLimit}

// loadFile reads a run's JSON (storbench run --json), a fio result (storbench fio
// --json) or a HammerDB job report (a TPROC-C run's, HammerDB's or storbench's),
// telling them apart by their keys.
func loadFile(path string) (*Source, error) {
	b, err := resultKind.Read(path)
	if err != nil {
		return nil, err
	}
	label := strings.TrimSuffix(filepath.Base(path), ".json")
	src := &Source{Label: label, Path: path}
	step := study.Step{Seq: 1, ID: label, Target: label, Experiment: label}
	res := study.StepResult{}
	var keys map[string]json.RawMessage
	switch {
	case json.Unmarshal(b, &keys) != nil:
		return nil, notAResult(path, nil)
	case hammerdb.Is(b):
		run, err := hammerdb.Read(b)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: a HammerDB job report that %v", input.ErrInvalid, path, err)
		}
		judgeStored(run)
		res.Run, res.Started, res.Ended = run, run.Start, run.End
		step.Kind, step.Users, step.Repeat = kindRun, run.Config.Users, 1
		src.Notes = append(src.Notes, fmt.Sprintf("%s: %s", label, strings.Join(run.Notes, "; ")))
	case keys["tpm_db"] != nil:
		var run driver.Result
		if err := json.Unmarshal(b, &run); err != nil {
			return nil, notAResult(path, err)
		}
		judgeStored(&run)
		res.Run, res.Started, res.Ended = &run, run.Start, run.End
		step.Kind, step.Users, step.Repeat = kindRun, run.Config.Users, 1
	case keys["results"] != nil:
		runs, err := fio.ParseRuns(path, b)
		if err != nil {
			return nil, err
		}
		res.Fio = runs.Results
		step.Kind = study.StorageProfiles
	default:
		return nil, notAResult(path, nil)
	}
	if len(res.Fio) > 0 {
		res.Started = res.Fio[0].Started
		step.Profile = res.Fio[0].Profile
	}
	res.Step = step
	src.Plan, src.Steps = []study.Step{step}, []study.StepResult{res}
	return src, nil
}

// judgeStored gives a run stored before storbench judged its window's steadiness
// the verdict its timeline gets by the same rule (driver.Judge).
func judgeStored(run *driver.Result) {
	if run != nil && run.Steadiness == nil && len(run.Timeline) > 0 {
		v := driver.Judge(run.Timeline, run.Config.DurationSeconds)
		run.Steadiness = &v
	}
}

// kindRun is the step kind of a single run given as a JSON file.
const kindRun = "run"

func notAResult(path string, err error) error {
	msg := fmt.Sprintf("%s is neither a study's results store nor a storbench run or fio JSON result", path)
	if err != nil {
		msg += " (" + err.Error() + ")"
	}
	return fmt.Errorf("%w: %s: give the --results directory of a study, or a file written by run --json or fio --json", input.ErrInvalid, msg)
}
