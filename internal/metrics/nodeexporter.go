package metrics

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/storbench/storbench/internal/engine"
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
}

// nodeReading is one scrape's cumulative counters and levels.
type nodeReading struct {
	at    time.Time
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
		return nil, fmt.Errorf("%w: --metrics-host %q is not an http(s) URL: use node_exporter's metrics URL, e.g. http://db-host:9100/metrics",
			engine.ErrInput, engine.RedactDSN(rawURL))
	}
	// node_exporter's / is an HTML landing page, never the metrics.
	if u.Path == "" || u.Path == "/" {
		u.Path = "/metrics"
	}
	if client == nil {
		client = http.DefaultClient
	}
	n := &NodeExporter{url: u.String(), shown: u.Redacted(), client: client, now: time.Now}
	if len(devices) > 0 {
		n.named = make(map[string][]string, len(devices))
		for name, roles := range devices {
			n.named[name] = slices.Clone(roles)
		}
	}
	return n, nil
}

// Collect scrapes the exporter and, from the second call on, adds the CPU shares,
// memory levels and disk figures since the previous successful scrape. Rates use
// the local times the scrapes completed, so an interval after a failed scrape spans
// the real time since the last good one.
func (n *NodeExporter) Collect(ctx context.Context, s *Sample) error {
	families, err := n.scrape(ctx)
	at := n.now()
	if err != nil {
		return err
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

func (n *NodeExporter) scrape(ctx context.Context) (map[string][]nodeSample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.url, nil)
	if err != nil {
		return nil, fmt.Errorf("node_exporter at %s: %w", n.shown, err)
	}
	// The text format is the one every node_exporter version serves; asking for it
	// keeps newer ones from answering in protobuf or OpenMetrics, or with UTF-8 names.
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := n.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping node_exporter: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxScrapeBytes+1))
	if err != nil {
		return nil, fmt.Errorf("scraping node_exporter at %s: %w", n.shown, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("node_exporter at %s answered %s: %s", n.shown, resp.Status, firstBodyLine(body))
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "text/plain" {
			return nil, fmt.Errorf("%s answered with %q, not Prometheus text metrics: give node_exporter's metrics URL, e.g. http://db-host:9100/metrics",
				n.shown, ct)
		}
	}
	if len(body) > maxScrapeBytes {
		return nil, fmt.Errorf("node_exporter at %s answered more than %d MiB: is it node_exporter's metrics URL?", n.shown, maxScrapeBytes>>20)
	}
	families, err := parseTextMetrics(body)
	if err != nil {
		return nil, fmt.Errorf("parsing node_exporter's metrics from %s: %w", n.shown, err)
	}
	return families, nil
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
// name, with expfmt. (prometheus/common is held at v0.67: later versions import a
// module the package proxy does not serve.)
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
