package study

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/instance/cgroup"
	"github.com/storbench/storbench/internal/yamlfile"
)

// CheckMachine returns every refusal of what a study file asks that this machine
// cannot give, in the file's order, each at its line (the file itself was checked by
// Load or Parse): memory larger than the machine's, a workload beyond a target's
// free space (found by Parse), a managed target's directory that cannot be made (its
// parent missing, a mount point not mounted), CPU sets naming CPUs it does not have,
// which would otherwise run unpinned and measure something else than they claim, a
// memory limit it cannot apply, and directories that nest in one another or in the
// results store (results, the absolute directory ResultsDir gives).
func CheckMachine(s *Study, results string) []*yamlfile.LineError {
	refusals := append([]*yamlfile.LineError(nil), s.machine...)
	// The study's own instances (an interrupted run's) are its to take over.
	own := (&Store{Dir: results}).Registry()
	for i, t := range s.Targets {
		if !t.manages() {
			continue
		}
		for _, d := range targetDirs(i, t) {
			if err := own.CheckDir("", d.dir); err != nil {
				refusals = append(refusals, s.refusal(d.key, err))
			}
		}
		refusals = append(refusals, checkCPUs(s, fmt.Sprintf("targets[%d].cpus", i), t.CPUs)...)
		if t.BinDir != "" {
			if err := instance.CheckBinDir(t.Engine, t.BinDir); err != nil {
				refusals = append(refusals, s.refusal(fmt.Sprintf("targets[%d].bindir", i), err))
			}
		}
	}
	refusals = append(refusals, missingTools(s)...)
	for i := range s.Experiments {
		e := &s.Experiments[i]
		for _, l := range []struct {
			key  string
			sets []string
		}{{"cpus", e.CPUs}, {"instance_cpus", e.InstanceCPUs}} {
			for j, set := range l.sets {
				refusals = append(refusals, checkCPUs(s, fmt.Sprintf("experiments[%d].%s[%d]", i, l.key, j), set)...)
			}
		}
	}
	if path, who, why := memoryLimitsUnapplied(s); who != "" && !s.AllowUnappliedLimits {
		refusals = append(refusals, s.refusal(path, fmt.Errorf("%s asks for a memory limit, which this machine cannot apply (%v): run as root on a machine with cgroup controllers, or set allow_unapplied_limits: true in the study to run without it",
			who, why)))
	}
	refusals = append(refusals, nested(s, results)...)
	sort.SliceStable(refusals, func(i, j int) bool { return refusals[i].Line < refusals[j].Line })
	return refusals
}

// missingTools refuses an experiment that backs up or copies a managed target whose
// server build lacks the tools for it (its own version's: another's would fail
// halfway), at the experiment's kind.
func missingTools(s *Study) []*yamlfile.LineError {
	var refusals []*yamlfile.LineError
	for i := range s.Experiments {
		e := &s.Experiments[i]
		var how instance.BackupMethod
		switch {
		case e.Kind == BackupRestore:
			how.Logical = e.Method == "logical"
		case e.Kind == Replication:
		case e.Noisy != nil:
			how.Logical = e.Noisy.Method == "logical"
		default:
			continue
		}
		for _, t := range experimentTargets(s, e) {
			if !t.manages() || t.BinDir == "" {
				continue
			}
			if err := instance.CheckTools(t.Engine, t.BinDir, how); err != nil {
				refusals = append(refusals, s.refusal(fmt.Sprintf("experiments[%d].kind", i), fmt.Errorf("target %s: %w", t.Name, err)))
			}
		}
	}
	return refusals
}

// Refused is the refusals of CheckMachine as one error, for a command that stops at
// them (study run): the first, and how many more study plan lists; nil when none.
func Refused(s *Study, refusals []*yamlfile.LineError) error {
	switch len(refusals) {
	case 0:
		return nil
	case 1:
		return refusals[0]
	}
	return fmt.Errorf("%w; and %d more (storbench study plan %s lists them)", refusals[0], len(refusals)-1, s.file)
}

// dirOf is a directory of the study's, with the setting that names it.
type dirOf struct{ key, dir string }

