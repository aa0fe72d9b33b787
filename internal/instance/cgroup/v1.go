package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cgroup v1: one hierarchy per controller, at root/<controller>. A group is a directory
// storbench/<name> in the memory and cpuset hierarchies, in blkio when throttled, and in
// cpuacct when it is mounted: the sampler reads the instance's CPU time there. Not in
// cpu: a group of the cpu controller is scheduled as one entity against every other
// task, which would change how the instance shares the CPUs with the driver.

// v1Probe is a file that proves a controller is mounted (and, for blkio, that the
// kernel has throttling).
var v1Probe = map[string]string{
	"memory":  "memory.limit_in_bytes",
	"cpuset":  "cpuset.cpus",
	"blkio":   "blkio.throttle.read_bps_device",
	"cpuacct": "cpuacct.usage",
}

// v1Throttles are blkio's throttle files and the IOLimit field each takes.
var v1Throttles = []struct {
	file  string
	value func(IOLimit) int64
}{
	{"blkio.throttle.read_iops_device", func(l IOLimit) int64 { return l.ReadIOPS }},
	{"blkio.throttle.write_iops_device", func(l IOLimit) int64 { return l.WriteIOPS }},
	{"blkio.throttle.read_bps_device", func(l IOLimit) int64 { return l.ReadBPS }},
	{"blkio.throttle.write_bps_device", func(l IOLimit) int64 { return l.WriteBPS }},
}

// v1Unlimited is the smallest memory.limit_in_bytes value that means "no limit"
// (the kernel shows PAGE_COUNTER_MAX pages, 9223372036854771712 with 4 KiB pages).
const v1Unlimited = 1 << 62

func v1Where(controller string) string { return "cgroup v1 " + controller }

// v1Support checks that the controllers a group needs are mounted and writable.
func v1Support(withIO bool) error {
	ctrls := []string{"memory", "cpuset"}
	if withIO {
		ctrls = append(ctrls, "blkio")
	}
	for _, c := range ctrls {
		dir := filepath.Join(root, c)
		if _, err := os.Stat(filepath.Join(dir, v1Probe[c])); err != nil {
			if c == "blkio" && isDir(dir) {
				return fmt.Errorf("%s: %s has no %s (kernel without CONFIG_BLK_DEV_THROTTLING?)", v1Where(c), dir, v1Probe[c])
			}
			return fmt.Errorf("%s: controller not mounted at %s", v1Where(c), dir)
		}
		if p := filepath.Join(dir, parentDir); isDir(p) {
			dir = p
		}
		if err := writable(dir); err != nil {
			return fmt.Errorf("%s: %w", v1Where(c), err)
		}
	}
	return nil
}

func v1Create(name string, l Limits) (*Group, error) {
	blkioDir := filepath.Join(root, "blkio", parentDir, name)
	ctrls := []string{"memory", "cpuset"}
	if len(l.IO) > 0 || isDir(blkioDir) { // an old group's throttles must be reset too
		ctrls = append(ctrls, "blkio")
	}
	// Accounting only, no limit: a hierarchy without it just leaves no CPU figures.
	if _, err := os.Stat(filepath.Join(root, "cpuacct", v1Probe["cpuacct"])); err == nil {
		ctrls = append(ctrls, "cpuacct")
	}
	if err := v1Support(len(l.IO) > 0); err != nil {
		return nil, err
	}

	// The cpuset parent gets all of the root's CPUs and memory nodes; the group a subset.
	cs := v1Where("cpuset")
	rootCPUs, err := readFile(cs, filepath.Join(root, "cpuset"), "cpuset.cpus")
	if err != nil {
		return nil, err
	}
	rootMems, err := readFile(cs, filepath.Join(root, "cpuset"), "cpuset.mems")
	if err != nil {
		return nil, err
	}
	have, err := parseCPUList(rootCPUs)
	if err != nil {
		return nil, fmt.Errorf("%s: %s/cpuset.cpus: %w", cs, filepath.Join(root, "cpuset"), err)
	}
	cpus := formatCPUList(have)
	if l.CPUs != "" {
		want, _ := parseCPUList(l.CPUs) // checked by checkLimits
		if bad := missing(want, have); len(bad) > 0 {
			return nil, fmt.Errorf("%s: cpuset %q: %s %s outside the CPUs this hierarchy allows (%s in %s)",
				cs, l.CPUs, cpuWord(bad), formatCPUList(bad), cpus, filepath.Join(root, "cpuset", "cpuset.cpus"))
		}
		cpus = formatCPUList(want)
	}

	g := &Group{name: name, version: V1}
	var created []string
	fail := func(err error) (*Group, error) {
		for i := len(created) - 1; i >= 0; i-- {
			_ = rmdir(created[i])
		}
		return nil, err
	}
	for _, c := range ctrls {
		parent := filepath.Join(root, c, parentDir)
		if _, err := makeDir(v1Where(c), parent); err != nil {
			return fail(err)
		}
		if c == "cpuset" {
			if err := v1WidenParent(parent, rootCPUs, rootMems); err != nil {
				return fail(err)
			}
		}
		dir := filepath.Join(parent, name)
		made, err := makeDir(v1Where(c), dir)
		if err != nil {
			return fail(err)
		}
		if made {
			created = append(created, dir)
		}
		g.dirs = append(g.dirs, ctrlDir{controller: c, path: dir})
	}

	for _, d := range g.dirs {
		var err error
		switch d.controller {
		case "memory":
			limit := "-1"
			if l.MemoryBytes > 0 {
				limit = strconv.FormatInt(l.MemoryBytes, 10)
			}
			err = writeFile(v1Where("memory"), d.path, "memory.limit_in_bytes", limit)
		case "cpuset":
			// Tasks cannot join a v1 cpuset until both cpus and mems are set.
			err = writeFile(cs, d.path, "cpuset.cpus", cpus)
			if err == nil {
				err = writeFile(cs, d.path, "cpuset.mems", rootMems)
			}
		case "blkio":
			err = v1ApplyIO(d.path, l.IO)
		}
		if err != nil {
			return fail(err)
		}
	}
	return g, nil
}

