package study

import (
	"fmt"
	"strings"

	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/instance/cgroup"
	"github.com/storbench/storbench/internal/yamlfile"
)

// CheckMachine refuses what a study file asks that this machine cannot give, before
// anything runs (the file itself was checked by Load or Parse, memory against the
// machine's included): a managed target's directory that cannot be made (its parent
// missing, a mount point not mounted) and CPU sets naming CPUs it does not have,
// which would otherwise run unpinned and measure something else than they claim.
func CheckMachine(s *Study) error {
	for i, t := range s.Targets {
		if !t.manages() {
			continue
		}
		dirs := []struct{ key, dir string }{{"path", t.Path}, {"wal_path", t.WALPath}}
		if t.Replica != nil {
			dirs = append(dirs, struct{ key, dir string }{"replica.path", t.Replica.Path})
		}
		for _, d := range dirs {
			if d.dir == "" {
				continue
			}
			if err := instance.CheckDir(d.dir); err != nil {
				return s.refusal(fmt.Sprintf("targets[%d].%s", i, d.key), err)
			}
		}
		if err := checkCPUs(s, fmt.Sprintf("targets[%d].cpus", i), t.CPUs); err != nil {
			return err
		}
	}
	for i := range s.Experiments {
		e := &s.Experiments[i]
		for _, l := range []struct {
			key  string
			sets []string
		}{{"cpus", e.CPUs}, {"instance_cpus", e.InstanceCPUs}} {
			for j, set := range l.sets {
				if err := checkCPUs(s, fmt.Sprintf("experiments[%d].%s[%d]", i, l.key, j), set); err != nil {
					return err
				}
			}
		}
	}
	if who, why := memoryLimitsUnapplied(s); who != "" && !s.AllowUnappliedLimits {
		return fmt.Errorf("%w: %s asks for a memory limit, which this machine cannot apply (%v): run as root on a machine with cgroup controllers, or set allow_unapplied_limits: true in the study to run without it",
			input.ErrInvalid, who, why)
	}
	return nil
}

// memoryLimitsUnapplied names the first part of the study that asks for a memory
// limit, and why this machine cannot apply one; "" when none asks or it can. CPU
// sets need no cgroup: without one they are applied as the processes' affinity.
func memoryLimitsUnapplied(s *Study) (who string, why error) {
	for _, t := range s.Targets {
		if t.manages() && t.Memory.Bytes > 0 {
			who = "target " + t.Name
			break
		}
	}
	for i := range s.Experiments {
		if e := &s.Experiments[i]; who == "" && (len(e.Memory) > 0 || e.InstanceMemory.Bytes > 0) {
			who = label(e)
		}
	}
	if who == "" {
		return "", nil
	}
	if _, err := cgroup.Support(); err != nil {
		return who, err
	}
	return "", nil
}

func checkCPUs(s *Study, path, set string) error {
	if set == "" {
		return nil
	}
	if err := instance.CheckCPUs("", set); err != nil {
		return s.refusal(path, err)
	}
	return nil
}

// refusal is a machine check's refusal of the study file's setting at path, placed
// and worded as the file's own checks place theirs: "FILE:LINE: path: what (hint)".
func (s *Study) refusal(path string, err error) error {
	line := 0
	if s.line != nil {
		line = s.line(path)
	}
	return &yamlfile.LineError{File: s.file, Line: line, Msg: path + ": " + strings.TrimPrefix(err.Error(), input.ErrInvalid.Error()+": ")}
}
