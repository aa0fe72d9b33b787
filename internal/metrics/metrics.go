// Package metrics samples what the papers explain every TPM curve with: CPU, memory,
// the block devices the database sits on, per-I/O latency and the database's own
// counters, interval by interval on the run's timeline.
//
// Each source is a Collector (one file each, as node_exporter's collectors are). A
// collector keeps its previous cumulative reading and adds the interval's figures to
// the Sample; the raw deltas stay in the sample so a window's summary is computed from
// sums (total I/O time ÷ total I/Os), not from averages of averages.
package metrics

import (
	"context"
	"time"

	"github.com/storbench/storbench/internal/engine"
)

// A Collector adds its figures for the interval since its previous call to s. Its first
// call only reads the counters the first interval starts from.
type Collector interface {
	Collect(ctx context.Context, s *Sample) error
}

// Sample is one interval's figures. Sections a source could not provide are nil.
type Sample struct {
	// T is the interval's end in seconds from the origin (the run's timed window
	// start: ramp-up has T <= 0), so samples line up with the run's own timeline.
	T       float64   `json:"t"`
	Time    time.Time `json:"time"`
	Seconds float64   `json:"interval_s"`
	CPU     *CPU      `json:"cpu,omitempty"`
	Memory  *Memory   `json:"memory,omitempty"`
	Disks   []Disk    `json:"disks,omitempty"`
	// Latency is per-I/O latency from block tracepoints, when available.
	Latency  []Latency `json:"io_latency,omitempty"`
	Database *Database `json:"database,omitempty"`
	// Waits is where the database's sessions spent their active time, by role and
	// wait class.
	Waits *Waits `json:"waits,omitempty"`
	// ProcessIO is the database server's I/O by role (one entry per role, of each
	// server sampled), for a server on this host.
	ProcessIO []RoleIO `json:"process_io,omitempty"`
	// GroupCPU is each managed instance's cgroup's CPU use, limit and throttling.
	GroupCPU []GroupCPU `json:"cgroup_cpu,omitempty"`
	// blockIO is what the tracer counted by task since its previous delivery, for
	// the process collector, which runs after it.
	blockIO *blockTaskIO
	// Resets names the sources whose counters were reset in this interval (a server
	// restart): they have no figures here (ErrCounterReset).
	Resets []string `json:"counter_resets,omitempty"`
	// Scrape says when a remote host's figures were read (node_exporter only).
	Scrape *Scrape `json:"scrape,omitempty"`
	// Bottleneck is what limited the interval, judged from its figures alone
	// (Monitor.JudgeEach), for the timeline.
	Bottleneck string `json:"bottleneck,omitempty"`
	judged     bool
}

// CPUTimes are cumulative times of all CPUs in each state, in any one unit (/proc/stat
// ticks, node_exporter seconds): only their ratios are used.
type CPUTimes struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal float64
}

// total is the sum of the first eight /proc/stat fields (guest time is already
// counted in user).
func (t CPUTimes) total() float64 {
	return t.User + t.Nice + t.System + t.Idle + t.IOWait + t.IRQ + t.SoftIRQ + t.Steal
}

func (t CPUTimes) minus(o CPUTimes) CPUTimes {
	return CPUTimes{t.User - o.User, t.Nice - o.Nice, t.System - o.System, t.Idle - o.Idle,
		t.IOWait - o.IOWait, t.IRQ - o.IRQ, t.SoftIRQ - o.SoftIRQ, t.Steal - o.Steal}
}

func (t CPUTimes) plus(o CPUTimes) CPUTimes {
	return CPUTimes{t.User + o.User, t.Nice + o.Nice, t.System + o.System, t.Idle + o.Idle,
		t.IOWait + o.IOWait, t.IRQ + o.IRQ, t.SoftIRQ + o.SoftIRQ, t.Steal + o.Steal}
}

// CPU is the share of all CPUs' time in each state over an interval, in percent; the
// five add up to 100.
type CPU struct {
	User   float64 `json:"user_pct"`   // user + nice
	System float64 `json:"system_pct"` // system + irq + softirq (as Perfmon's % Privileged Time)
	Idle   float64 `json:"idle_pct"`
	IOWait float64 `json:"iowait_pct"`
	Steal  float64 `json:"steal_pct"`
	delta  CPUTimes
}

