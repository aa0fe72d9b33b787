package metrics

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/instance/cgroup"
)

// CgroupCPU names a control group whose CPU time is sampled: a managed instance's,
// which holds every process of its server.
type CgroupCPU struct {
	// Server tells the groups apart in the figures, as Server.Name ("" for the only one).
	Server string
	// Dirs are the group's directories by controller under cgroup v1 ("cpuacct" for
	// the time used; "cpu", when the group is in it, for a quota and its throttling),
	// or its one directory under "" (cgroup v2, whose cpu.stat has all of them).
	Dirs map[string]string
	// CPUs is how many CPUs the group's cpuset allows, and Cpuset whether that is a
	// limit of the group's or the host's CPUs.
	CPUs   int
	Cpuset bool
	// IOLimit is the group's I/O throttle, nil when none.
	IOLimit *IOLimit
}

// IOLimit is a group's I/O throttle on one disk (0: no limit of that kind).
type IOLimit struct {
	Device    string  `json:"device"` // as /proc/diskstats names it
	ReadIOPS  float64 `json:"read_iops,omitempty"`
	WriteIOPS float64 `json:"write_iops,omitempty"`
	ReadMBps  float64 `json:"read_mb_s,omitempty"` // 10^6 bytes per second
	WriteMBps float64 `json:"write_mb_s,omitempty"`
}

// GroupCPU is a control group's CPU use over an interval.
type GroupCPU struct {
	Server string `json:"server,omitempty"`
	// UsedCPUs is the CPU time the group's processes used per second: 1.5 is a CPU
	// and a half busy all along.
	UsedCPUs float64 `json:"used_cpus"`
	// LimitCPUs is what the group may use: its CFS quota (quota ÷ period) or its
	// cpuset's CPU count, the lower; 0 when it has neither (every CPU of the host).
	LimitCPUs float64 `json:"limit_cpus,omitempty"`
	// Limited: the limit is the group's (a cpuset or a quota), not the host's CPUs.
	Limited bool `json:"limited,omitempty"`
	// WaitCPUs is the time its tasks were runnable but waiting for a CPU, per
	// second (/proc/TID/schedstat): CPU it wanted and did not get, from its limit or
	// from other processes on its CPUs.
	WaitCPUs float64 `json:"wait_cpus"`
	// IOLimit is its I/O throttle, for comparing the disk's rates with it.
	IOLimit *IOLimit `json:"io_limit,omitempty"`
	// ThrottledPct is the share of the quota's periods in which the group ran out of
	// quota and was stopped, and ThrottledSeconds the time it was stopped (per CPU
	// it ran on, summed); both absent without a quota.
	ThrottledPct     *float64 `json:"throttled_pct,omitempty"`
	ThrottledSeconds *float64 `json:"throttled_s,omitempty"`
	delta            groupCounters
	seconds          float64
	cpus             int // the cpuset's
	cpuset           bool
}

// groupCounters are a group's cumulative CPU counters, in base units.
type groupCounters struct {
	usage     float64 // seconds of CPU
	wait      float64 // seconds runnable, not running
	periods   uint64
	throttled uint64  // periods throttled
	stopped   float64 // seconds throttled
	quota     float64 // CPUs, 0: none (a level, not a counter)
}

func (c groupCounters) minus(p groupCounters) groupCounters {
	return groupCounters{usage: max(c.usage-p.usage, 0), wait: c.wait, periods: counterDelta(p.periods, c.periods),
		throttled: counterDelta(p.throttled, c.throttled), stopped: max(c.stopped-p.stopped, 0), quota: c.quota}
}

func (c groupCounters) plus(o groupCounters) groupCounters {
	return groupCounters{usage: c.usage + o.usage, wait: c.wait + o.wait, periods: c.periods + o.periods, throttled: c.throttled + o.throttled,
		stopped: c.stopped + o.stopped, quota: o.quota}
}

// cgroupCPUSource labels the figures in the result.
const cgroupCPUSource = "the instance's cgroup: v1 cpuacct.usage, cpu.stat (nr_periods, nr_throttled, throttled_time) and cpu.cfs_quota_us ÷ cpu.cfs_period_us; v2 cpu.stat (usage_usec, nr_periods, nr_throttled, throttled_usec) and cpu.max; used = CPU seconds per second; limit = the quota or the cpuset's CPUs, the lower"

// groupCPUFigures turns an interval's deltas into rates.
func groupCPUFigures(server string, cpus int, cpuset bool, io *IOLimit, d groupCounters, seconds float64) GroupCPU {
	g := GroupCPU{Server: server, LimitCPUs: float64(cpus), Limited: cpuset, IOLimit: io, delta: d, seconds: seconds, cpus: cpus, cpuset: cpuset}
	if d.quota > 0 && (cpus == 0 || d.quota < float64(cpus)) {
		g.LimitCPUs, g.Limited = d.quota, true
	}
	if seconds > 0 {
		g.UsedCPUs, g.WaitCPUs = d.usage/seconds, d.wait/seconds
	}
	if d.quota > 0 && seconds > 0 {
		stopped := d.stopped / seconds
		g.ThrottledSeconds = &stopped
		var pct float64
		if d.periods > 0 {
			pct = 100 * float64(d.throttled) / float64(d.periods)
		}
		g.ThrottledPct = &pct
	}
	return g
}

