package driver

import (
	"path/filepath"
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
