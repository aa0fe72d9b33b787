package metrics

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/testsupport/cgrouptest"
)

// A busy loop in a cgroup of its own, held to half a CPU by a CFS quota: the collector
// reports the CPU time the loop's process was charged (its /proc/PID/stat utime +
// stime over the same interval), at most the quota, the quota as the limit, and the
// throttling the quota caused.
func TestCgroupCPUOfABusyLoop(t *testing.T) {
	group := cgrouptest.CPU(t, 50000, 100000)
	group.Favour(t)
	loop := exec.Command("sh", "-c", "read _; while :; do :; done")
	loop.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := loop.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := loop.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-loop.Process.Pid, syscall.SIGKILL)
		_ = loop.Wait()
	})
	group.Add(t, loop.Process.Pid)
	stdin.Close() // the loop starts inside the group

	c := NewCgroupCPU([]CgroupCPU{{Dirs: group.Dirs}})
	var s Sample
	if err := c.Collect(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	before, start := processCPU(t, loop.Process.Pid), time.Now()
	time.Sleep(3 * time.Second)
	if err := c.Collect(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	charged := (processCPU(t, loop.Process.Pid) - before) / time.Since(start).Seconds()
	if len(s.GroupCPU) != 1 {
		t.Fatalf("figures of %d groups, want 1: %+v", len(s.GroupCPU), s.GroupCPU)
	}
	g := s.GroupCPU[0]
	t.Logf("used %.3f CPUs (the process was charged %.3f), limit %g, throttled in %.0f%% of the periods, %.3f s/s",
		g.UsedCPUs, charged, g.LimitCPUs, *g.ThrottledPct, *g.ThrottledSeconds)
	// /proc/PID/stat counts in 10 ms ticks: 3 s of half a CPU is 150 of them.
	if d := g.UsedCPUs - charged; d < -0.03 || d > 0.03 {
		t.Errorf("used %.3f CPUs, but the loop was charged %.3f", g.UsedCPUs, charged)
	}
	if g.UsedCPUs > 0.55 {
		t.Errorf("used %.3f CPUs, more than the quota of 0.5", g.UsedCPUs)
	}
	if g.LimitCPUs != 0.5 {
		t.Errorf("limit %g CPUs, want the quota's 0.5", g.LimitCPUs)
	}
	// A loop that wants a whole CPU runs out of a half-CPU quota in every period
	// it gets its half in; favoured, it gets its half even on a busy machine.
	if *g.ThrottledPct <= 0 || *g.ThrottledSeconds <= 0 {
		t.Errorf("throttled in %.0f%% of the periods, %.3f s/s: want throttling", *g.ThrottledPct, *g.ThrottledSeconds)
	}
	if charged >= 0.45 && *g.ThrottledPct < 50 {
		t.Errorf("the loop got %.3f CPU, near its quota, but was throttled in only %.0f%% of the periods", charged, *g.ThrottledPct)
	}
}

// processCPU is a process's user + system time in seconds (/proc/PID/stat).
func processCPU(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / userHZ
}

// cgroup v2's files: usage, throttling and the quota from cpu.stat and cpu.max, and the
// cpuset's CPUs as the limit when lower than the quota.
func TestCgroupCPUv2(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stat := "usage_usec %d\nuser_usec 1\nsystem_usec 1\nnr_periods %d\nnr_throttled %d\nthrottled_usec %d\nnr_bursts 0\nburst_usec 0\n"
	write("cpu.stat", fmt.Sprintf(stat, 1_000_000, 10, 0, 0))
	write("cpu.max", "150000 100000\n")
	now := time.Unix(100, 0)
	c := &cgroupCPUCollector{groups: []CgroupCPU{{Server: "a", Dirs: map[string]string{"": dir}, CPUs: 1, Cpuset: true}}, clock: clock{func() time.Time { return now }}}
	var s Sample
	if err := c.Collect(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	write("cpu.stat", fmt.Sprintf(stat, 3_000_000, 30, 5, 400_000))
	now = now.Add(2 * time.Second)
	if err := c.Collect(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	g := s.GroupCPU[0]
	approx(t, "used", g.UsedCPUs, 1)
	approx(t, "limit (the cpuset's 1, below the quota's 1.5)", g.LimitCPUs, 1)
	approx(t, "throttled %", *g.ThrottledPct, 25)
	approx(t, "throttled s/s", *g.ThrottledSeconds, 0.2)

	// Without a quota: no throttling figures, and the cpuset is the limit.
	write("cpu.max", "max 100000\n")
	s = Sample{}
	if err := c.Collect(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	if g := s.GroupCPU[0]; g.ThrottledPct != nil || g.LimitCPUs != 1 {
		t.Errorf("without a quota: %+v", g)
	}
	sum := Summarize([]Sample{{T: 1, Seconds: 1, GroupCPU: []GroupCPU{groupCPUFigures("a", 2, true, nil, groupCounters{usage: 1}, 1)}},
		{T: 2, Seconds: 1, GroupCPU: []GroupCPU{groupCPUFigures("a", 2, true, nil, groupCounters{usage: 2}, 1)}}}, 0, 2)
	if len(sum.GroupCPU) != 1 || !near(sum.GroupCPU[0].UsedCPUs, 1.5) || sum.GroupCPU[0].LimitCPUs != 2 {
		t.Errorf("window: %+v", sum.GroupCPU)
	}
}
