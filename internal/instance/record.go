package instance

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/storbench/storbench/internal/durable"
	"github.com/storbench/storbench/internal/input"
)

// An instance's state file is rewritten at every start and stop; a process killed
// while creating one, a crash, a disk or a person can leave it missing or unreadable.
// So that such an instance can still be found, shown and destroyed (and only it is
// affected), create first writes its claim: what finds its directories and stops its
// server, written before anything exists on disk, completed once the server's files
// are made, and never rewritten after.

// Conditions of an instance's record other than usable (State.Condition "").
const (
	// Incomplete: its create did not finish (the process was killed); only its claim
	// was written.
	Incomplete = "incomplete"
	// Damaged: its state file cannot be read (State.Problem says why).
	Damaged = "damaged"
)

// claimRecord is an instance's claim: its engine, its directories and, once its
// create has made the server's files, the binaries that stop it and the directories'
// identities.
type claimRecord struct {
	Engine  string           `json:"engine"`
	Path    string           `json:"path"`
	WALPath string           `json:"wal_path,omitempty"`
	BinDir  string           `json:"bin_dir,omitempty"`
	Dirs    map[string]DirID `json:"dirs,omitempty"`
}

func (r Registry) claimDir() string { return filepath.Join(r.Dir, "claims") }

func (r Registry) claimFile(name string) string { return filepath.Join(r.claimDir(), name+".json") }

// writeClaim records st's claim (see claimRecord).
func (r Registry) writeClaim(st *State) error {
	b, err := json.Marshal(claimRecord{Engine: st.Engine, Path: st.Path, WALPath: st.WALPath, BinDir: st.BinDir, Dirs: st.Dirs})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(r.claimDir(), 0o755); err != nil {
		return err
	}
	return durable.WriteFile(r.claimFile(st.Name), b, 0o644)
}

// unclaim removes the named instance's claim and the registry's directories that
// writing it made, when they are empty: a refused create leaves no trace.
func (r Registry) unclaim(name string) {
	_ = removeFile(r.claimFile(name))
	_ = os.Remove(r.claimDir())
	_ = os.Remove(r.Dir)
}

// Recorded tells whether the registry holds an instance of that name, usable or not.
func (r Registry) Recorded(name string) bool {
	for _, f := range []string{r.file(name), r.claimFile(name)} {
		if _, err := os.Lstat(f); err == nil {
			return true
		}
	}
	return false
}

// record reads the named instance's record: its state, or, when the state file is
// missing (Incomplete) or cannot be read (Damaged), what its claim says, with
// Condition set. A damaged instance without a readable claim has only its name and
// Problem: destroy cannot find its directories. Only an instance the registry does
// not hold at all is an error.
func (r Registry) record(name string) (*State, error) {
	b, err := os.ReadFile(r.file(name))
	if err == nil {
		var st State
		if err = json.Unmarshal(b, &st); err == nil {
			return &st, nil
		}
	}
	st := &State{Spec: Spec{Name: name}, Condition: Damaged}
	if errors.Is(err, os.ErrNotExist) {
		st.Condition = Incomplete
	} else {
		st.Problem = fmt.Sprintf("state file %s: %v", r.file(name), err)
	}
	var c claimRecord
	cb, cerr := os.ReadFile(r.claimFile(name))
	if cerr == nil {
		cerr = json.Unmarshal(cb, &c)
	}
	switch {
	case cerr == nil && c.Path != "":
		st.Engine, st.Path, st.WALPath, st.BinDir, st.Dirs = c.Engine, c.Path, c.WALPath, c.BinDir, c.Dirs
	case st.Condition == Incomplete && errors.Is(cerr, os.ErrNotExist):
		return nil, r.notFound(name)
	default:
		st.Condition = Damaged
		st.Problem = strings.TrimPrefix(st.Problem+"; ", "; ") + "no readable record of its directories"
	}
	return st, nil
}

// Unusable says, in one sentence with the fix, why the instance's record serves no
// verb but destroy: its create did not finish, or its state file is damaged ("" : it
// is usable).
func (st *State) Unusable() string {
	switch st.Condition {
	case "":
		return ""
	case Incomplete:
		return fmt.Sprintf("instance %s is incomplete: its create did not finish; storbench instance destroy --name %s removes what it made", st.Name, st.Name)
	}
	return fmt.Sprintf("instance %s is damaged (%s): storbench instance destroy --name %s stops its server and removes what storbench made for it", st.Name, st.Problem, st.Name)
}

// notFound is the error for a name the registry does not hold; it names the study
// whose registry, linked into this one, holds it.
func (r Registry) notFound(name string) error {
	linked, _ := r.Linked()
	for _, l := range linked {
		if l.Registry.Recorded(name) {
			return fmt.Errorf("%w: instance %s belongs to study %s: storbench study clean %s stops and removes it", input.ErrInvalid, name, l.Owner, filepath.Dir(l.Dir))
		}
	}
	return fmt.Errorf("%w: no instance named %q (storbench instance list shows them)", input.ErrInvalid, name)
}

// names are the instances the registry holds, from their state files and claims.
func (r Registry) names() ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, dir := range []string{r.Dir, r.claimDir()} {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			name, ok := strings.CutSuffix(e.Name(), ".json")
			if ok && validName.MatchString(name) && !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	return out, nil
}
