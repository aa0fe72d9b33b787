package metrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/storbench/storbench/internal/dburl"
	"github.com/storbench/storbench/internal/input"
)

// NodeExporter samples a remote host's CPU, memory and disks from node_exporter's
// metrics.
//
// node_exporter reads the same /proc/stat, /proc/meminfo and /proc/diskstats on its
// host as the local collectors do and only changes units (ticks and ms to seconds,
// sectors to bytes), so undoing them gives the local collectors' figures. It is not
// safe for concurrent use.
type NodeExporter struct {
	url    string
	shown  string // url without its password, for messages
	client *http.Client
	// named maps the devices to report to their roles; nil reports every whole disk.
	named map[string][]string
	prev  *nodeReading
	// now is replaceable so tests can check rates against a known interval.
	now func() time.Time
	// maxSkew bounds |node_time_seconds − this machine's clock| before anything is
	// measured; negative: not checked.
	maxSkew time.Duration
	clock   HostClock
}

// DefaultMaxClockSkew is how far a host's clock may be from this machine's when
// Config.MaxClockSkew is 0: NTP keeps hosts within milliseconds, so seconds mean a host
// without time synchronisation, whose own timestamps (logs, the database's) cannot be
// set beside this machine's.
const DefaultMaxClockSkew = 2 * time.Second

// HostClock is how a remote host's clock compared with this machine's at the scrapes.
// Skews are node_time_seconds − the scrape's midpoint on this machine's clock, in ms:
// positive when the host's clock is ahead. They are absent when the host does not
// export node_time_seconds.
type HostClock struct {
	Host         string   `json:"host"` // the metrics URL, without its password
	Scrapes      int      `json:"scrapes"`
	FirstSkewMs  *float64 `json:"first_skew_ms,omitempty"`
	MaxAbsSkewMs *float64 `json:"max_abs_skew_ms,omitempty"`
	// MaxRoundTripMs is the slowest scrape, from request sent to the answer's first
	// byte: a sample's placement on this machine's timeline is within ± half of it.
	MaxRoundTripMs float64 `json:"max_round_trip_ms"`
}

// Scrape is when a remote host's figures in a sample were read, on this machine's
// clock (the sample's T is the sampler's tick nearest to it).
type Scrape struct {
	// At is the midpoint of the request sent and the answer's first byte.
	At time.Time `json:"at"`
	// Seconds is the time since the previous good scrape's At: the interval the
	// sample's rates are over (several ticks after a failed scrape).
	Seconds     float64  `json:"interval_s"`
	RoundTripMs float64  `json:"round_trip_ms"`
	SkewMs      *float64 `json:"skew_ms,omitempty"` // as in HostClock
}

// nodeReading is one scrape's cumulative counters and levels.
type nodeReading struct {
	at    time.Time // the scrape's midpoint on this machine's clock
	cpu   CPUTimes
	mem   Memory
	disks map[string]DiskCounters
}

// maxScrapeBytes bounds what a wrong URL can make storbench read; node_exporter's
// output is well under a megabyte even on hosts with hundreds of devices.
const maxScrapeBytes = 32 << 20

// NewNodeExporter checks url and remembers which devices to report: those named in
// devices (device name → roles), or, when devices is empty, every whole disk the
// exporter reports (see isWholeDisk), with role "host" since which of the
// database's paths each holds is not known remotely. A URL without a path means
// node_exporter's /metrics. A nil client means http.DefaultClient; the caller's ctx
// bounds each scrape.
func NewNodeExporter(rawURL string, devices map[string][]string, client *http.Client) (*NodeExporter, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return nil, input.Errorf("metrics_host", "{metrics_host} %q is not an http(s) URL: use node_exporter's metrics URL, e.g. http://db-host:9100/metrics",
			dburl.Redact(rawURL))
	}
	// node_exporter's / is an HTML landing page, never the metrics.
	if u.Path == "" || u.Path == "/" {
		u.Path = "/metrics"
	}
	if client == nil {
		client = http.DefaultClient
	}
	n := &NodeExporter{url: u.String(), shown: u.Redacted(), client: client, now: time.Now, maxSkew: DefaultMaxClockSkew}
	n.clock.Host = n.shown
	if len(devices) > 0 {
		n.named = make(map[string][]string, len(devices))
		for name, roles := range devices {
			n.named[name] = slices.Clone(roles)
		}
	}
	return n, nil
}

