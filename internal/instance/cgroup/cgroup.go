// Package cgroup puts managed database instances under the memory, CPU and (optionally)
// I/O limits a study asks for, with Linux control groups: cgroup v1 (memory, cpuset and
// blkio hierarchies, each mounted at /sys/fs/cgroup/<controller>) or cgroup v2 (one
// unified hierarchy at /sys/fs/cgroup, or /sys/fs/cgroup/unified on hybrid systems).
//
// A group named n is the directory storbench/n below the root of each hierarchy used
// (not below the caller's own cgroup), so a later invocation finds it again with Open.
//
// What the limits mean:
//
//   - MemoryBytes is the memory.limit_in_bytes (v1) or memory.max (v2) of the group. Both
//     charge the page cache a process of the group brings in, so a 2 GB instance cannot
//     keep its database in the host's page cache. Pages that are already cached when the
//     instance reads them (for example written by a restore or load that ran outside the
//     group) stay charged to whoever first read or wrote them and are NOT counted against
//     the limit: drop them (echo 1 > /proc/sys/vm/drop_caches, or posix_fadvise DONTNEED
//     per file) before starting a limited instance. Swap is not limited (v1
//     memory.memsw.*, v2 memory.swap.max are left alone); benchmark hosts normally have
//     none, and with swap a limited instance would page out instead of being reclaimed.
//   - CPUs is the cpuset the group's processes may run on.
//   - IO throttles a whole block device (major:minor) in IOPS and bytes per second. Under
//     v1 the throttle only sees I/O a process issues itself (reads, direct and
//     synchronous writes); buffered writes flushed later by the kernel's writeback are
//     not throttled. Under v2 (memory and io both enabled, on ext4, xfs or btrfs)
//     writeback is charged to the group and throttled too.
//
// The package never prints; errors name the version, the controller and the file.
package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Paths read and written; tests point them at fixtures.
var (
	root    = "/sys/fs/cgroup" // where the hierarchies are mounted
	sysRoot = "/sys"           // for devices/system/cpu/online and dev/block
	mkdir   = os.Mkdir         // tests fill the directory the kernel would fill
	rmdir   = syscall.Rmdir    // and empty it again
	write   = writeKernel      // and act as the kernel on writes
)

// writeKernel writes value to an existing file in one write(2), as cgroup files want.
func writeKernel(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte(value))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// parentDir is the directory below each hierarchy's root that holds storbench's groups.
const parentDir = "storbench"

// minMemoryBytes rejects limits that are surely a unit mistake (MB passed as bytes).
// A limit of 0 written to the kernel would mean "no memory at all" under v1.
const minMemoryBytes = 1 << 20

// Version is the cgroup version a group lives in.
type Version int

// Versions of the cgroup interface.
const (
	V1 Version = 1
	V2 Version = 2
)

func (v Version) String() string {
	switch v {
	case V1:
		return "cgroup v1"
	case V2:
		return "cgroup v2"
	case 0:
		return "no cgroup version"
	}
	return fmt.Sprintf("cgroup version %d", int(v))
}

// Limits are what a group enforces; zero values mean "no limit".
type Limits struct {
	// MemoryBytes limits memory including the page cache (v1 memory.limit_in_bytes, v2
	// memory.max). Otherwise at least 1 MiB; the kernel rounds it down to whole pages.
	MemoryBytes int64
	// CPUs is a cpuset list, e.g. "0-1" or "0,2": online CPUs of this machine, inside the
	// parent's cpuset. "" means every CPU the parent has.
	CPUs string
	// IO throttles block devices; devices not listed are not throttled.
	IO []IOLimit
}

// IOLimit throttles one whole block device (not a partition); zero fields mean no limit.
// v1: blkio.throttle.{read,write}_{iops,bps}_device; v2: io.max.
type IOLimit struct {
	Device    string // "major:minor", e.g. "8:0" (see /sys/dev/block, lsblk)
	ReadIOPS  int64
	WriteIOPS int64
	ReadBPS   int64 // bytes per second
	WriteBPS  int64
}

// Group is a control group made by Create or found by Open.
type Group struct {
	name    string
	version Version
	dirs    []ctrlDir // v1: one per controller used; v2: exactly one, controller ""
}

