package hammerdb

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/infile"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/outfile"
	"github.com/storbench/storbench/internal/study"
)

// exportMark marks a directory a study's export made: a later export into it
// replaces the reports storbench wrote there, and nothing else.
const exportMark = ".storbench-hammerdb-export"

// runKind is a run's JSON (storbench run --json) as an input.
var runKind = infile.Kind{What: "run result", Limit: infile.MeasuredLimit}

// Written is one report an export wrote.
type Written struct {
	// Step names what it is of: the study step's number and ID, or the run's file.
	Step string
	Path string
}

// Skipped is a step of a study an export did not write, and why.
type Skipped struct {
	Step, Why string
}

// ExportRun writes the run in a run's JSON file (storbench run --json) as one report
// to out (its Path and Flag; a report storbench wrote is all it may replace).
func ExportRun(runFile string, out outfile.Target, version string) (Written, error) {
	b, err := runKind.Read(runFile)
	if err != nil {
		return Written{}, err
	}
	var res driver.Result
	if err := json.Unmarshal(b, &res); err != nil || res.Start.IsZero() {
		return Written{}, fmt.Errorf("%w: %s is not a TPC-C run's result (storbench run --json): give one, or a study's results store", input.ErrInvalid, runFile)
	}
	rep, err := Export(&res, Info{Version: version})
	if err != nil {
		return Written{}, err
	}
	b, err = encode(rep)
	if err != nil {
		return Written{}, fmt.Errorf("%w: %s cannot be written as a job report: it %v", input.ErrInvalid, runFile, err)
	}
	out.Kind = Kind
	return Written{Step: runFile, Path: out.Path}, write(out, b)
}

// ExportStudy writes each TPC-C step of a study's results store (every step with a
// run: sweeps, memory, CPU and I/O variants, replication) as a report in the
// directory out names, each file named by its job ID as HammerDB's results
// repository names them. The directory is made, or must be an export storbench made
// (its mark). The steps without one run (backups, fio profiles, capacity searches,
// consolidations), and any whose report would not validate, are skipped and said;
// nothing is written before every report is made.
func ExportStudy(store *study.Store, out outfile.Target, version string) ([]Written, []Skipped, error) {
	steps, unreadable, err := store.ReadSteps()
	if err != nil {
		return nil, nil, err
	}
	var skipped []Skipped
	for _, u := range unreadable {
		skipped = append(skipped, Skipped{fmt.Sprintf("step %d", u.Seq), u.String()})
	}
	info := Info{Version: version}
	if env, err := store.Environment(); err == nil {
		info.Machine = &Machine{CPUModel: env.CPUModel, Cores: env.Cores, MemoryBytes: env.MemoryBytes, Kernel: env.Kernel}
	}
	type report struct {
		step, jobID string
		json        []byte
	}
	var reports []report
	for _, s := range steps {
		name := fmt.Sprintf("step %d %s", s.Step.Seq, s.Step.ID)
		if s.Run == nil {
			skipped = append(skipped, Skipped{name, "a " + s.Step.Kind + " step has no single TPC-C run"})
			continue
		}
		step := info
		step.Step = s.Step.ID
		rep, err := Export(s.Run, step)
		var b []byte
		if err == nil {
			b, err = encode(rep)
		}
		if err != nil {
			skipped = append(skipped, Skipped{name, err.Error()})
			continue
		}
		reports = append(reports, report{name, rep.Job.JobID, b})
	}
	if len(reports) == 0 {
		return nil, skipped, fmt.Errorf("%w: %s holds no TPC-C run to export", input.ErrInvalid, store.Dir)
	}
	if err := exportDir(out); err != nil {
		return nil, nil, err
	}
	var written []Written
	for _, r := range reports {
		target := outfile.Target{Path: filepath.Join(out.Path, r.jobID+".json"), Flag: out.Flag, Kind: Kind}
		if err := write(target, r.json); err != nil {
			return written, skipped, err
		}
		written = append(written, Written{r.step, target.Path})
	}
	return written, skipped, nil
}

// exportDir makes out's directory for a study's export, or accepts one an export
// made.
func exportDir(out outfile.Target) error {
	dir, flag := out.Path, out.Flag
	err := os.Mkdir(dir, 0o755)
	switch {
	case err == nil:
		return os.WriteFile(filepath.Join(dir, exportMark), nil, 0o644)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s %s: its parent directory does not exist: create it, or give another %s", input.ErrInvalid, flag, dir, flag)
	case !errors.Is(err, fs.ErrExist):
		return fmt.Errorf("%w: %s %s: %v", input.ErrInvalid, flag, dir, err)
	}
	st, lerr := os.Lstat(dir)
	if lerr != nil || !st.IsDir() {
		return fmt.Errorf("%w: %s %s exists and is not a directory: a study's export is a directory of reports; give a new one", input.ErrInvalid, flag, dir)
	}
	if _, err := os.Lstat(filepath.Join(dir, exportMark)); err != nil {
		return fmt.Errorf("%w: %s %s exists and is not an export storbench made: give a new directory", input.ErrInvalid, flag, dir)
	}
	return nil
}

// encode is a report's JSON, validated: a run the schema cannot hold (a window of
// no length) is said before anything is written.
func encode(rep *Report) ([]byte, error) {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := Validate(b); err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// write writes a report's JSON to target, which may replace only a report storbench
// wrote.
func write(target outfile.Target, b []byte) error {
	f, err := target.Create()
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	return errors.Join(err, f.Close())
}
