package metrics

import (
	"context"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/blockdev"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/input"
)

// Target is a directory whose disks are sampled, and what it holds.
type Target struct {
	Path string
	Role string // blockdev.RoleData, RoleWAL…
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
	// Devices names the exporter's disks to sample (default: every whole disk), and
	// DeviceRoles what of the database each holds ("data", "wal"; default "device":
	// named by the user, contents unknown).
	Devices     []string
	DeviceRoles map[string][]string
	// MaxClockSkew bounds how far Host's clock (its node_time_seconds) may be from
	// this machine's at the first scrape, or New fails: 0 means DefaultMaxClockSkew,
	// a negative value skips the check (the skew is still measured and reported).
	// Samples are placed by this machine's clock whatever the skew; the bound keeps
	// the host's own timestamps (logs, the database's) comparable with the run's.
	MaxClockSkew time.Duration
	// Database, when set, is sampled for its own counters, and where the engine can
	// tell, for its sessions' wait events.
	Database engine.Observer
	// WaitRate is how many times a second the database's sessions are read for
	// their wait events (CheckWaitRate); 0: not read.
	WaitRate float64
	// WaitServers are more databases whose sessions' wait events are read, each
	// under its name (consolidated instances), beside Database's.
	WaitServers []WaitServer
	// Servers are database servers on this host whose processes' I/O is sampled
	// by role (not with Host: their processes are on that host).
	Servers []Server
	// Cgroups are managed instances' control groups whose CPU use is sampled.
	Cgroups []CgroupCPU
	// IOLatency is "auto" (trace per-I/O latency when possible), "on" (fail when not
	// possible) or "off".
	IOLatency string
	// ProcRoot and SysRoot default to /proc and /sys.
	ProcRoot, SysRoot string
}

// Monitor samples what Config names and reports on it.
type Monitor struct {
	sampler  *Sampler
	report   Report
	database *databaseCollector
	// noWaits says why the database has no wait profile, when its engine shows none.
	noWaits *Waits
	host    *NodeExporter // nil when sampling this host
	tracer  *IOLatency    // nil when not tracing
	started bool
	stopped bool
}

// Sources of each figure, for the result's labels.
const (
	cpuSource     = "/proc/stat, all CPUs: user = user + nice, system = system + irq + softirq"
	memorySource  = "/proc/meminfo: used = MemTotal - MemAvailable, cache = Cached + Buffers"
	diskSource    = "/proc/diskstats per whole disk, iostat formulas: await = I/O time ÷ I/Os completed (an average per I/O, not a percentile); busy = time with at least one I/O in flight (not saturation for SSD/NVMe); MB = 10^6 bytes"
	clockSource   = "clock skew = node_time_seconds (the host's clock, node_exporter's time collector) - the scrape's midpoint on this machine's clock; round trip = request sent to the answer's first byte; samples are placed at the midpoint, within ± half the round trip"
	latencySource = "bpftrace on block:block_rq_issue → block:block_rq_complete, each request timed from issue to completion (matched by device and sector; flushes and discards included) in a histogram with buckets within 6.25%; a percentile is its bucket's upper edge"
)

// New prepares the collectors; tracing per-I/O latency starts here (it takes a few
// seconds to attach), sampling at Start. The interval and IOLatency are the caller's
// to check (CheckInterval, CheckIOLatency), where it knows how the user named them.
func New(ctx context.Context, cfg Config) (*Monitor, error) {
	if cfg.ProcRoot == "" {
		cfg.ProcRoot = "/proc"
	}
	if cfg.SysRoot == "" {
		cfg.SysRoot = "/sys"
	}
	switch {
	case len(cfg.Devices) > 0 && cfg.Host == "":
		return nil, input.Errorf("metrics_devices", "{metrics_devices} picks disks of a {metrics_host}; on this host give {path} DIR")
	case cfg.Host != "" && len(cfg.Targets) > 0:
		return nil, input.Errorf("path", "{path} directories are resolved on this host; with {metrics_host} pick the host's disks with {metrics_devices}")
	}
	m := &Monitor{sampler: NewSampler(cfg.Interval, nil)}
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
		m.waits("", cfg.Database, cfg.WaitRate)
	}
	for _, w := range cfg.WaitServers {
		m.waits(w.Name, w.DB, cfg.WaitRate)
	}
	if err := m.sampler.Prime(ctx)["node_exporter"]; err != nil {
		m.Close()
		// The collector's errors name the URL and what to do: one line, as the user
		// can fix it.
		return nil, input.Errorf("metrics_host", "%w", err)
	}
	if m.host != nil && m.host.clock.FirstSkewMs == nil {
		m.sampler.Note("%s's clock not compared with this machine's: its node_exporter reports no node_time_seconds (enable its time collector); its figures are placed by this machine's clock all the same", m.host.shown)
	}
	return m, nil
}