// ctrlDir is the group's directory in one hierarchy.
type ctrlDir struct {
	controller string // v1: "memory", "cpuset", "blkio", "cpuacct"; v2: ""
	path       string
}

// Name is the group's name (the last element of its directories).
func (g *Group) Name() string { return g.name }

// Dirs are the group's directories by controller (v1), or its one directory under ""
// (v2): where a sampler reads its counters.
func (g *Group) Dirs() map[string]string {
	dirs := make(map[string]string, len(g.dirs))
	for _, d := range g.dirs {
		dirs[d.controller] = d.path
	}
	return dirs
}

// Version tells which cgroup interface the group lives in.
func (g *Group) Version() Version { return g.version }

// Support tells whether this process may create groups here and with which version, or
// why not (not root, controllers not mounted, read-only...). v1 is used when its memory
// and cpuset hierarchies are mounted; otherwise v2 when its root offers both controllers.
func Support() (Version, error) {
	err1 := v1Support(false)
	if err1 == nil {
		return V1, nil
	}
	err2 := v2Support(false)
	if err2 == nil {
		return V2, nil
	}
	return 0, fmt.Errorf("cgroup: no usable hierarchy below %s: %v; %v", root, err1, err2)
}

// Create makes (or re-uses, resetting its limits) the group storbench/<name> in each
// needed controller and applies l. name must be a simple identifier: letters, digits,
// '_' and '-', starting with a letter or digit, at most 64 characters. On error nothing
// this call created is left behind; a re-used group may keep part of the new limits.
func Create(name string, l Limits) (*Group, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if err := checkLimits(l); err != nil {
		return nil, err
	}
	v, err := Support()
	if err != nil {
		return nil, err
	}
	if v == V1 {
		return v1Create(name, l)
	}
	return v2Create(name, l)
}

// Open returns an existing group (to stop or destroy it in a later invocation). The error
// wraps fs.ErrNotExist when no hierarchy holds the group.
func Open(name string) (*Group, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if g := v1Open(name); g != nil {
		return g, nil
	}
	if g := v2Open(name); g != nil {
		return g, nil
	}
	return nil, fmt.Errorf("cgroup: group %s/%s: %w in the v1 hierarchies or the v2 hierarchy below %s",
		parentDir, name, fs.ErrNotExist, root)
}

// Add moves a process (all its threads) into the group; children it forks afterwards
// inherit the group. Children forked before stay where they are: add them too.
func (g *Group) Add(pid int) error {
	if pid <= 0 {
		return fmt.Errorf("%v: add process %d: not a process id", g.version, pid)
	}
	for _, d := range g.dirs {
		if err := writeFile(g.where(d), d.path, "cgroup.procs", strconv.Itoa(pid)); err != nil {
			return fmt.Errorf("add process %d: %w", pid, err)
		}
	}
	return nil
}

// Pids lists the processes in the group (in any of its hierarchies), sorted.
func (g *Group) Pids() ([]int, error) {
	var pids []int
	for _, d := range g.dirs {
		s, err := readFile(g.where(d), d.path, "cgroup.procs")
		if err != nil {
			return nil, err
		}
		for _, f := range strings.Fields(s) {
			p, err := strconv.Atoi(f)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: bad process id %q", g.where(d), filepath.Join(d.path, "cgroup.procs"), f)
			}
			pids = append(pids, p)
		}
	}
	slices.Sort(pids)
	return slices.Compact(pids), nil
}

// Applied lists the settings in force, read back from the group's files, one
// "file=value" each, e.g. "memory.limit_in_bytes=2147483648". A file that cannot be read
// is listed with the error instead of a value.
func (g *Group) Applied() []string {
	if g.version == V1 {
		return g.v1Applied()
	}
	return g.v2Applied()
}

