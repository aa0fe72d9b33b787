package driver

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/storbench/storbench/internal/metrics"
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
		n, _ := metrics.RunQueueDelay(t) // 0 for a thread that ended
		ns += n
	}
	return float64(ns) / 1e9
}

// cgroupRoot is where the cgroup hierarchies are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// cpuQuota is the CPUs this process's cgroups let it use, the lowest CFS quota of its
// cgroups and their parents; 0 when none is set or it cannot be read. GOMAXPROCS does
// not show it once set: a driver held to a tenth of a CPU by its cgroup still has one P.
func cpuQuota() float64 {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	var quota float64
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
			if q := metrics.CPUQuota(d); q > 0 && (quota == 0 || q < quota) {
				quota = q
			}
		}
	}
	return quota
}
