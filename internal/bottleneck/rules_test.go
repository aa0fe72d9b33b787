package bottleneck

import (
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/procrole"
)

// The rules on windows made of the figures each kind of bottleneck shows (the
// constructed ones against real servers are in cmd/storbench/bottleneck_test.go),
// and where rules compete, which wins.
func TestRules(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	waits := func(shares map[string]float64) *metrics.Waits {
		return &metrics.Waits{Source: "test", Roles: []metrics.RoleWaits{{Role: procrole.Clients, Seconds: shares, IntervalSeconds: 10}}}
	}
	dataDisk := []metrics.Disk{{Device: "loop1", Roles: []string{"data", "wal"}, ReadIOPS: 199, ReadAwaitMs: 0.3, WriteIOPS: 50, WriteAwaitMs: 0.5, BusyPct: 10},
		{Device: "vda", Roles: []string{"data", "wal"}, ReadIOPS: 10, WriteIOPS: 2000, WriteAwaitMs: 0.1}}
	idle := &metrics.CPU{User: 20, System: 10, Idle: 60, IOWait: 10}
	busy := &metrics.CPU{User: 70, System: 25, Idle: 3, IOWait: 2}
	oneCPU := []metrics.GroupCPU{{UsedCPUs: 0.8, WaitCPUs: 1.5, LimitCPUs: 1, Limited: true}}
	throttled := []metrics.GroupCPU{{UsedCPUs: 0.1, WaitCPUs: 0.3, LimitCPUs: 2, IOLimit: &metrics.IOLimit{Device: "loop1", ReadIOPS: 200}}}
	driver := Driver{CPUs: 1, Users: 4, Utilization: 0.05, Demand: f(0.06)}
	for _, c := range []struct {
		name   string
		sum    metrics.Summary
		driver Driver
		want   string // the detail's start
	}{
		{"the driver ran or waited all along", metrics.Summary{CPU: idle}, Driver{CPUs: 1, Users: 4, Utilization: 0.01, Demand: f(1.01)}, "client"},
		{"the driver's demand unknown: its CPU use", metrics.Summary{CPU: idle}, Driver{CPUs: 1, Users: 4, Utilization: 0.95}, "client"},
		{"the driver used its cgroup's quota, the host busy", metrics.Summary{CPU: busy}, Driver{CPUs: 1, Users: 4, Utilization: 0.0099, Demand: f(0.66), QuotaCPUs: 0.01}, "client (the driver, its cgroup's quota of 0.01 CPU)"},
		{"a quota above the client CPUs is not the driver's limit", metrics.Summary{CPU: busy}, Driver{CPUs: 1, Users: 4, Utilization: 0.5, Demand: f(0.6), QuotaCPUs: 2}, "cpu (database host)"},
		{"sessions wait for the client", metrics.Summary{CPU: idle, Waits: waits(map[string]float64{"client": 30, "cpu": 10})}, driver, "client"},
		{"instance at its cpuset's one CPU", metrics.Summary{CPU: idle, GroupCPU: oneCPU}, driver, "cpu (instance limit 1 CPU)"},
		{"reads at the instance's I/O throttle, host busy with others", metrics.Summary{CPU: busy, Disks: dataDisk, GroupCPU: throttled}, driver, "storage (reads at the instance's I/O limit)"},
		{"host busy, nothing else", metrics.Summary{CPU: busy, Disks: dataDisk}, driver, "cpu (database host)"},
		{"iowait, no delay accounting", metrics.Summary{CPU: &metrics.CPU{User: 10, System: 5, Idle: 45, IOWait: 40}, Disks: dataDisk}, driver, "storage (reads)"},
		{"nothing saturated", metrics.Summary{CPU: idle, Disks: dataDisk}, driver, "mixed"},
		{"waits: data-file reads", metrics.Summary{CPU: busy, Waits: waits(map[string]float64{"data_io": 25, "wal": 5, "cpu": 15})}, driver, "storage (reads)"},
		{"waits: the WAL", metrics.Summary{CPU: idle, Waits: waits(map[string]float64{"data_io": 2, "wal": 25, "cpu": 15})}, driver, "storage (WAL)"},
		{"waits: the WAL, the instance's one CPU oversubscribed, the disk idle", metrics.Summary{CPU: busy, Disks: dataDisk, GroupCPU: oneCPU,
			Waits: waits(map[string]float64{"wal": 25, "cpu": 10})}, driver, "cpu (instance limit 1 CPU), its waits on storage queued behind the CPU"},
		{"waits: reads, the instance's CPU oversubscribed, at its I/O throttle", metrics.Summary{CPU: busy, Disks: dataDisk,
			GroupCPU: []metrics.GroupCPU{{UsedCPUs: 1, WaitCPUs: 1, LimitCPUs: 1, Limited: true, IOLimit: &metrics.IOLimit{Device: "loop1", ReadIOPS: 200}}},
			Waits:    waits(map[string]float64{"data_io": 25, "cpu": 10})}, driver, "storage (reads)"},
		{"waits: row locks on a busy host", metrics.Summary{CPU: busy, Waits: waits(map[string]float64{"lock": 30, "lwlock": 5, "cpu": 20})}, driver, "locks (rows)"},
		{"waits: on CPU, host saturated", metrics.Summary{CPU: busy, Waits: waits(map[string]float64{"cpu": 30, "data_io": 3})}, driver, "cpu (database host)"},
		{"waits: on CPU, host not saturated", metrics.Summary{CPU: idle, Waits: waits(map[string]float64{"cpu": 30, "data_io": 10})}, driver, "mixed (cpu, storage)"},
	} {
		v := Judge(&c.sum, c.driver)
		if v == nil || !strings.HasPrefix(v.Detail, c.want) || len(v.Figures) == 0 {
			t.Errorf("%s: %s, want %s…", c.name, v, c.want)
			continue
		}
		if (c.sum.Waits == nil) != (v.Note != "") {
			t.Errorf("%s: note %q: want one exactly when no wait shares were sampled", c.name, v.Note)
		}
	}
	if v := Judge(&metrics.Summary{}, driver); v != nil {
		t.Errorf("a window without figures: %s, want none", v)
	}
}

// The one line the run summary prints.
func TestVerdictLine(t *testing.T) {
	v := &Verdict{Kind: Storage, Detail: "storage (reads)", Figures: []Figure{
		{Name: "data disk busy", Value: 97, Unit: "%"}, {Name: "data disk read await", Value: 8.14, Unit: "ms"},
		{Name: "backends waited on data-file I/O", Value: 61, Unit: "%"}}}
	want := "storage (reads) — data disk busy 97%, data disk read await 8.1 ms, backends waited on data-file I/O 61%"
	if got := v.String(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