// Destroy removes the group's directories. It fails, removing nothing, while processes
// remain in the group. The storbench parent directories are left for other groups.
func (g *Group) Destroy() error {
	pids, err := g.Pids()
	if err != nil {
		return fmt.Errorf("destroy %s/%s: %w", parentDir, g.name, err)
	}
	if len(pids) > 0 {
		return fmt.Errorf("%v: destroy %s/%s: %d process(es) still in the group (%s); stop them first",
			g.version, parentDir, g.name, len(pids), pidList(pids))
	}
	var errs []error
	for _, d := range g.dirs {
		if err := rmdir(d.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("%s: remove %s: %w", g.where(d), d.path, err))
		}
	}
	return errors.Join(errs...)
}

// where names the version and controller of a directory, for errors.
func (g *Group) where(d ctrlDir) string {
	if d.controller == "" {
		return g.version.String()
	}
	return g.version.String() + " " + d.controller
}

func pidList(pids []int) string {
	var b strings.Builder
	for i, p := range pids {
		if i == 10 {
			fmt.Fprintf(&b, " ...")
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(p))
	}
	return b.String()
}

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

func checkName(name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("cgroup: group name %q: want letters, digits, '_' or '-', starting with a letter or digit, at most 64 characters (no '/' or '.')", name)
	}
	return nil
}

// checkLimits validates what does not depend on the hierarchy.
func checkLimits(l Limits) error {
	if l.MemoryBytes < 0 || (l.MemoryBytes > 0 && l.MemoryBytes < minMemoryBytes) {
		return fmt.Errorf("cgroup: memory limit %d bytes: want 0 (no limit) or at least %d (1 MiB)", l.MemoryBytes, minMemoryBytes)
	}
	if l.CPUs != "" {
		if err := CheckCPUs(l.CPUs); err != nil {
			return fmt.Errorf("cgroup: %w", err)
		}
	}
	seen := map[string]bool{}
	for _, io := range l.IO {
		if err := checkDevice(io.Device); err != nil {
			return err
		}
		if seen[io.Device] {
			return fmt.Errorf("cgroup: IO device %s listed twice", io.Device)
		}
		seen[io.Device] = true
		if io.ReadIOPS < 0 || io.WriteIOPS < 0 || io.ReadBPS < 0 || io.WriteBPS < 0 {
			return fmt.Errorf("cgroup: IO device %s: negative limit", io.Device)
		}
	}
	return nil
}

var validDevice = regexp.MustCompile(`^[0-9]{1,10}:[0-9]{1,10}$`)

// checkDevice wants "major:minor" of a whole block device of this machine.
func checkDevice(dev string) error {
	if !validDevice.MatchString(dev) {
		return fmt.Errorf("cgroup: IO device %q: want major:minor, e.g. 8:0 (lsblk shows MAJ:MIN)", dev)
	}
	dir := filepath.Join(sysRoot, "dev/block", dev)
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("cgroup: IO device %s: no such block device (%s)", dev, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "partition")); err == nil {
		return fmt.Errorf("cgroup: IO device %s is a partition; throttle its whole disk (the device in %s)", dev, filepath.Join(dir, ".."))
	}
	return nil
}

// CheckCPUs refuses a CPU list that is not one, or names CPUs this machine does not
// have online: neither a cpuset nor sched_setaffinity could then apply it.
func CheckCPUs(list string) error {
	cpus, err := parseCPUList(list)
	if err != nil {
		return fmt.Errorf("cpuset %q: %w", list, err)
	}
	online, err := readCPUList(filepath.Join(sysRoot, "devices/system/cpu/online"))
	if err != nil {
		return fmt.Errorf("cpuset %q: %w", list, err)
	}
	if bad := missing(cpus, online); len(bad) > 0 {
		return fmt.Errorf("cpuset %q: %s %s not online; this machine's CPUs are %s",
			list, cpuWord(bad), formatCPUList(bad), formatCPUList(online))
	}
	return nil
}