// targetDirs are a managed target's directories that it sets: its data, WAL and
// replica's.
func targetDirs(i int, t Target) []dirOf {
	all := []dirOf{{fmt.Sprintf("targets[%d].path", i), t.Path}, {fmt.Sprintf("targets[%d].wal_path", i), t.WALPath}}
	if t.Replica != nil {
		all = append(all, dirOf{fmt.Sprintf("targets[%d].replica.path", i), t.Replica.Path})
	}
	var dirs []dirOf
	for _, d := range all {
		if d.dir != "" {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// nested refuses directories of the study that nest in one another (a target's inside
// another's, its WAL inside its data, a consolidated instance's inside a target's) or
// in the results store, compared as they resolve (absolute, cleaned, symbolic links
// followed as far as they exist): one server's files under another's would be
// measured, restored and removed with it. Each is refused at the line of the later
// one (of the target, beside the results store, which has no line).
func nested(s *Study, results string) []*yamlfile.LineError {
	type place struct {
		dirOf
		real string
		line int
	}
	var places []place
	add := func(d dirOf, line int) {
		places = append(places, place{d, instance.Resolved(d.dir), line})
	}
	for i, t := range s.Targets {
		if t.manages() {
			for _, d := range targetDirs(i, t) {
				add(d, s.lineOf(d.key))
			}
		}
	}
	consolidated := map[string]bool{}
	for i := range s.Experiments {
		e := &s.Experiments[i]
		if e.Kind != Consolidation {
			continue
		}
		key := fmt.Sprintf("experiments[%d].instances", i)
		for _, t := range experimentTargets(s, e) {
			for k := range e.Instances {
				// Two consolidations of one target make the same instances in turn.
				if d := consolidatedPath(t.Path, k); t.manages() && !consolidated[d] {
					consolidated[d] = true
					add(dirOf{key, d}, s.lineOf(key))
				}
			}
		}
		if n := e.Noisy; n != nil && n.Path != "" && n.RunOn != "host" {
			add(dirOf{fmt.Sprintf("experiments[%d].noisy.path", i), n.Path}, s.lineOf(fmt.Sprintf("experiments[%d].noisy.path", i)))
		}
	}
	if results != "" {
		add(dirOf{"the results store", results}, 0)
	}
	name := func(p place) string {
		if p.line == 0 {
			return p.key + " " + p.dir + " (--results)"
		}
		shown := p.key + " " + p.dir
		if p.real != filepath.Clean(p.dir) {
			shown += " (" + p.real + ")"
		}
		return shown
	}
	var out []*yamlfile.LineError
	for j := 1; j < len(places); j++ {
		for i := range j {
			a, b := places[i], places[j]
			if b.line == 0 { // the results store: refused at the other's line
				a, b = b, a
			}
			if a.key == b.key && a.line == b.line {
				continue // a consolidation's instances, side by side
			}
			var what string
			switch {
			case a.real == b.real:
				what = "is also"
			case instance.Within(b.real, a.real):
				what = "is inside"
			case instance.Within(a.real, b.real):
				what = "holds"
			default:
				continue
			}
			other := name(a)
			if a.line > 0 {
				other += fmt.Sprintf(" (line %d)", a.line)
			}
			out = append(out, s.refusal(b.key, fmt.Errorf("%s %s %s (give each server, WAL, replica, consolidated instance and backup directory and the results store a directory of its own, none inside another)",
				strings.TrimPrefix(name(b), b.key+" "), what, other)))
		}
	}
	return out
}

// memoryLimitsUnapplied names the first part of the study that asks for a memory
// limit (path: its setting), and why this machine cannot apply one; "" when none
// asks or it can. CPU sets need no cgroup: without one they are applied as the
// processes' affinity.
func memoryLimitsUnapplied(s *Study) (path, who string, why error) {
	for i, t := range s.Targets {
		if t.manages() && t.Memory.Bytes > 0 {
			path, who = fmt.Sprintf("targets[%d].memory", i), "target "+t.Name
			break
		}
	}
	for i := range s.Experiments {
		e := &s.Experiments[i]
		switch {
		case who != "":
		case len(e.Memory) > 0:
			path, who = fmt.Sprintf("experiments[%d].memory", i), label(e)
		case e.InstanceMemory.Bytes > 0:
			path, who = fmt.Sprintf("experiments[%d].instance_memory", i), label(e)
		}
	}
	if who == "" {
		return "", "", nil
	}
	if _, err := cgroup.Support(); err != nil {
		return path, who, err
	}
	return "", "", nil
}

func checkCPUs(s *Study, path, set string) []*yamlfile.LineError {
	if set == "" {
		return nil
	}
	if err := instance.CheckCPUs(set); err != nil {
		return []*yamlfile.LineError{s.refusal(path, err)}
	}
	return nil
}

// lineOf is the line of the setting at path in the study file (0 when unknown).
func (s *Study) lineOf(path string) int {
	if s.line == nil {
		return 0
	}
	return s.line(path)
}

// refusal is a machine check's refusal of the study file's setting at path, placed
// and worded as the file's own checks place theirs: "FILE:LINE: path: what (hint)".
func (s *Study) refusal(path string, err error) *yamlfile.LineError {
	// The setting at path (an item of it: cpus[1]) is named by its place; another
	// by its key.
	setting, _, _ := strings.Cut(path[strings.LastIndexByte(path, '.')+1:], "[")
	name := func(key string) string {
		if key == setting {
			return path
		}
		return key
	}
	// The file's line says it is bad input: the words say it no more, causes' neither.
	msg := strings.ReplaceAll(input.Render(err, name), input.ErrInvalid.Error()+": ", "")
	if !strings.HasPrefix(msg, path) {
		msg = path + ": " + msg
	}
	return &yamlfile.LineError{File: s.file, Line: s.lineOf(path), Msg: msg}
}