// Collect scrapes the exporter and, from the second call on, adds the CPU shares,
// memory levels and disk figures since the previous successful scrape. Every time is
// this machine's (see scrape): the host's clock only enters the skew, so hosts whose
// clocks disagree still line up on one timeline. Rates are over the time between the
// scrapes' midpoints, so an interval after a failed scrape spans the real time since
// the last good one. Until a scrape succeeds, a host clock further off than maxSkew is
// an error.
func (n *NodeExporter) Collect(ctx context.Context, s *Sample) error {
	families, at, rtt, err := n.scrape(ctx)
	if err != nil {
		return err
	}
	skew := n.recordClock(families, at, rtt)
	if n.prev == nil && skew != nil && n.maxSkew >= 0 && math.Abs(*skew) > n.maxSkew.Seconds() {
		side := "ahead of"
		if *skew < 0 {
			side = "behind"
		}
		// Seconds, or milliseconds for a bound below a second (a test's or a lab's).
		off := fmt.Sprintf("%.1f s", math.Abs(*skew))
		if math.Abs(*skew) < 1 {
			off = fmt.Sprintf("%.3f ms", math.Abs(*skew)*1000)
		}
		return fmt.Errorf("host %s: its clock is %s %s this machine's (node_time_seconds at the scrape, ±%.3f s round trip): more than the %s allowed; synchronise its clock (NTP, chrony) or raise metrics.max_clock_skew",
			n.shown, off, side, rtt.Seconds(), n.maxSkew)
	}
	cur, err := n.reading(families)
	if err != nil {
		return err
	}
	cur.at = at
	devices, err := n.devices(cur)
	if err != nil {
		return err
	}
	if prev := n.prev; prev != nil {
		seconds := cur.at.Sub(prev.at).Seconds()
		s.Scrape = &Scrape{At: at, Seconds: seconds, RoundTripMs: ms(rtt)}
		if skew != nil {
			s.Scrape.SkewMs = ptr(*skew * 1000)
		}
		s.CPU = cpuShares(cur.cpu.minus(prev.cpu))
		mem := cur.mem
		s.Memory = &mem
		for _, d := range devices {
			p, ok := prev.disks[d.name]
			if !ok {
				continue // appeared since the previous scrape: no interval to report yet
			}
			s.Disks = append(s.Disks, diskFigures(d.name, d.roles, cur.disks[d.name].minus(p), seconds))
		}
	}
	n.prev = cur
	return nil
}