// v1WidenParent gives the storbench cpuset directory the root's CPUs and memory nodes
// when it lacks them (it starts empty), so that any subset can be given to a group.
func v1WidenParent(parent, rootCPUs, rootMems string) error {
	cs := v1Where("cpuset")
	cur, err := readFile(cs, parent, "cpuset.cpus")
	if err != nil {
		return err
	}
	if cur != rootCPUs {
		if err := writeFile(cs, parent, "cpuset.cpus", rootCPUs); err != nil {
			return err
		}
	}
	cur, err = readFile(cs, parent, "cpuset.mems")
	if err != nil {
		return err
	}
	if cur != rootMems {
		return writeFile(cs, parent, "cpuset.mems", rootMems)
	}
	return nil
}

// v1ApplyIO sets each throttle file to exactly the limits asked: devices throttled before
// but not listed now are cleared (a value of 0 removes a rule).
func v1ApplyIO(dir string, ios []IOLimit) error {
	where := v1Where("blkio")
	for _, t := range v1Throttles {
		cur, err := readFile(where, dir, t.file)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(cur, "\n") {
			dev, _, _ := strings.Cut(strings.TrimSpace(line), " ")
			if dev == "" || listed(ios, dev) {
				continue
			}
			if err := writeFile(where, dir, t.file, dev+" 0"); err != nil {
				return err
			}
		}
		for _, io := range ios {
			if err := writeFile(where, dir, t.file, fmt.Sprintf("%s %d", io.Device, t.value(io))); err != nil {
				return err
			}
		}
	}
	return nil
}

func listed(ios []IOLimit, dev string) bool {
	for _, io := range ios {
		if io.Device == dev {
			return true
		}
	}
	return false
}

// v1Open finds the group in the v1 hierarchies, or returns nil.
func v1Open(name string) *Group {
	g := &Group{name: name, version: V1}
	for _, c := range []string{"memory", "cpuset", "blkio", "cpuacct"} {
		dir := filepath.Join(root, c, parentDir, name)
		if isDir(dir) {
			g.dirs = append(g.dirs, ctrlDir{controller: c, path: dir})
		}
	}
	if len(g.dirs) == 0 {
		return nil
	}
	return g
}

func (g *Group) v1Applied() []string {
	var out []string
	show := func(d ctrlDir, file string, format func(string) string) {
		v, err := readFile(g.where(d), d.path, file)
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("%s: %v", file, err))
		case format != nil:
			out = append(out, file+"="+format(v))
		default:
			out = append(out, file+"="+v)
		}
	}
	for _, d := range g.dirs {
		switch d.controller {
		case "memory":
			show(d, "memory.limit_in_bytes", func(v string) string {
				if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= v1Unlimited {
					return v + " (no limit)"
				}
				return v
			})
		case "cpuset":
			show(d, "cpuset.cpus", nil)
			show(d, "cpuset.mems", nil)
		case "blkio":
			for _, t := range v1Throttles {
				v, err := readFile(g.where(d), d.path, t.file)
				if err != nil {
					out = append(out, fmt.Sprintf("%s: %v", t.file, err))
					continue
				}
				for _, line := range strings.Split(v, "\n") {
					if line = strings.TrimSpace(line); line != "" {
						out = append(out, t.file+"="+line)
					}
				}
			}
		}
	}
	return out
}

// v1Dir is the group's directory in one controller's hierarchy.
func (g *Group) v1Dir(controller string) (ctrlDir, error) {
	for _, d := range g.dirs {
		if d.controller == controller {
			return d, nil
		}
	}
	return ctrlDir{}, fmt.Errorf("%s: group %s/%s: %w", v1Where(controller), parentDir, g.name, os.ErrNotExist)
}

func (g *Group) v1MemoryLimit() (int64, error) {
	d, err := g.v1Dir("memory")
	if err != nil {
		return 0, err
	}
	s, err := readFile(g.where(d), d.path, "memory.limit_in_bytes")
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %s/memory.limit_in_bytes: %q is not a number", g.where(d), d.path, s)
	}
	if n >= v1Unlimited {
		return 0, nil
	}
	return n, nil
}

func (g *Group) v1OOMKills() (int64, error) {
	d, err := g.v1Dir("memory")
	if err != nil {
		return 0, err
	}
	return keyedValue(g.where(d), d.path, "memory.oom_control", "oom_kill")
}