// cgroupCPUCollector samples groups' CPU counters.
type cgroupCPUCollector struct {
	groups []CgroupCPU
	prev   []groupCounters
	// delays are each group's tasks' run-queue delays at the previous reading, by
	// task id: tasks come and go, so the interval's wait is summed task by task.
	delays []map[string]uint64
	clock
	prevAt time.Time
}

// NewCgroupCPU samples the groups' CPU time, quota and throttling.
func NewCgroupCPU(groups []CgroupCPU) Collector {
	return &cgroupCPUCollector{groups: groups}
}

func (c *cgroupCPUCollector) Collect(_ context.Context, s *Sample) error {
	cur := make([]groupCounters, len(c.groups))
	if c.delays == nil {
		c.delays = make([]map[string]uint64, len(c.groups))
	}
	for i, g := range c.groups {
		var err error
		if cur[i], err = readGroupCPU(g.Dirs); err != nil {
			return err
		}
		var wait uint64
		wait, c.delays[i] = runQueueWait(g.Dirs, c.delays[i])
		cur[i].wait = float64(wait) / 1e9
	}
	now := c.clock.read()
	if c.prev != nil {
		seconds := now.Sub(c.prevAt).Seconds()
		for i, g := range c.groups {
			s.GroupCPU = append(s.GroupCPU, groupCPUFigures(g.Server, g.CPUs, g.Cpuset, g.IOLimit, cur[i].minus(c.prev[i]), seconds))
		}
	}
	c.prev, c.prevAt = cur, now
	return nil
}

// readGroupCPU reads a group's counters from its v2 directory (dirs[""]) or its v1
// cpuacct and cpu directories.
func readGroupCPU(dirs map[string]string) (groupCounters, error) {
	if dir, ok := dirs[""]; ok {
		return readGroupCPUv2(dir)
	}
	var g groupCounters
	acct, ok := dirs["cpuacct"]
	if !ok {
		return g, fmt.Errorf("the group is not in the cpuacct hierarchy: no CPU time to read")
	}
	ns, err := readUint(filepath.Join(acct, "cpuacct.usage"))
	if err != nil {
		return g, err
	}
	g.usage = float64(ns) / 1e9
	cpu, ok := dirs["cpu"]
	if !ok {
		return g, nil // no quota: nothing throttles the group
	}
	g.quota = cgroup.CPUQuota(cpu)
	stat, err := keyed(filepath.Join(cpu, "cpu.stat"))
	if err != nil {
		return g, err
	}
	g.periods, g.throttled, g.stopped = stat["nr_periods"], stat["nr_throttled"], float64(stat["throttled_time"])/1e9
	return g, nil
}

// readGroupCPUv2 reads cpu.stat (its usage lines are there without the cpu
// controller, its throttling lines with it) and cpu.max ("max 100000": no quota).
func readGroupCPUv2(dir string) (groupCounters, error) {
	var g groupCounters
	stat, err := keyed(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return g, err
	}
	g.usage = float64(stat["usage_usec"]) / 1e6
	g.periods, g.throttled, g.stopped = stat["nr_periods"], stat["nr_throttled"], float64(stat["throttled_usec"])/1e6
	g.quota = cgroup.CPUQuota(dir)
	return g, nil
}

// RunQueueDelay is a task's time runnable but not running, in ns: the second field
// of its schedstat file (/proc/TID/schedstat); false when unreadable (the task ended).
func RunQueueDelay(schedstat string) (uint64, bool) {
	b, err := os.ReadFile(schedstat)
	f := strings.Fields(string(b))
	if err != nil || len(f) < 2 {
		return 0, false
	}
	ns, err := strconv.ParseUint(f[1], 10, 64)
	return ns, err == nil
}

// runQueueWait is the run-queue delay the group's tasks (v1 tasks, v2 cgroup.threads)
// added since prev, and their delays now; a task gone since took its last part
// with it. Unreadable, it is 0: the other figures stand.
func runQueueWait(dirs map[string]string, prev map[string]uint64) (uint64, map[string]uint64) {
	list := filepath.Join(dirs[""], "cgroup.threads")
	if dir, ok := dirs["cpuacct"]; ok {
		list = filepath.Join(dir, "tasks")
	}
	b, err := os.ReadFile(list)
	if err != nil {
		return 0, prev
	}
	cur := map[string]uint64{}
	var wait uint64
	for _, tid := range strings.Fields(string(b)) {
		ns, ok := RunQueueDelay(filepath.Join("/proc", tid, "schedstat"))
		if !ok {
			continue
		}
		cur[tid] = ns
		if p, ok := prev[tid]; ok && ns >= p {
			wait += ns - p
		}
	}
	return wait, cur
}

// readUint reads a file holding one number.
func readUint(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// keyed reads a flat keyed file ("key value" lines) of numbers.
func keyed(path string) (map[string]uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: line %q: %w", path, sc.Text(), err)
		}
		out[k] = n
	}
	return out, nil
}
