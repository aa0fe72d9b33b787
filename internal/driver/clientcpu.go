package driver

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
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
