package metrics

import (
	"encoding/csv"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/storbench/storbench/internal/outfile"
)

// SamplesCSV is the samples' CSV as outfile knows it again: by its first columns,
// those fields puts first.
var SamplesCSV = outfile.CSV("a samples CSV storbench wrote", "t,time,interval_s")

// CSVWriter streams samples as CSV rows, one per interval, flushed as written. The
// columns are those of the first sample (the devices do not change during a run); a
// figure missing from a later sample is an empty cell.
type CSVWriter struct {
	w       *csv.Writer
	columns []string
}

// NewCSVWriter writes to w.
func NewCSVWriter(w io.Writer) *CSVWriter { return &CSVWriter{w: csv.NewWriter(w)} }

// field is one named cell of a sample.
type field struct {
	name  string
	value string
}

// Write appends one sample, after the header if it is the first, and returns the
// names of its figures that have no column.
func (c *CSVWriter) Write(s *Sample) ([]string, error) {
	fields := s.fields()
	if c.columns == nil {
		for _, f := range fields {
			c.columns = append(c.columns, f.name)
		}
		if err := c.w.Write(c.columns); err != nil {
			return nil, err
		}
	}
	byName := make(map[string]string, len(fields))
	for _, f := range fields {
		byName[f.name] = f.value
	}
	var missing []string
	for _, f := range fields {
		if !slices.Contains(c.columns, f.name) {
			missing = append(missing, f.name)
		}
	}
	row := make([]string, len(c.columns))
	for i, name := range c.columns {
		row[i] = byName[name]
	}
	if err := c.w.Write(row); err != nil {
		return nil, err
	}
	c.w.Flush()
	return missing, c.w.Error()
}

// fields flattens a sample into named cells; per-device columns are prefixed with the
// device's name.
func (s *Sample) fields() []field {
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	fixed := func(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	fs := []field{{"t", num(s.T)}, {"time", s.Time.UTC().Format(time.RFC3339Nano)}, {"interval_s", fixed(s.Seconds, 3)}}
	if c := s.CPU; c != nil {
		fs = append(fs, field{"cpu_user_pct", fixed(c.User, 2)}, field{"cpu_system_pct", fixed(c.System, 2)},
			field{"cpu_idle_pct", fixed(c.Idle, 2)}, field{"cpu_iowait_pct", fixed(c.IOWait, 2)},
			field{"cpu_steal_pct", fixed(c.Steal, 2)})
	}
	if m := s.Memory; m != nil {
		fs = append(fs, field{"mem_used_bytes", u(m.Used)}, field{"mem_cache_bytes", u(m.Cache)},
			field{"mem_dirty_bytes", u(m.Dirty)}, field{"mem_writeback_bytes", u(m.Writeback)})
	}
	for _, d := range s.Disks {
		p := d.Device + "_"
		fs = append(fs, field{p + "read_iops", fixed(d.ReadIOPS, 1)}, field{p + "write_iops", fixed(d.WriteIOPS, 1)},
			field{p + "read_mb_s", fixed(d.ReadMBps, 3)}, field{p + "write_mb_s", fixed(d.WriteMBps, 3)},
			field{p + "read_await_ms", fixed(d.ReadAwaitMs, 3)}, field{p + "write_await_ms", fixed(d.WriteAwaitMs, 3)},
			field{p + "avg_queue", fixed(d.AvgQueue, 2)}, field{p + "busy_pct", fixed(d.BusyPct, 1)})
	}
	for _, l := range s.Latency {
		p := l.Device + "_io_"
		fs = append(fs, field{p + "count", strconv.FormatInt(l.IOs, 10)}, field{p + "p50_ms", fixed(l.P50Ms, 4)},
			field{p + "p99_ms", fixed(l.P99Ms, 4)}, field{p + "p99_9_ms", fixed(l.P999Ms, 4)})
	}
	if d := s.Database; d != nil {
		fs = append(fs, field{"db_commits_s", fixed(d.CommitsPerSec, 1)}, field{"db_rollbacks_s", fixed(d.RollbacksPerSec, 1)},
			field{"db_blocks_read_s", fixed(d.BlocksReadPerS, 1)}, field{"db_blocks_hit_s", fixed(d.BlocksHitPerS, 1)},
			field{"db_buffer_hit_pct", fixed(d.BufferHitPct, 2)}, field{"db_wal_mb_s", fixed(d.WALMBps, 3)},
			field{"db_checkpoints", strconv.FormatInt(d.Checkpoints, 10)}, field{"db_temp_mb_s", fixed(d.TempMBps, 3)},
			field{"db_fsyncs_s", fixed(d.FsyncsPerSec, 1)}, field{"db_data_write_mb_s", fixed(d.DataWriteMBps, 3)})
		for _, w := range d.Writes {
			fs = append(fs, field{"db_" + w.Role + "_write_mb_s", fixed(w.MBps, 3)})
		}
	}
	if c := s.Waits.Clients(); c != nil {
		// The clients' shares, named after the role whatever the engine calls it.
		for _, class := range WaitClasses {
			fs = append(fs, field{"clients_wait_" + class + "_pct", fixed(c.Pct(class), 1)})
		}
		fs = append(fs, field{"clients_active_sessions", fixed(c.MeanActive(), 2)})
	}
	for _, r := range s.ProcessIO {
		p := "proc_" + r.Role + "_"
		if r.Server != "" {
			p = "proc_" + r.Server + "_" + r.Role + "_"
		}
		// A late trace leaves an interval's cells empty; "proc" has no write column.
		opt := func(v *float64) string {
			if v == nil {
				return ""
			}
			return fixed(*v, 3)
		}
		fs = append(fs, field{p + "read_mb_s", opt(r.ReadMBps)})
		if r.Source == sourceBlock {
			fs = append(fs, field{p + "write_mb_s", opt(r.WriteMBps)})
		}
		if r.IODelayPct != nil {
			fs = append(fs, field{p + "io_delay_pct", fixed(*r.IODelayPct, 1)})
		}
	}
	for _, g := range s.GroupCPU {
		p := "cgroup_"
		if g.Server != "" {
			p = "cgroup_" + g.Server + "_"
		}
		fs = append(fs, field{p + "used_cpus", fixed(g.UsedCPUs, 3)}, field{p + "limit_cpus", fixed(g.LimitCPUs, 2)})
		if g.ThrottledPct != nil {
			fs = append(fs, field{p + "throttled_pct", fixed(*g.ThrottledPct, 1)}, field{p + "throttled_s", fixed(*g.ThrottledSeconds, 3)})
		}
	}
	if s.judged {
		fs = append(fs, field{"bottleneck", s.Bottleneck})
	}
	return fs
}
