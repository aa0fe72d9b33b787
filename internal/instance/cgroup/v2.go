package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// cgroup v2: one hierarchy, at root (pure v2) or root/unified (hybrid). A group is the
// directory storbench/<name> below it. Controllers are enabled for children in the
// cgroup.subtree_control of the root and of storbench/; by the "no internal processes"
// rule storbench/ must then hold no process itself, only groups do.

const v2Where = "cgroup v2"

// v2Root is the unified hierarchy's mount point, or "" when there is none.
func v2Root() string {
	for _, dir := range []string{root, filepath.Join(root, "unified")} {
		if _, err := os.Stat(filepath.Join(dir, "cgroup.controllers")); err == nil {
			return dir
		}
	}
	return ""
}

func v2Controllers(withIO bool) []string {
	if withIO {
		return []string{"memory", "cpuset", "io"}
	}
	return []string{"memory", "cpuset"}
}

// v2Support checks that the unified hierarchy offers the controllers a group needs and
// that storbench may enable them for its groups, without changing anything.
func v2Support(withIO bool) error {
	r := v2Root()
	if r == "" {
		return fmt.Errorf("%s: no unified hierarchy at %s or %s", v2Where, root, filepath.Join(root, "unified"))
	}
	avail, err := readFile(v2Where, r, "cgroup.controllers")
	if err != nil {
		return err
	}
	want := v2Controllers(withIO)
	if lack := absent(want, avail); len(lack) > 0 {
		return fmt.Errorf("%s: %s offers controllers %q, not %s (bound to cgroup v1 hierarchies, or not delegated here)",
			v2Where, r, avail, strings.Join(lack, ", "))
	}
	// The true root is exempt from the "no internal processes" rule and has no
	// cgroup.type; a namespace's or a delegated root is not.
	enabled, err := readFile(v2Where, r, "cgroup.subtree_control")
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(r, "cgroup.type")); err == nil && len(absent(want, enabled)) > 0 {
		procs, err := readFile(v2Where, r, "cgroup.procs")
		if err != nil {
			return err
		}
		if procs != "" {
			return fmt.Errorf("%s: %s holds processes, so it cannot enable %s for child groups (the \"no internal processes\" rule); move them to a leaf group first",
				v2Where, r, strings.Join(absent(want, enabled), ", "))
		}
	}
	dir := r
	if p := filepath.Join(r, parentDir); isDir(p) {
		dir = p
	}
	if err := writable(dir); err != nil {
		return fmt.Errorf("%s: %w", v2Where, err)
	}
	return nil
}

// absent lists the controllers of want missing from a space-separated controller list.
func absent(want []string, list string) []string {
	have := strings.Fields(list)
	var out []string
	for _, c := range want {
		if !slices.Contains(have, c) {
			out = append(out, c)
		}
	}
	return out
}

func v2Create(name string, l Limits) (*Group, error) {
	if err := v2Support(len(l.IO) > 0); err != nil {
		return nil, err
	}
	r := v2Root()
	want := v2Controllers(len(l.IO) > 0)

	cpus := "" // empty: the parent's CPUs
	if l.CPUs != "" {
		want, _ := parseCPUList(l.CPUs) // checked by checkLimits
		if have, err := readCPUList(filepath.Join(r, "cpuset.cpus.effective")); err == nil && len(have) > 0 {
			if bad := missing(want, have); len(bad) > 0 {
				return nil, fmt.Errorf("%s cpuset: cpuset %q: %s %s outside the CPUs this hierarchy allows (%s in %s)",
					v2Where, l.CPUs, cpuWord(bad), formatCPUList(bad), formatCPUList(have), filepath.Join(r, "cpuset.cpus.effective"))
			}
		}
		cpus = formatCPUList(want)
	}

	// Enable the controllers down to the group before making it, so that a failure
	// leaves no group behind with only part of its limits.
	if err := v2Enable(r, want); err != nil {
		return nil, err
	}
	parent := filepath.Join(r, parentDir)
	if _, err := makeDir(v2Where, parent); err != nil {
		return nil, err
	}
	if procs, err := readFile(v2Where, parent, "cgroup.procs"); err != nil {
		return nil, err
	} else if procs != "" {
		return nil, fmt.Errorf("%s: %s holds processes (%s), so it cannot enable controllers for groups (the \"no internal processes\" rule); move them into a group",
			v2Where, parent, strings.Join(strings.Fields(procs), " "))
	}
	if err := v2Enable(parent, want); err != nil {
		return nil, err
	}
	dir := filepath.Join(parent, name)
	made, err := makeDir(v2Where, dir)
	if err != nil {
		return nil, err
	}
	g := &Group{name: name, version: V2, dirs: []ctrlDir{{path: dir}}}
	if err := g.v2Apply(l, cpus); err != nil {
		if made {
			_ = rmdir(dir)
		}
		return nil, err
	}
	return g, nil
}