// remote samples a node_exporter; per-I/O latency would need tracing on that host.
func (m *Monitor) remote(cfg Config) error {
	if cfg.IOLatency == "on" {
		return input.Errorf("io_latency", "{io_latency} on traces this host's disks; with {metrics_host} use auto or off")
	}
	roles := map[string][]string{}
	for _, d := range cfg.Devices {
		roles[d] = []string{"device"}
		if r := cfg.DeviceRoles[d]; len(r) > 0 {
			roles[d] = r
		}
	}
	n, err := NewNodeExporter(cfg.Host, roles, &http.Client{})
	if err != nil {
		return err
	}
	if cfg.MaxClockSkew != 0 {
		n.maxSkew = cfg.MaxClockSkew
	}
	m.host = n
	m.sampler.AddApart("node_exporter", n)
	m.report.Source = "node_exporter at " + n.shown
	m.report.Sources["cpu"] = "node_cpu_seconds_total (as " + cpuSource + ")"
	m.report.Sources["memory"] = "node_memory_*_bytes (as " + memorySource + ")"
	m.report.Sources["disks"] = "node_disk_*_total (as " + diskSource + ")"
	m.report.Sources["clock"] = clockSource
	if cfg.IOLatency == "auto" {
		m.sampler.Note("per-I/O latency not available: it is traced on this host only, and the disks are on %s", n.shown)
	}
	return nil
}

// local samples this host's /proc, the disks under the targets, and traces them.
func (m *Monitor) local(ctx context.Context, cfg Config) error {
	m.report.Source = "this host's /proc and /sys"
	r := blockdev.Resolver{ProcRoot: cfg.ProcRoot, SysRoot: cfg.SysRoot}
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
	devices := blockdev.Devices(m.report.Placements)
	if len(devices) == 0 && len(cfg.Targets) == 0 {
		m.sampler.Note("no disk figures: no directory to resolve (give --path DIR)")
	}
	if len(devices) == 0 && cfg.IOLatency == "on" {
		return input.Errorf("io_latency", "{io_latency} on: no disk to trace (the directories are on no block device)")
	}
	// The tracer is collected first: it waits for bpftrace's next print, and the
	// counters read right after it then cover the same I/O.
	// The same tracer counts the servers' bytes by task: /proc/PID/io cannot tell
	// what a process wrote to the disks (blocktask.go).
	byBlock := false
	if len(devices) > 0 && cfg.IOLatency != "off" {
		lat, err := StartIOLatency(ctx, devices, cfg.Interval, len(cfg.Servers) > 0)
		switch {
		case err == nil:
			m.sampler.Add("io_latency", lat)
			m.report.Sources["io_latency"] = latencySource
			m.tracer = lat
			byBlock = len(cfg.Servers) > 0
		case cfg.IOLatency == "on":
			return input.Errorf("io_latency", "{io_latency} on: %w", err)
		default:
			m.sampler.Note("per-I/O latency not available: %v (disk figures are per-interval averages; no percentile is derived from them)", err)
		}
	}
	if len(cfg.Servers) > 0 {
		procs, note, err := NewProcesses(cfg.ProcRoot, cfg.Servers, byBlock)
		if err != nil {
			return err
		}
		m.sampler.Add("process_io", procs)
		m.report.Sources["process_io"] = procRoleSource
		if byBlock {
			m.report.Sources["process_io"] = blockRoleSource
		} else {
			m.sampler.Note("I/O by process role: reads only (/proc/PID/io read_bytes), as the block layer was not traced (--io-latency %s, or see why per-I/O latency was not available); writes by role are the database's own counts, where it keeps them", cfg.IOLatency)
		}
		if note != "" {
			m.sampler.Note("%s", note)
		}
	}
	if len(cfg.Cgroups) > 0 {
		m.sampler.Add("cgroup_cpu", NewCgroupCPU(cfg.Cgroups))
		m.report.Sources["cgroup_cpu"] = cgroupCPUSource
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
		roles[d.Name] = blockdev.RolesOf(m.report.Placements, d.Name)
	}
	disks, err := NewDisks(cfg.ProcRoot, cfg.SysRoot, devices, roles)
	if err != nil {
		return err
	}
	m.sampler.Add("disks", disks)
	m.report.Sources["disks"] = diskSource
	return nil
}

