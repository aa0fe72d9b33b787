package instance

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/bytesize"
	"github.com/storbench/storbench/internal/instance/cgroup"
)

// applyLimits puts the server's processes (pid and the children it has forked) under
// the instance's memory, CPU and I/O limits: a cgroup where storbench may create one, which
// limits memory including the page cache; otherwise CPU affinity only, and a memory
// limit that is NOT applied, said in capitals because the instance can then read its
// database from the host's page cache and a storage test is not I/O-bound. Backends
// forked later inherit both from the server's main process.
func applyLimits(st *State, pid int, groupName string) (applied []string, group string) {
	st.IOThrottle = nil
	if st.MemoryBytes == 0 && st.CPUs == "" && st.IOLimit.Zero() {
		return []string{"no memory, CPU or I/O limit asked"}, ""
	}
	pids := processTree(pid)
	limits := cgroup.Limits{MemoryBytes: st.MemoryBytes, CPUs: st.CPUs}
	if !st.IOLimit.Zero() {
		// A data directory on no block device cannot be throttled; the other limits
		// still apply.
		if disk, derr := diskOf(st.Path); derr != nil {
			applied = append(applied, fmt.Sprintf("I/O LIMIT NOT APPLIED: %v", derr))
		} else {
			l := st.IOLimit
			limits.IO = []cgroup.IOLimit{{Device: disk, ReadIOPS: l.ReadIOPS, WriteIOPS: l.WriteIOPS, ReadBPS: l.ReadBPS, WriteBPS: l.WriteBPS}}
		}
	}
	_, err := cgroup.Support()
	if err == nil {
		var g *cgroup.Group
		if g, err = cgroup.Create(groupName, limits); err == nil {
			for _, p := range pids {
				if err == nil {
					err = ignoreGone(g.Add(p))
				}
			}
			if err == nil {
				applied = append(applied, g.Applied()...)
				if len(limits.IO) > 0 {
					st.IOThrottle = &IOThrottle{Limit: st.IOLimit, Device: limits.IO[0].Device, Cgroup: int(g.Version())}
					applied = append(applied, st.IOThrottle.Mechanism())
				}
				return applied, groupName
			}
			// Some processes are in the group, some not: say so; Stop removes it.
			return append(applied, fmt.Sprintf("LIMITS PARTLY APPLIED: %v: restart the instance", err)), groupName
		}
	}
	if st.CPUs != "" {
		if aerr := setAffinity(pids, st.CPUs); aerr != nil {
			applied = append(applied, fmt.Sprintf("CPU LIMIT NOT APPLIED: %v", aerr))
		} else {
			applied = append(applied, fmt.Sprintf("cpus %s by sched_setaffinity (cgroup unavailable: %v)", st.CPUs, err))
		}
	}
	if st.MemoryBytes > 0 {
		applied = append(applied, fmt.Sprintf(memoryNotApplied+" (%v): only the server's caches are sized; it can read its data from the host's page cache, so results are not storage-bound", err))
	}
	if len(limits.IO) > 0 {
		applied = append(applied, fmt.Sprintf("I/O LIMIT NOT APPLIED (%v): the storage runs at its own speed", err))
	}
	return applied, ""
}

// cgroupName is the instance's cgroup: cgroups are machine-wide while a registry is
// one STORBENCH_HOME's, so the name carries a hash of the registry's absolute path and
// the instance's name; the instance name leads it for people reading /sys/fs/cgroup.
func (r Registry) cgroupName(name string) string {
	dir, err := filepath.Abs(r.Dir)
	if err != nil {
		dir = r.Dir
	}
	sum := sha256.Sum256([]byte(dir + "\x00" + name))
	const keep = 64 - 1 - 8 // cgroup names are at most 64 characters
	return fmt.Sprintf("%s-%x", name[:min(len(name), keep)], sum[:4])
}

// enforced reads the memory limit the instance's cgroup enforces now and compares it
// with the one asked: another process (an instance of another registry, before
// cgroup names were per registry, or a person) may have changed or removed it.
func enforced(st *State) string {
	if st.Cgroup == "" {
		return ""
	}
	g, err := cgroup.Open(st.Cgroup)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("LIMITS NOT IN FORCE: cgroup storbench/%s is gone: restart the instance", st.Cgroup)
	}
	if err != nil {
		return fmt.Sprintf("LIMITS UNKNOWN: %v", err)
	}
	have, err := g.MemoryLimit()
	if err != nil {
		return fmt.Sprintf("MEMORY LIMIT UNKNOWN: %v", err)
	}
	// The kernel rounds a limit down to whole pages.
	want := st.MemoryBytes &^ int64(os.Getpagesize()-1)
	if have != want {
		return fmt.Sprintf("MEMORY LIMIT MISMATCH: cgroup storbench/%s enforces %s, not the %s asked (changed by another process): restart the instance",
			st.Cgroup, memoryText(have), memoryText(st.MemoryBytes))
	}
	return fmt.Sprintf("memory %s enforced by cgroup storbench/%s (read now)", memoryText(have), st.Cgroup)
}