// recordClock adds a scrape's round trip and, when the host exports
// node_time_seconds, its skew in seconds (returned) to n.clock.
func (n *NodeExporter) recordClock(families map[string][]nodeSample, at time.Time, rtt time.Duration) *float64 {
	c := &n.clock
	c.Scrapes++
	c.MaxRoundTripMs = max(c.MaxRoundTripMs, ms(rtt))
	t := families["node_time_seconds"]
	if len(t) == 0 {
		return nil
	}
	// In seconds: float64 holds the Unix time to well under a microsecond.
	skew := t[0].value - float64(at.UnixNano())/1e9
	if c.FirstSkewMs == nil {
		c.FirstSkewMs = ptr(skew * 1000)
	}
	if c.MaxAbsSkewMs == nil || math.Abs(skew)*1000 > *c.MaxAbsSkewMs {
		c.MaxAbsSkewMs = ptr(math.Abs(skew) * 1000)
	}
	return &skew
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ptr[T any](v T) *T { return &v }

// scrape reads the exporter's metrics and when they were read on this machine's
// clock: at, the midpoint of the request sent and the answer's first byte, within
// ± rtt/2 of the true instant. node_exporter (promhttp) gathers every collector's
// figures, node_time_seconds included, after it has the request and before it writes
// a byte, so they were read inside that span; its midpoint is the estimate whose
// worst error is smallest, and is right when the network's two directions take as
// long (as NTP assumes). The span starts when the request is written, not before a
// new connection's dial and TLS handshake, and ends at the first byte, not after the
// body's transfer, either of which would widen it and shift the midpoint. Any
// timestamps in the answer (the text format allows them) are the host's clock and
// are ignored.
func (n *NodeExporter) scrape(ctx context.Context) (_ map[string][]nodeSample, at time.Time, rtt time.Duration, _ error) {
	// The request can be written again on a fresh connection when a kept-alive one
	// was closed: the last write counts. The hook runs on the transport's goroutine.
	var mu sync.Mutex
	sent := n.now()
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) {
		t := n.now()
		mu.Lock()
		sent = t
		mu.Unlock()
	}}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, n.url, nil)
	if err != nil {
		return nil, at, 0, fmt.Errorf("node_exporter at %s: %w", n.shown, err)
	}
	// The text format is the one every node_exporter version serves; asking for it
	// keeps newer ones from answering in protobuf or OpenMetrics, or with UTF-8 names.
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := n.client.Do(req)
	if err != nil {
		return nil, at, 0, n.unreachable(err)
	}
	first := n.now() // Do returns once the status line and headers are read
	mu.Lock()
	rtt = max(first.Sub(sent), 0)
	mu.Unlock()
	at = first.Add(-rtt / 2)
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxScrapeBytes+1))
	if err != nil {
		return nil, at, 0, fmt.Errorf("scraping node_exporter at %s: %w", n.shown, err)
	}
	if resp.StatusCode != http.StatusOK {
		said := firstBodyLine(body)
		if said != "" {
			said = " (" + said + ")"
		}
		return nil, at, 0, fmt.Errorf("node_exporter at %s answered %s%s: give node_exporter's metrics URL, e.g. http://db-host:9100/metrics, and check its log",
			n.shown, resp.Status, said)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "text/plain" {
			return nil, at, 0, fmt.Errorf("%s answered with %q, not Prometheus text metrics: give node_exporter's metrics URL, e.g. http://db-host:9100/metrics",
				n.shown, ct)
		}
	}
	if len(body) > maxScrapeBytes {
		return nil, at, 0, fmt.Errorf("node_exporter at %s answered more than %d MiB: is it node_exporter's metrics URL?", n.shown, maxScrapeBytes>>20)
	}
	families, err := parseTextMetrics(body)
	if err != nil {
		return nil, at, 0, fmt.Errorf("%s did not answer in Prometheus's text format (%w): give node_exporter's metrics URL, e.g. http://db-host:9100/metrics",
			n.shown, err)
	}
	return families, at, rtt, nil
}

// unreachable explains a request that got no answer, with what to check. The cause
// stays wrapped: a caller's deadline must still be recognisable.
func (n *NodeExporter) unreachable(err error) error {
	cause := err
	var ue *url.Error
	if errors.As(err, &ue) {
		cause = ue.Err // without the URL, which the message gives once
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return fmt.Errorf("node_exporter at %s did not answer in time (%w): check the URL's host and port, that no firewall drops this machine's packets, and the host's load",
			n.shown, cause)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("node_exporter at %s refused the connection (%w): start node_exporter on that host (Debian: apt install prometheus-node-exporter) or correct the URL's host and port",
			n.shown, cause)
	}
	return fmt.Errorf("cannot reach node_exporter at %s (%w): check the URL's host name and port, and that no firewall blocks this machine",
		n.shown, cause)
}

