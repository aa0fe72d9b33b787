package metrics

import (
	"fmt"
	"io"
	"strings"

	"github.com/storbench/storbench/internal/blockdev"
)

// Report is what a run stores under "system": where the figures come from, where the
// database's directories are, the window's summary and every sample.
type Report struct {
	// Source is the host the figures describe.
	Source          string               `json:"source"`
	IntervalSeconds float64              `json:"interval_s"`
	Placements      []blockdev.Placement `json:"placements,omitempty"`
	Sources         map[string]string    `json:"sources"`
	Summary         Summary              `json:"summary"`
	Samples         []Sample             `json:"samples"`
	// Users is how many client sessions the workload ran (0: none, or not known),
	// beside the mean number the wait profile saw active.
	Users int      `json:"users,omitempty"`
	Notes []string `json:"notes,omitempty"`
	// Clock compares a node_exporter host's clock with this machine's.
	Clock *HostClock `json:"clock,omitempty"`
}

// WriteText prints the summary the way the papers quote it, each figure with its kind
// (average per I/O, per-I/O percentile, rate).
func WriteText(out io.Writer, r *Report, window string) {
	s := r.Summary
	fmt.Fprintf(out, "\nsystem, %s (%s, %d samples of %gs):\n", window, r.Source, s.Samples, r.IntervalSeconds)
	if c := s.CPU; c != nil {
		fmt.Fprintf(out, "  cpu: idle %.0f%%, iowait %.0f%%, user %.0f%%, system %.0f%%, steal %.0f%% (of all CPUs)\n",
			c.Idle, c.IOWait, c.User, c.System, c.Steal)
	}
	if m := s.Memory; m != nil {
		fmt.Fprintf(out, "  memory: used %s, page cache %s, dirty %s, writeback %s (means)\n",
			bytesText(m.Used), bytesText(m.Cache), bytesText(m.Dirty), bytesText(m.Writeback))
	}
	for _, p := range r.Placements {
		fmt.Fprintf(out, "  %s %s: %s on %s (%s)\n", p.Role, p.Path, p.FSType, p.Mount, p.Chain)
	}
	for _, d := range s.Disks {
		fmt.Fprintf(out, "  %s disk %s: %s r/s %s w/s, %.1f MB/s read %.1f MB/s write, %.2f ms/read %.2f ms/write (average per I/O), queue %.1f, busy %.0f%% (time with I/O in flight, not saturation on SSD/NVMe)\n",
			strings.Join(d.Roles, "+"), d.Device, thousands(d.ReadIOPS), thousands(d.WriteIOPS), d.ReadMBps, d.WriteMBps,
			d.ReadAwaitMs, d.WriteAwaitMs, d.AvgQueue, d.BusyPct)
	}
	for _, l := range s.Latency {
		fmt.Fprintf(out, "  per-I/O latency %s: p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms over %s I/Os (bpftrace, block layer)\n",
			l.Device, l.P50Ms, l.P99Ms, l.P999Ms, thousands(float64(l.IOs)))
	}
	if d := s.Database; d != nil {
		fmt.Fprintf(out, "  database: %s commits/s, %s rollbacks/s, buffer hit %.1f%%, WAL %.1f MB/s, %d checkpoints, temp %.1f MB/s, %s fsyncs/s, data written %.1f MB/s\n",
			thousands(d.CommitsPerSec), thousands(d.RollbacksPerSec), d.BufferHitPct, d.WALMBps, d.Checkpoints, d.TempMBps,
			thousands(d.FsyncsPerSec), d.DataWriteMBps)
		if len(d.Writes) > 0 {
			parts := make([]string, len(d.Writes))
			for i, w := range d.Writes {
				parts[i] = fmt.Sprintf("%s %.1f MB", w.Role, w.MB)
			}
			fmt.Fprintf(out, "  written by role, as the database counts it (handed to the OS; see its source): %s\n", strings.Join(parts, ", "))
		}
	}
	writeWaits(out, s.Waits, r.Users)
	for _, t := range s.ProcessIO {
		if t.ReadMB == 0 && (t.WriteMB == nil || *t.WriteMB == 0) {
			continue
		}
		who := t.Role
		if t.Server != "" {
			who = t.Server + " " + t.Role
		}
		if t.WriteMB == nil {
			fmt.Fprintf(out, "  I/O of %s: %.1f MB read%s (/proc/PID/io; writes by role: the database's own counts)\n", who,
				t.ReadMB, pctText(t.ReadPctOfDisks, "%.0f%% of the disks' reads"))
			continue
		}
		fmt.Fprintf(out, "  I/O of %s: %.1f MB read%s, %.1f MB written%s (block layer, by issuing task)\n", who,
			t.ReadMB, pctText(t.ReadPctOfDisks, "%.0f%% of the disks' reads"),
			*t.WriteMB, pctText(t.WritePctOfDisks, "%.0f%% of the disks' writes"))
	}
	for _, g := range s.GroupCPU {
		who := "the instance's cgroup"
		if g.Server != "" {
			who = g.Server + "'s cgroup"
		}
		limit := fmt.Sprintf("the host's %g", g.LimitCPUs)
		if g.Limited {
			limit = fmt.Sprintf("its limit of %g", g.LimitCPUs)
		}
		throttled := ""
		if g.ThrottledPct != nil {
			throttled = fmt.Sprintf(", throttled in %.0f%% of its quota's periods", *g.ThrottledPct)
		}
		fmt.Fprintf(out, "  cpu of %s: %.2f CPUs used and %.2f waiting to run, of %s%s (cgroup)\n", who, g.UsedCPUs, g.WaitCPUs, limit, throttled)
	}
	if c := r.Clock; c != nil && c.FirstSkewMs != nil {
		fmt.Fprintf(out, "  clock of %s: %+.1f ms from this machine's at the first scrape (+: ahead), at most %.1f ms apart; samples placed within ±%.1f ms (half the worst scrape round trip)\n",
			c.Host, *c.FirstSkewMs, *c.MaxAbsSkewMs, c.MaxRoundTripMs/2)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(out, "  note: %s\n", n)
	}
}

