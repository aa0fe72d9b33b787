package metrics

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/storbench/storbench/internal/engine"
)

// Target is a directory whose disks are sampled, and what it holds.
type Target struct {
	Path string
	Role string // "data", "wal", "path", "backup"…
	// Reported targets come from the server, not the user: one that cannot be
	// resolved here (a server in a container, a directory this user may not read)
	// is a note, not an error.
	Reported bool
}

// Config says what a Monitor samples.
type Config struct {
	Interval time.Duration
	// Targets are directories on this host; their whole disks are sampled.
	Targets []Target
	// Host is a node_exporter metrics URL: CPU, memory and disks come from there
	// instead of this host's /proc.
	Host string
	// Devices names the exporter's disks to sample (default: every whole disk).
	Devices []string
	// Database, when set, is sampled for its own counters.
	Database engine.Observer
	// IOLatency is "auto" (trace per-I/O latency when possible), "on" (fail when not
	// possible) or "off".
	IOLatency string
	// CSV receives each sample as it is taken; nil for none.
	CSV io.Writer
	// ProcRoot and SysRoot default to /proc and /sys.
	ProcRoot, SysRoot string
}

// Monitor samples what Config names and reports on it.
type Monitor struct {
	sampler  *Sampler
	report   Report
	database *databaseCollector
	started  bool
	stopped  bool
}

// Sources of each figure, for the result's labels.
const (
	cpuSource     = "/proc/stat, all CPUs: user = user + nice, system = system + irq + softirq"
	memorySource  = "/proc/meminfo: used = MemTotal - MemAvailable, cache = Cached + Buffers"
	diskSource    = "/proc/diskstats per whole disk, iostat formulas: await = I/O time ÷ I/Os completed (an average per I/O, not a percentile); busy = time with at least one I/O in flight (not saturation for SSD/NVMe); MB = 10^6 bytes"
	latencySource = "bpftrace on block:block_rq_issue → block:block_rq_complete, each request timed from issue to completion (matched by device and sector; flushes and discards included) in a histogram with buckets within 6.25%; a percentile is its bucket's upper edge"
)

// New prepares the collectors; tracing per-I/O latency starts here (it takes a few
// seconds to attach), sampling at Start.
func New(ctx context.Context, cfg Config) (*Monitor, error) {
	if cfg.Interval < 10*time.Millisecond {
		return nil, fmt.Errorf("%w: --metrics-interval must be at least 10ms", engine.ErrInput)
	}
	switch cfg.IOLatency {
	case "auto", "on", "off":
	default:
		return nil, fmt.Errorf("%w: --io-latency must be auto, on or off", engine.ErrInput)
	}
	if cfg.ProcRoot == "" {
		cfg.ProcRoot = "/proc"
	}
	if cfg.SysRoot == "" {
		cfg.SysRoot = "/sys"
	}
	switch {
	case len(cfg.Devices) > 0 && cfg.Host == "":
		return nil, fmt.Errorf("%w: --metrics-device picks disks of a --metrics-host; on this host give --path DIR", engine.ErrInput)
	case cfg.Host != "" && len(cfg.Targets) > 0:
		return nil, fmt.Errorf("%w: --path directories are resolved on this host; with --metrics-host pick the host's disks with --metrics-device", engine.ErrInput)
	}
	var sink *CSVWriter
	if cfg.CSV != nil {
		sink = NewCSVWriter(cfg.CSV)
	}
	m := &Monitor{sampler: NewSampler(cfg.Interval, sink)}
	m.report = Report{IntervalSeconds: cfg.Interval.Seconds(), Sources: map[string]string{}}
	var err error
	if cfg.Host != "" {
		err = m.remote(cfg)
	} else {
		err = m.local(ctx, cfg)
	}
	if err != nil {
		m.Close()
		return nil, err
	}
	if cfg.Database != nil {
		m.database = &databaseCollector{db: cfg.Database}
		m.sampler.Add("database", m.database)
	}
	if err := m.sampler.Prime(ctx)["node_exporter"]; err != nil {
		m.Close()
		return nil, fmt.Errorf("%w: --metrics-host: %v", engine.ErrInput, err)
	}
	return m, nil
}