// memoryText is a memory limit for people: "1GB", or "no limit".
func memoryText(n int64) string {
	if n == 0 {
		return "no limit"
	}
	return bytesize.Format(n)
}

// oomKills is how many of the instance's processes the kernel's OOM killer has killed
// in its cgroup.
func oomKills(st *State) (int64, error) {
	if st.Cgroup == "" {
		return 0, fmt.Errorf("instance %s has no cgroup", st.Name)
	}
	g, err := cgroup.Open(st.Cgroup)
	if err != nil {
		return 0, err
	}
	return g.OOMKills()
}

// OOMKilled is one sentence saying that the kernel's OOM killer killed processes of
// the instance (a backend, the server) since the lease began, with the limit and what
// to do; "" when it did not or it cannot be told.
func (l *Lease) OOMKilled() string {
	if l == nil || l.oomBase < 0 {
		return ""
	}
	kills, err := oomKills(l.st)
	if err != nil || kills <= l.oomBase {
		return ""
	}
	limit := memoryText(l.st.MemoryBytes)
	if g, err := cgroup.Open(l.st.Cgroup); err == nil {
		if n, err := g.MemoryLimit(); err == nil {
			limit = memoryText(n)
		}
	}
	return fmt.Sprintf("the kernel's OOM killer killed %d process(es) of instance %s (cgroup storbench/%s, memory limit %s): recreate it with a larger --memory (its caches are sized as a share of it) or drive it with fewer connections",
		kills-l.oomBase, l.st.Name, l.st.Cgroup, limit)
}

// Explain puts OOMKilled before err when the OOM killer struck: the client only saw
// its connection closed.
func (l *Lease) Explain(err error) error {
	if err == nil {
		return nil
	}
	if why := l.OOMKilled(); why != "" {
		return fmt.Errorf("%s: %w", why, err)
	}
	return err
}

// releaseLimits removes the instance's cgroup once its processes are gone (the server
// may still be exiting when pg_ctl stop returns).
func releaseLimits(st *State) error {
	if st.Cgroup == "" {
		return nil
	}
	g, err := cgroup.Open(st.Cgroup)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if pids, err := g.Pids(); err != nil || len(pids) == 0 {
			break
		}
	}
	return g.Destroy()
}

// processTree is pid and its descendants, from /proc's children lists.
func processTree(pid int) []int {
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", out[i]))
		for _, t := range tasks {
			b, _ := os.ReadFile(t)
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// setAffinity pins every pid to the CPU list ("0-1,3").
func setAffinity(pids []int, cpus string) error {
	var set unix.CPUSet
	for _, part := range strings.Split(cpus, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a {
			return fmt.Errorf("CPU list %q is not like 0-1 or 0,2", cpus)
		}
		for c := a; c <= b; c++ {
			set.Set(c)
		}
	}
	// The kernel would silently narrow a set to the CPUs that exist: refuse instead.
	var have unix.CPUSet
	if err := unix.SchedGetaffinity(0, &have); err == nil {
		for c := range 1024 {
			if set.IsSet(c) && !have.IsSet(c) {
				return fmt.Errorf("CPU list %q: CPU %d is not available here (this process may use %d CPUs)", cpus, c, have.Count())
			}
		}
	}
	for _, p := range pids {
		if err := ignoreGone(unix.SchedSetaffinity(p, &set)); err != nil {
			return fmt.Errorf("sched_setaffinity %d: %w", p, err)
		}
	}
	return nil
}

// ignoreGone drops the error of a process that exited meanwhile (a short-lived child
// seen in the process tree): there is nothing left to limit.
func ignoreGone(err error) error {
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	return err
}

func removeFile(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// memoryNotApplied opens the limit line of an instance whose memory limit no cgroup
// holds.
const memoryNotApplied = "MEMORY LIMIT NOT APPLIED"

// MemoryLimitApplied tells whether the instance's last start put its memory limit in
// force (false also when it asks for none); it holds while the instance is stopped.
func (st *State) MemoryLimitApplied() bool {
	return st.MemoryBytes > 0 && !slices.ContainsFunc(st.Limits, func(l string) bool { return strings.HasPrefix(l, memoryNotApplied) })
}

// Unapplied are the lines of limits (State.Limits, or what a start returned) that name
// a limit the instance runs without: not applied, or only partly.
func Unapplied(limits []string) []string {
	var out []string
	for _, l := range limits {
		if strings.Contains(l, "NOT APPLIED") || strings.Contains(l, "PARTLY APPLIED") {
			out = append(out, l)
		}
	}
	return out
}

// CacheSize is the engine's cache setting that the instance's memory sized
// (PostgreSQL's shared_buffers, MariaDB's innodb_buffer_pool_size); "" when unknown.
func (st *State) CacheSize() string {
	srv, ok := servers[st.Engine]
	if !ok {
		return ""
	}
	return st.Settings[srv.CacheSetting()]
}