// v2Enable turns on the controllers for the children of dir.
func v2Enable(dir string, ctrls []string) error {
	enabled, err := readFile(v2Where, dir, "cgroup.subtree_control")
	if err != nil {
		return err
	}
	for _, c := range absent(ctrls, enabled) {
		if err := writeFile(v2Where, dir, "cgroup.subtree_control", "+"+c); err != nil {
			if errors.Is(err, syscall.EBUSY) {
				return fmt.Errorf("%w; %s holds processes or its children do (the \"no internal processes\" rule)", err, dir)
			}
			return err
		}
	}
	return nil
}

func (g *Group) v2Apply(l Limits, cpus string) error {
	dir := g.dirs[0].path
	limit := "max"
	if l.MemoryBytes > 0 {
		limit = strconv.FormatInt(l.MemoryBytes, 10)
	}
	if err := writeFile(v2Where+" memory", dir, "memory.max", limit); err != nil {
		return err
	}
	if err := writeFile(v2Where+" cpuset", dir, "cpuset.cpus", cpus); err != nil {
		return err
	}
	// io.max: clear devices throttled before, then set the listed ones.
	where := v2Where + " io"
	if _, err := os.Stat(filepath.Join(dir, "io.max")); err != nil && len(l.IO) == 0 {
		return nil // io not enabled for this group and not asked for
	}
	cur, err := readFile(where, dir, "io.max")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(cur, "\n") {
		dev, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		if dev == "" || listed(l.IO, dev) {
			continue
		}
		if err := writeFile(where, dir, "io.max", dev+" riops=max wiops=max rbps=max wbps=max"); err != nil {
			return err
		}
	}
	for _, io := range l.IO {
		v := fmt.Sprintf("%s riops=%s wiops=%s rbps=%s wbps=%s", io.Device,
			v2Max(io.ReadIOPS), v2Max(io.WriteIOPS), v2Max(io.ReadBPS), v2Max(io.WriteBPS))
		if err := writeFile(where, dir, "io.max", v); err != nil {
			return err
		}
	}
	return nil
}

func v2Max(n int64) string {
	if n == 0 {
		return "max"
	}
	return strconv.FormatInt(n, 10)
}

// v2Open finds the group in the unified hierarchy, or returns nil.
func v2Open(name string) *Group {
	r := v2Root()
	if r == "" {
		return nil
	}
	dir := filepath.Join(r, parentDir, name)
	if !isDir(dir) {
		return nil
	}
	return &Group{name: name, version: V2, dirs: []ctrlDir{{path: dir}}}
}

func (g *Group) v2Applied() []string {
	dir := g.dirs[0].path
	var out []string
	for _, file := range []string{"memory.max", "cpuset.cpus", "cpuset.cpus.effective", "io.max"} {
		v, err := readFile(v2Where, dir, file)
		switch {
		case err != nil && file == "io.max" && errors.Is(err, os.ErrNotExist):
			// io not enabled: nothing throttled
		case err != nil:
			out = append(out, fmt.Sprintf("%s: %v", file, err))
		case file == "cpuset.cpus" && v == "":
			out = append(out, file+"= (all of the parent's)")
		default:
			for _, line := range strings.Split(v, "\n") {
				if line = strings.TrimSpace(line); line != "" || file != "io.max" {
					out = append(out, file+"="+line)
				}
			}
		}
	}
	return out
}

func (g *Group) v2MemoryLimit() (int64, error) {
	dir := g.dirs[0].path
	s, err := readFile(v2Where, dir, "memory.max")
	if err != nil || s == "max" {
		return 0, err
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %s/memory.max: %q is not a number", v2Where, dir, s)
	}
	return n, nil
}

func (g *Group) v2OOMKills() (int64, error) {
	return keyedValue(v2Where, g.dirs[0].path, "memory.events", "oom_kill")
}