func firstBodyLine(b []byte) string {
	line, _, _ := bytes.Cut(bytes.TrimSpace(b), []byte("\n"))
	if len(line) > 200 {
		line = line[:200]
	}
	return string(line)
}

// nodeSample is one sample line of the text exposition format.
type nodeSample struct {
	labels map[string]string
	value  float64
}

// parseTextMetrics reads Prometheus's text exposition format into samples by metric
// name, with expfmt.
func parseTextMetrics(body []byte) (map[string][]nodeSample, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	out := make(map[string][]nodeSample, len(families))
	for name, f := range families {
		for _, m := range f.GetMetric() {
			labels := make(map[string]string, len(m.GetLabel()))
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			var v float64
			switch {
			case m.Counter != nil:
				v = m.GetCounter().GetValue()
			case m.Gauge != nil:
				v = m.GetGauge().GetValue()
			case m.Untyped != nil:
				v = m.GetUntyped().GetValue()
			default:
				continue // summaries and histograms: nothing Collect reads
			}
			out[name] = append(out[name], nodeSample{labels: labels, value: v})
		}
	}
	return out, nil
}

// counterFromFloat rounds a unit-converted value back to the kernel's integer counter.
func counterFromFloat(v float64) uint64 {
	if !(v > 0) || math.IsInf(v, 1) {
		return 0
	}
	return uint64(math.Round(v))
}

// nodeDiskFields maps node_exporter's diskstats families back to /proc/diskstats
// fields: it reports sectors × 512 as bytes and ms ÷ 1000 as seconds.
var nodeDiskFields = []struct {
	name  string
	scale float64
	field func(*DiskCounters) *uint64
}{
	{"node_disk_reads_completed_total", 1, func(c *DiskCounters) *uint64 { return &c.ReadIOs }},
	{"node_disk_read_bytes_total", 1.0 / SectorBytes, func(c *DiskCounters) *uint64 { return &c.ReadSectors }},
	{"node_disk_read_time_seconds_total", 1000, func(c *DiskCounters) *uint64 { return &c.ReadMs }},
	{"node_disk_writes_completed_total", 1, func(c *DiskCounters) *uint64 { return &c.WriteIOs }},
	{"node_disk_written_bytes_total", 1.0 / SectorBytes, func(c *DiskCounters) *uint64 { return &c.WriteSectors }},
	{"node_disk_write_time_seconds_total", 1000, func(c *DiskCounters) *uint64 { return &c.WriteMs }},
	{"node_disk_io_time_seconds_total", 1000, func(c *DiskCounters) *uint64 { return &c.BusyMs }},
	{"node_disk_io_time_weighted_seconds_total", 1000, func(c *DiskCounters) *uint64 { return &c.QueueMs }},
}

// nodeMemoryFamilies are the meminfo lines Memory needs, in node_exporter's names.
var nodeMemoryFamilies = []string{"node_memory_MemTotal_bytes", "node_memory_MemAvailable_bytes",
	"node_memory_Cached_bytes", "node_memory_Buffers_bytes", "node_memory_Dirty_bytes", "node_memory_Writeback_bytes"}