// WaitServer is a database whose sessions' wait events are read under a name.
type WaitServer struct {
	Name string
	DB   engine.Observer
}

// waits reads the server's own wait profile where it keeps one, else samples its
// sessions' wait events where its engine shows them, and says where it does not.
func (m *Monitor) waits(server string, db engine.Observer, rate float64) {
	if rate <= 0 {
		return
	}
	name := strings.TrimSpace("waits " + server)
	if wp, ok := db.(engine.WaitProfiler); ok {
		m.sampler.Add(name, &profileCollector{db: wp, server: server})
		return
	}
	if ws, ok := db.(engine.WaitSampler); ok {
		m.sampler.Add(name, newWaitCollector(server, ws, rate))
		return
	}
	what := "this engine"
	if named, ok := db.(interface{ Engine() string }); ok {
		what = named.Engine()
	}
	m.noWaits = &Waits{Missing: what + " shows no wait events: no wait profile"}
	m.sampler.Note("no wait profile: %s shows no wait events", what)
}

// StreamCSV writes each sample to w as it is taken, from Start on. A separate step
// from New, so that a caller creates its file only once New has accepted the rest.
func (m *Monitor) StreamCSV(w io.Writer) { m.sampler.sink = NewCSVWriter(w) }

// JudgeEach names each sample's bottleneck with judge as it is taken (the CSV's
// bottleneck column), from Start on.
func (m *Monitor) JudgeEach(judge func(*Sample) string) { m.sampler.judge = judge }

// WatchEach hands each sample to watch as it is taken, from Start on (after
// JudgeEach's judge); watch must not keep it.
func (m *Monitor) WatchEach(watch func(*Sample)) { m.sampler.watch = watch }

// Note adds something the report must say.
func (m *Monitor) Note(note string) { m.sampler.Note("%s", note) }

// Start samples from now on, on a grid anchored at origin.
func (m *Monitor) Start(ctx context.Context, origin time.Time) {
	m.started = true
	m.sampler.Start(ctx, origin)
}

// Started tells whether sampling has started (samples may have been streamed).
func (m *Monitor) Started() bool { return m.started }

// Stop ends sampling and returns the report, summarised over (from, to] seconds from
// the origin.
func (m *Monitor) Stop(ctx context.Context, from, to float64) *Report {
	m.stopped = true
	r := m.report
	r.Samples = m.sampler.Stop(ctx)
	if m.tracer != nil {
		if full := m.tracer.TasksFull(); full != "" {
			m.sampler.Note("%s", full)
		}
	}
	r.Summary = Summarize(r.Samples, from, to)
	if r.Summary.Waits == nil {
		r.Summary.Waits = m.noWaits
	}
	if m.database != nil && m.database.source != "" {
		r.Sources["database"] = m.database.source
	}
	if m.host != nil {
		m.noteClock()
		c := m.host.clock
		r.Clock = &c
	}
	r.Notes = m.sampler.Notes()
	return &r
}

// noteClock says when the host's figures cannot be placed within half an interval, and
// when its clock moved past the bound after the first scrape passed it.
func (m *Monitor) noteClock() {
	n, c, interval := m.host, m.host.clock, m.report.IntervalSeconds
	if rtt := c.MaxRoundTripMs / 1000; rtt > interval/2 {
		m.sampler.Note("the slowest scrape of %s took %.3f s from request to answer, more than half the %gs interval: its figures are placed on this machine's timeline only within ±%.3f s",
			n.shown, rtt, interval, rtt/2)
	}
	if c.MaxAbsSkewMs != nil && n.maxSkew >= 0 && *c.MaxAbsSkewMs/1000 > n.maxSkew.Seconds() {
		m.sampler.Note("%s's clock was up to %.1f s from this machine's during the run, more than the %s allowed: its own timestamps (logs, the database's) are off by as much; its figures are placed by this machine's clock all the same",
			n.shown, *c.MaxAbsSkewMs/1000, n.maxSkew)
	}
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