// remote samples a node_exporter; per-I/O latency would need tracing on that host.
func (m *Monitor) remote(cfg Config) error {
	if cfg.IOLatency == "on" {
		return fmt.Errorf("%w: --io-latency on traces this host's disks; with --metrics-host use auto or off", engine.ErrInput)
	}
	roles := map[string][]string{}
	for _, d := range cfg.Devices {
		roles[d] = []string{"device"}
	}
	n, err := NewNodeExporter(cfg.Host, roles, &http.Client{})
	if err != nil {
		return err
	}
	m.sampler.Add("node_exporter", n)
	m.report.Source = "node_exporter at " + cfg.Host
	m.report.Sources["cpu"] = "node_cpu_seconds_total (as " + cpuSource + ")"
	m.report.Sources["memory"] = "node_memory_*_bytes (as " + memorySource + ")"
	m.report.Sources["disks"] = "node_disk_*_total (as " + diskSource + ")"
	if cfg.IOLatency == "auto" {
		m.sampler.Note("per-I/O latency not available: it is traced on this host only, and the disks are on %s", cfg.Host)
	}
	return nil
}

// local samples this host's /proc, the disks under the targets, and traces them.
func (m *Monitor) local(ctx context.Context, cfg Config) error {
	m.report.Source = "this host's /proc and /sys"
	r := Resolver{ProcRoot: cfg.ProcRoot, SysRoot: cfg.SysRoot}
	for _, t := range cfg.Targets {
		p, err := r.Resolve(t.Path, t.Role)
		if err != nil && t.Reported {
			m.sampler.Note("no disk figures for the %s directory the server reported: %v", t.Role, err)
			continue
		}
		if err != nil {
			return err
		}
		m.report.Placements = append(m.report.Placements, p)
		if p.Note != "" {
			m.sampler.Note("%s %s: %s", t.Role, t.Path, p.Note)
		}
	}
	devices := Devices(m.report.Placements)
	if len(devices) == 0 && len(cfg.Targets) == 0 {
		m.sampler.Note("no disk figures: no directory to resolve (give --path DIR)")
	}
	if len(devices) == 0 && cfg.IOLatency == "on" {
		return fmt.Errorf("%w: --io-latency on: no disk to trace (the directories are on no block device)", engine.ErrInput)
	}
	// The tracer is collected first: it waits for bpftrace's next print, and the
	// counters read right after it then cover the same I/O.
	if len(devices) > 0 && cfg.IOLatency != "off" {
		lat, err := StartIOLatency(ctx, devices, cfg.Interval)
		switch {
		case err == nil:
			m.sampler.Add("io_latency", lat)
			m.report.Sources["io_latency"] = latencySource
		case cfg.IOLatency == "on":
			return fmt.Errorf("%w: --io-latency on: %v", engine.ErrInput, err)
		default:
			m.sampler.Note("per-I/O latency not available: %v (disk figures are per-interval averages; no percentile is derived from them)", err)
		}
	}
	cpu, err := NewCPU(cfg.ProcRoot)
	if err != nil {
		return err
	}
	mem, err := NewMemory(cfg.ProcRoot)
	if err != nil {
		return err
	}
	m.sampler.Add("cpu", cpu)
	m.sampler.Add("memory", mem)
	m.report.Sources["cpu"], m.report.Sources["memory"] = cpuSource, memorySource
	if len(devices) == 0 {
		return nil
	}
	roles := map[string][]string{}
	for _, d := range devices {
		roles[d.Name] = RolesOf(m.report.Placements, d.Name)
	}
	disks, err := NewDisks(cfg.ProcRoot, cfg.SysRoot, devices, roles)
	if err != nil {
		return err
	}
	m.sampler.Add("disks", disks)
	m.report.Sources["disks"] = diskSource
	return nil
}

// Note adds something the report must say.
func (m *Monitor) Note(note string) { m.sampler.Note("%s", note) }

// Start samples from now on, on a grid anchored at origin.
func (m *Monitor) Start(ctx context.Context, origin time.Time) {
	m.started = true
	m.sampler.Start(ctx, origin)
}

// Stop ends sampling and returns the report, summarised over (from, to] seconds from
// the origin.
func (m *Monitor) Stop(ctx context.Context, from, to float64) *Report {
	m.stopped = true
	r := m.report
	r.Samples = m.sampler.Stop(ctx)
	r.Summary = Summarize(r.Samples, from, to)
	if m.database != nil && m.database.source != "" {
		r.Sources["database"] = m.database.source
	}
	r.Notes = m.sampler.Notes()
	return &r
}

// Close releases a Monitor that was not stopped: it ends sampling, or stops the
// tracer that runs from New.
func (m *Monitor) Close() {
	switch {
	case m.stopped:
		return
	case m.started:
		m.Stop(context.Background(), 0, 0)
		return
	}
	m.stopped = true
	m.sampler.close()
}