// cpuShares computes the interval's percentages from its time deltas; an interval in
// which no time passed (or the counters went back) gives nil.
func cpuShares(d CPUTimes) *CPU {
	// iowait can go back (the kernel estimates it per CPU): a negative share counts
	// as none, in the total too, so the five still add up to 100.
	d = CPUTimes{max(d.User, 0), max(d.Nice, 0), max(d.System, 0), max(d.Idle, 0), max(d.IOWait, 0),
		max(d.IRQ, 0), max(d.SoftIRQ, 0), max(d.Steal, 0)}
	total := d.total()
	if total <= 0 {
		return nil
	}
	pct := func(v float64) float64 { return 100 * v / total }
	return &CPU{User: pct(d.User + d.Nice), System: pct(d.System + d.IRQ + d.SoftIRQ), Idle: pct(d.Idle),
		IOWait: pct(d.IOWait), Steal: pct(d.Steal), delta: d}
}

// Memory is the host's memory at the interval's end, in bytes.
type Memory struct {
	Total uint64 `json:"total_bytes"`
	// Used is MemTotal - MemAvailable (procps free(1) since 4.0.1).
	Used uint64 `json:"used_bytes"`
	// Cache is the page cache (Cached + Buffers).
	Cache     uint64 `json:"cache_bytes"`
	Dirty     uint64 `json:"dirty_bytes"`
	Writeback uint64 `json:"writeback_bytes"`
}

// DiskCounters are a block device's cumulative /proc/diskstats fields that the
// formulas use: fields 1, 3, 4, 5, 7, 8, 10 and 11 (times in ms, 512-byte sectors).
type DiskCounters struct {
	ReadIOs, ReadSectors, ReadMs    uint64
	WriteIOs, WriteSectors, WriteMs uint64
	BusyMs                          uint64 // f10: time with at least one I/O in flight
	QueueMs                         uint64 // f11: weighted time (I/Os in flight × ms)
}

// Disk is one block device's figures over an interval, with iostat's formulas.
type Disk struct {
	Device string `json:"device"`
	// Roles say what of the database is on it: "data", "wal", or a --path.
	Roles        []string `json:"roles"`
	ReadIOPS     float64  `json:"read_iops"`
	WriteIOPS    float64  `json:"write_iops"`
	ReadMBps     float64  `json:"read_mb_s"`  // 10^6 bytes per second
	WriteMBps    float64  `json:"write_mb_s"` // 10^6 bytes per second
	ReadAwaitMs  float64  `json:"read_await_ms"`
	WriteAwaitMs float64  `json:"write_await_ms"`
	AvgQueue     float64  `json:"avg_queue"`
	// BusyPct is the time with at least one I/O in flight: near 100 means saturated
	// only for a device that serves one I/O at a time, not for SSDs/NVMe.
	BusyPct float64 `json:"busy_pct"`
	delta   DiskCounters
	seconds float64
}

// SectorBytes is the unit of /proc/diskstats sector counts, whatever the device's own
// sector size.
const SectorBytes = 512

// diskFigures applies the formulas to an interval's deltas over seconds.
func diskFigures(device string, roles []string, d DiskCounters, seconds float64) Disk {
	disk := Disk{Device: device, Roles: roles, delta: d, seconds: seconds}
	if seconds <= 0 {
		return disk
	}
	disk.ReadIOPS = float64(d.ReadIOs) / seconds
	disk.WriteIOPS = float64(d.WriteIOs) / seconds
	disk.ReadMBps = float64(d.ReadSectors) * SectorBytes / seconds / 1e6
	disk.WriteMBps = float64(d.WriteSectors) * SectorBytes / seconds / 1e6
	if d.ReadIOs > 0 {
		disk.ReadAwaitMs = float64(d.ReadMs) / float64(d.ReadIOs)
	}
	if d.WriteIOs > 0 {
		disk.WriteAwaitMs = float64(d.WriteMs) / float64(d.WriteIOs)
	}
	disk.AvgQueue = float64(d.QueueMs) / (1000 * seconds)
	disk.BusyPct = min(100, 100*float64(d.BusyMs)/(1000*seconds))
	return disk
}

// counterDelta is cur - prev for a 64-bit counter; one that went back was reset (a
// device re-added, a remote host rebooted): the interval counts nothing.
func counterDelta(prev, cur uint64) uint64 {
	if cur >= prev {
		return cur - prev
	}
	return 0
}

// msDelta is cur - prev for the ms fields, which the kernel prints as 32-bit values
// (they wrap after ~50 days of I/O time). Going back from above 32 bits is a reset.
func msDelta(prev, cur uint64) uint64 {
	switch {
	case cur >= prev:
		return cur - prev
	case prev <= 1<<32-1:
		return cur + 1<<32 - prev
	}
	return 0
}

