package driver

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// cpuReading is this process's CPU time and the time its threads waited, runnable,
// for a CPU, at one instant.
type cpuReading struct {
	usage syscall.Rusage
	// runDelay is the sum of /proc/self/task/*/schedstat's second field, seconds on
	// a run queue not running (CFS throttling included); -1 when unreadable. A thread
	// that exited takes its share with it (Go rarely ends its threads).
	runDelay float64
}

func readCPU() cpuReading {
	r := cpuReading{runDelay: runDelay()}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r.usage)
	return r
}

func runDelay() float64 {
	tasks, err := filepath.Glob("/proc/self/task/*/schedstat")
	if err != nil || len(tasks) == 0 {
		return -1
	}
	var ns uint64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended
		}
		f := bytes.Fields(b)
		if len(f) < 2 {
			return -1
		}
		n, err := strconv.ParseUint(string(f[1]), 10, 64)
		if err != nil {
			return -1
		}
		ns += n
	}
	return float64(ns) / 1e9
}

// cgroupRoot is where the cgroup hierarchies are mounted; tests point it at fixtures.
var cgroupRoot = "/sys/fs/cgroup"

// cpuQuota is the CPUs this process's cgroups let it use, the lowest CFS quota of its
// cgroup and their parents (v1 cpu.cfs_quota_us ÷ cpu.cfs_period_us, v2 cpu.max); 0
// when none is set or it cannot be read. GOMAXPROCS does not show it once set: a
// driver held to a tenth of a CPU by its cgroup still has one P.
func cpuQuota() float64 {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	var quota float64
	lower := func(q float64) {
		if q > 0 && (quota == 0 || q < quota) {
			quota = q
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		// "N:controllers:/path": v1 names its controllers, v2 has "0::".
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var dir string
		switch {
		case parts[1] == "":
			dir = filepath.Join(cgroupRoot, parts[2])
			if _, err := os.Stat(filepath.Join(cgroupRoot, "unified")); err == nil {
				dir = filepath.Join(cgroupRoot, "unified", parts[2])
			}
		case slices.Contains(strings.Split(parts[1], ","), "cpu"):
			dir = filepath.Join(cgroupRoot, parts[1], parts[2])
		default:
			continue
		}
		for d := dir; strings.HasPrefix(d, cgroupRoot); d = filepath.Dir(d) {
			lower(quotaIn(d))
		}
	}
	return quota
}

// quotaIn is the CFS quota of one cgroup directory in CPUs, 0 for none.
func quotaIn(dir string) float64 {
	if b, err := os.ReadFile(filepath.Join(dir, "cpu.max")); err == nil {
		q, p, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
		return ratio(q, p)
	}
	q, err1 := os.ReadFile(filepath.Join(dir, "cpu.cfs_quota_us"))
	p, err2 := os.ReadFile(filepath.Join(dir, "cpu.cfs_period_us"))
	if err1 != nil || err2 != nil {
		return 0
	}
	return ratio(strings.TrimSpace(string(q)), strings.TrimSpace(string(p)))
}

// ratio is quota ÷ period, 0 for "max", -1 or anything not a number.
func ratio(quota, period string) float64 {
	q, err1 := strconv.ParseFloat(quota, 64)
	p, err2 := strconv.ParseFloat(period, 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0
	}
	return q / p
}