// waitLabels name the wait classes in the text summary.
var waitLabels = map[string]string{WaitCPU: "CPU", WaitDataIO: "data I/O", WaitWAL: "WAL", WaitLock: "locks",
	WaitLWLock: "LWLocks", WaitClient: "client", WaitOther: "other"}

// writeWaits prints the clients' wait shares, then each background role's active
// time, or what was missing.
func writeWaits(out io.Writer, w *Waits, users int) {
	if w == nil {
		return
	}
	c := w.Clients()
	if c == nil {
		fmt.Fprintf(out, "  waits: none (%s)\n", w.Missing)
		return
	}
	shares := func(r RoleWaits) string {
		var parts []string
		for _, class := range WaitClasses {
			parts = append(parts, fmt.Sprintf("%s %.0f%%", waitLabels[class], r.Pct(class)))
		}
		return strings.Join(parts, ", ")
	}
	of := ""
	if users > 0 {
		of = fmt.Sprintf(" of %d users", users)
	}
	fmt.Fprintf(out, "  waits (clients, %s): %s; %.1f active%s\n", w.Source, shares(*c), c.MeanActive(), of)
	for _, r := range w.Roles[1:] {
		fmt.Fprintf(out, "  waits of %s: %.2f s active (%s)\n", r.Role, r.Active(), shares(r))
	}
	if w.Missing != "" {
		fmt.Fprintf(out, "  waits missing: %s\n", w.Missing)
	}
}

// pctText gives a role's share of the disks' bytes, when known, in format.
func pctText(pct *float64, format string) string {
	if pct == nil {
		return ""
	}
	return " (" + fmt.Sprintf(format, *pct) + ")"
}

// thousands formats a rate rounded to a whole number with thousands separators.
func thousands(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// bytesText prints a byte count in the largest binary unit below it.
func bytesText(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