func (c DiskCounters) minus(p DiskCounters) DiskCounters {
	return DiskCounters{
		ReadIOs: counterDelta(p.ReadIOs, c.ReadIOs), ReadSectors: counterDelta(p.ReadSectors, c.ReadSectors),
		ReadMs: msDelta(p.ReadMs, c.ReadMs), WriteIOs: counterDelta(p.WriteIOs, c.WriteIOs),
		WriteSectors: counterDelta(p.WriteSectors, c.WriteSectors), WriteMs: msDelta(p.WriteMs, c.WriteMs),
		BusyMs: msDelta(p.BusyMs, c.BusyMs), QueueMs: msDelta(p.QueueMs, c.QueueMs),
	}
}

func (c DiskCounters) plus(o DiskCounters) DiskCounters {
	return DiskCounters{c.ReadIOs + o.ReadIOs, c.ReadSectors + o.ReadSectors, c.ReadMs + o.ReadMs,
		c.WriteIOs + o.WriteIOs, c.WriteSectors + o.WriteSectors, c.WriteMs + o.WriteMs,
		c.BusyMs + o.BusyMs, c.QueueMs + o.QueueMs}
}

// Latency is one device's per-I/O latency over an interval (block layer, issue to
// completion), from a histogram whose buckets are within 1/16 of their values; a
// percentile is its bucket's upper edge.
type Latency struct {
	Device string  `json:"device"`
	IOs    int64   `json:"ios"`
	P50Ms  float64 `json:"p50_ms"`
	P99Ms  float64 `json:"p99_ms"`
	P999Ms float64 `json:"p99_9_ms"`
	hist   LatencyHistogram
}

// Database is the database's own counters over an interval.
type Database struct {
	CommitsPerSec   float64 `json:"commits_s"`
	RollbacksPerSec float64 `json:"rollbacks_s"`
	BlocksReadPerS  float64 `json:"blocks_read_s"`
	BlocksHitPerS   float64 `json:"blocks_hit_s"`
	// BufferHitPct is hits ÷ (hits + reads): reads may still come from the OS cache.
	BufferHitPct float64 `json:"buffer_hit_pct"`
	WALMBps      float64 `json:"wal_mb_s"`
	Checkpoints  int64   `json:"checkpoints"` // see the database source label
	TempMBps     float64 `json:"temp_mb_s"`
	// FsyncsPerSec and DataWriteMBps are the engine's own count of its fsyncs and data
	// file writes (see the source label: not every engine counts both).
	FsyncsPerSec  float64 `json:"fsyncs_s"`
	DataWriteMBps float64 `json:"data_write_mb_s"`
	// Writes are what each role of the server wrote by the database's own count
	// (the source label says what is counted), where it keeps one: the writes by
	// role when the block layer cannot be traced.
	Writes  []DatabaseWrite `json:"writes_by_role,omitempty"`
	delta   engine.Activity
	seconds float64
}

// DatabaseWrite is one role's writes by the database's own count.
type DatabaseWrite struct {
	Role string  `json:"role"`
	MB   float64 `json:"mb"` // 10^6 bytes
	MBps float64 `json:"mb_s"`
}

// databaseFigures turns an interval's counter deltas into rates.
func databaseFigures(d engine.Activity, seconds float64) *Database {
	db := &Database{Checkpoints: d.Checkpoints, delta: d, seconds: seconds}
	if seconds > 0 {
		db.CommitsPerSec = float64(d.Commits) / seconds
		db.RollbacksPerSec = float64(d.Rollbacks) / seconds
		db.BlocksReadPerS = float64(d.BlocksRead) / seconds
		db.BlocksHitPerS = float64(d.BlocksHit) / seconds
		db.WALMBps = float64(d.WALBytes) / seconds / 1e6
		db.TempMBps = float64(d.TempBytes) / seconds / 1e6
		db.FsyncsPerSec = float64(d.Fsyncs) / seconds
		db.DataWriteMBps = float64(d.DataWriteBytes) / seconds / 1e6
	}
	for _, w := range d.Writes {
		mb := float64(w.Bytes) / 1e6
		dw := DatabaseWrite{Role: w.Role, MB: mb}
		if seconds > 0 {
			dw.MBps = mb / seconds
		}
		db.Writes = append(db.Writes, dw)
	}
	if n := d.BlocksRead + d.BlocksHit; n > 0 {
		db.BufferHitPct = 100 * float64(d.BlocksHit) / float64(n)
	}
	return db
}

// clock is time.Now, replaceable in tests of the rate computations.
type clock struct{ now func() time.Time }

func (c clock) read() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}