// reading extracts one scrape's figures. A missing section is an error rather than
// a nil section: it means a collector is disabled on the exporter, which the user can
// fix, and a run without the figures it came for would be wasted.
func (n *NodeExporter) reading(families map[string][]nodeSample) (*nodeReading, error) {
	r := &nodeReading{disks: map[string]DiskCounters{}}

	cpu := families["node_cpu_seconds_total"]
	if cpu == nil {
		return nil, fmt.Errorf("node_exporter at %s reports no node_cpu_seconds_total: run it with its cpu collector enabled", n.shown)
	}
	for _, m := range cpu {
		v := m.value
		switch m.labels["mode"] {
		case "user":
			r.cpu.User += v
		case "nice":
			r.cpu.Nice += v
		case "system":
			r.cpu.System += v
		case "idle":
			r.cpu.Idle += v
		case "iowait":
			r.cpu.IOWait += v
		case "irq":
			r.cpu.IRQ += v
		case "softirq":
			r.cpu.SoftIRQ += v
		case "steal":
			r.cpu.Steal += v
		}
	}

	var mem [6]uint64
	var missing []string
	for i, name := range nodeMemoryFamilies {
		f := families[name]
		if len(f) == 0 {
			missing = append(missing, name)
			continue
		}
		mem[i] = counterFromFloat(f[0].value)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("node_exporter at %s reports no %s: run it with its meminfo collector enabled",
			n.shown, strings.Join(missing, ", "))
	}
	total, avail, cached, buffers, dirty, writeback := mem[0], mem[1], mem[2], mem[3], mem[4], mem[5]
	r.mem = Memory{Total: total, Used: total - min(avail, total), Cache: cached + buffers, Dirty: dirty, Writeback: writeback}

	missing = missing[:0]
	for _, f := range nodeDiskFields {
		fam, ok := families[f.name]
		if !ok {
			missing = append(missing, f.name)
			continue
		}
		for _, m := range fam {
			dev := m.labels["device"]
			if dev == "" {
				continue
			}
			c := r.disks[dev]
			*f.field(&c) = counterFromFloat(m.value * f.scale)
			r.disks[dev] = c
		}
	}
	switch {
	case len(missing) == len(nodeDiskFields):
		return nil, fmt.Errorf("node_exporter at %s reports no node_disk_* metrics: run node_exporter 0.16 or later with its diskstats collector enabled", n.shown)
	case len(missing) > 0:
		return nil, fmt.Errorf("node_exporter at %s reports no %s", n.shown, strings.Join(missing, ", "))
	}
	return r, nil
}

type nodeDevice struct {
	name  string
	roles []string
}

// devices lists the devices to report from a reading, sorted by name.
func (n *NodeExporter) devices(r *nodeReading) ([]nodeDevice, error) {
	var out []nodeDevice
	if n.named == nil {
		for name := range r.disks {
			if isWholeDisk(name) {
				out = append(out, nodeDevice{name, []string{"host"}})
			}
		}
	} else {
		var missing []string
		for name, roles := range n.named {
			if _, ok := r.disks[name]; !ok {
				missing = append(missing, fmt.Sprintf("%q", name))
				continue
			}
			out = append(out, nodeDevice{name, roles})
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			exist := make([]string, 0, len(r.disks))
			for name := range r.disks {
				exist = append(exist, name)
			}
			sort.Strings(exist)
			return nil, fmt.Errorf("node_exporter at %s reports no disk %s; it reports: %s",
				n.shown, strings.Join(missing, ", "), strings.Join(exist, ", "))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// partitionName matches the kernel's partition names: a letter-named disk followed
// by digits (sda1, vdb2, xvda1, hdc3), or a disk whose name ends in a digit followed
// by p and digits (nvme0n1p1, mmcblk0p2, nbd0p1, loop0p1).
var partitionName = regexp.MustCompile(`^(?:(?:[hsv]|xv)d[a-z]+[0-9]+|.*[0-9]p[0-9]+)$`)

// isWholeDisk guesses from its name alone (all node_exporter reports) whether a
// device's I/O is the database's disk I/O counted once. Partitions are skipped as
// their I/O is counted again in their disk's; device-mapper (dm-*) and software RAID
// (md*) devices are skipped as they sit on whole disks whose counters already have
// their I/O; loop devices because their I/O lands again on the disk holding the
// backing file; ram, zram, sr (optical) and fd (floppy) devices as no database lives
// there. Name the devices to report one of these.
func isWholeDisk(name string) bool {
	for _, prefix := range []string{"loop", "ram", "zram", "sr", "fd", "dm-", "md"} {
		if strings.HasPrefix(name, prefix) {
			return false
		}
	}
	return !partitionName.MatchString(name)
}
