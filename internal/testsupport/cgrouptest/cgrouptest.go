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

// Add moves a process into the group.
func (g *Group) Add(t testing.TB, pid int) {
	t.Helper()
	for _, d := range g.Dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			t.Fatal(err)
		}
	}
}
