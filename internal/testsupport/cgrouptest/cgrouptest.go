// Package cgrouptest gives a test a cgroup v1 group of its own in the cpu and cpuacct
// hierarchies, with a CFS quota: a process put in it gets at most that share of a CPU,
// and the group's files count what it used and how often the quota stopped it.
package cgrouptest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Group is a test's group.
type Group struct {
	// Dirs are its directories by controller ("cpu", "cpuacct").
	Dirs map[string]string
}

// CPU makes a group held to quota µs of CPU per period µs and removes it when the
// test ends (register the cleanup that kills its processes after calling CPU: cleanups
// run last-registered first). It skips the test when not root or without the v1
// hierarchies.
func CPU(t testing.TB, quota, period int) *Group {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: cannot make a cgroup")
	}
	g := &Group{Dirs: map[string]string{}}
	for _, c := range []string{"cpu", "cpuacct"} {
		root := filepath.Join("/sys/fs/cgroup", c)
		if _, err := os.Stat(filepath.Join(root, "tasks")); err != nil {
			t.Skipf("no cgroup v1 %s hierarchy at %s", c, root)
		}
		dir := filepath.Join(root, fmt.Sprintf("storbench-test-%d-%s", os.Getpid(), filepath.Base(t.Name())))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			for range 100 { // a killed process leaves the group once reaped
				if err := syscall.Rmdir(dir); err == nil {
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Errorf("cannot remove %s", dir)
		})
		g.Dirs[c] = dir
	}
	for file, v := range map[string]int{"cpu.cfs_period_us": period, "cpu.cfs_quota_us": quota} {
		if err := os.WriteFile(filepath.Join(g.Dirs["cpu"], file), []byte(strconv.Itoa(v)), 0); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

// Favour gives the group the most CPU shares cgroup v1 allows, so that on a busy
// machine its processes are first in line for CPU time up to the quota: a test that
// wants to see the quota throttle them needs them to reach it (under a load of 10 a
// busy loop at the default shares got 0.29 of a 0.5 CPU quota and was never throttled).
func (g *Group) Favour(t testing.TB) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(g.Dirs["cpu"], "cpu.shares"), []byte("262144"), 0); err != nil {
		t.Fatal(err)
	}
}

// Add moves a process into the group.
func (g *Group) Add(t testing.TB, pid int) {
	t.Helper()
	for _, d := range g.Dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			t.Fatal(err)
		}
	}
}