// parseCPUList parses a kernel CPU list ("0-3,5") into sorted, distinct CPU numbers. An
// empty result is an error: an empty cpuset holds no process.
func parseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("empty CPU list")
	}
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := cpuNumber(lo)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", part, err)
		}
		b := a
		if isRange {
			if b, err = cpuNumber(hi); err != nil {
				return nil, fmt.Errorf("%q: %w", part, err)
			}
			if b < a {
				return nil, fmt.Errorf("%q: range runs backwards", part)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

// maxCPU bounds CPU numbers (the kernel's NR_CPUS is at most 8192).
const maxCPU = 8191

func cpuNumber(s string) (int, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, errors.New("want CPU numbers like 0-3 or 0,2")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > maxCPU {
		return 0, fmt.Errorf("CPU number %s out of range", s)
	}
	return n, nil
}

// formatCPUList is the kernel's form of a sorted CPU list: "0-3,5".
func formatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}

// readCPUList reads a CPU list file; an empty file is an empty list.
func readCPUList(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(string(b)) == "" {
		return nil, nil
	}
	cpus, err := parseCPUList(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cpus, nil
}

// cpuWord is "CPU" or "CPUs", for errors about the list cpus.
func cpuWord(cpus []int) string {
	if len(cpus) == 1 {
		return "CPU"
	}
	return "CPUs"
}

// missing is the CPUs of want not in have (both sorted).
func missing(want, have []int) []int {
	var out []int
	for _, c := range want {
		if _, ok := slices.BinarySearch(have, c); !ok {
			out = append(out, c)
		}
	}
	return out
}

// readFile reads a cgroup file, trimmed; where says which version and controller.
func readFile(where, dir, file string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return "", fmt.Errorf("%s: read %s: %w", where, file, unwrapPath(err))
	}
	return strings.TrimSpace(string(b)), nil
}

// writeFile writes one value to an existing cgroup file in a single write, as the kernel
// wants; errors read "cgroup v1 memory: write memory.limit_in_bytes=…: device or
// resource busy (/sys/fs/cgroup/…)".
func writeFile(where, dir, file, value string) error {
	path := filepath.Join(dir, file)
	if err := write(path, value+"\n"); err != nil {
		return fmt.Errorf("%s: write %s=%q: %w (%s)", where, file, value, unwrapPath(err), path)
	}
	return nil
}

// unwrapPath drops the *fs.PathError around an errno: the callers name the file.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// writable explains why dir cannot be written by this process, or returns nil. As root
// that is a read-only mount; otherwise also permissions (a delegated subtree is fine).
func writable(dir string) error {
	const wOK = 2
	if err := syscall.Access(dir, wOK); err != nil {
		if errors.Is(err, syscall.EROFS) {
			return fmt.Errorf("%s is mounted read-only", dir)
		}
		if uid := os.Geteuid(); uid != 0 {
			return fmt.Errorf("%s is not writable by uid %d (%v): run as root or delegate the subtree", dir, uid, err)
		}
		return fmt.Errorf("%s is not writable: %v", dir, err)
	}
	return nil
}

// makeDir creates dir if missing and tells whether this call created it.
func makeDir(where, dir string) (created bool, err error) {
	if err := mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, fmt.Errorf("%s: create %s: %w", where, dir, unwrapPath(err))
	}
	return true, nil
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// MemoryLimit is the memory limit in force, read from the group's file (v1
// memory.limit_in_bytes, v2 memory.max); 0 when the group has none.
func (g *Group) MemoryLimit() (int64, error) {
	if g.version == V1 {
		return g.v1MemoryLimit()
	}
	return g.v2MemoryLimit()
}

// OOMKills counts the processes of the group the kernel's OOM killer has killed since
// the group was made (v1 memory.oom_control, v2 memory.events: their oom_kill line).
func (g *Group) OOMKills() (int64, error) {
	if g.version == V1 {
		return g.v1OOMKills()
	}
	return g.v2OOMKills()
}

// keyedValue is the number on the "key N" line of a flat keyed cgroup file.
func keyedValue(where, dir, file, key string) (int64, error) {
	s, err := readFile(where, dir, file)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), " "); ok && k == key {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: %s: bad %s line %q", where, filepath.Join(dir, file), key, line)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("%s: %s has no %s line (kernel too old?)", where, filepath.Join(dir, file), key)
}

// CountCPUs is how many CPUs a kernel CPU list ("0-3,5") names; 0 when it is not one.
func CountCPUs(list string) int {
	cpus, err := parseCPUList(list)
	if err != nil {
		return 0
	}
	return len(cpus)
}
