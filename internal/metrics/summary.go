package metrics

import (
	"slices"

	"github.com/storbench/storbench/internal/engine"
)

// Summary is a window's figures, computed from the sums of its samples' deltas: a
// rate is total ÷ time, an await total I/O time ÷ total I/Os, a percentile one of the
// merged histogram. Memory levels are means.
type Summary struct {
	FromT    float64   `json:"from_t"`
	ToT      float64   `json:"to_t"`
	Samples  int       `json:"samples"`
	CPU      *CPU      `json:"cpu,omitempty"`
	Memory   *Memory   `json:"memory,omitempty"`
	Disks    []Disk    `json:"disks,omitempty"`
	Latency  []Latency `json:"io_latency,omitempty"`
	Database *Database `json:"database,omitempty"`
	// Waits is where the database's sessions spent their time over the window: the
	// samples' seconds summed.
	Waits *Waits `json:"waits,omitempty"`
	// ProcessIO is each role's I/O over the window, beside the disks' total.
	ProcessIO []RoleTotal `json:"process_io,omitempty"`
	// GroupCPU is each managed instance's cgroup's CPU over the window.
	GroupCPU []GroupCPU `json:"cgroup_cpu,omitempty"`
}

// inWindow tells whether most of a sample's interval lies in (from, to]: its
// midpoint does. The last sample of a run ends a little after the window (it is taken
// once the users have stopped), the first timed one right at its start.
func inWindow(s *Sample, from, to float64) bool {
	mid := s.T - s.Seconds/2
	return mid > from && mid <= to
}

// Summarize sums the samples whose interval lies mostly in (from, to] seconds from the
// origin.
func Summarize(samples []Sample, from, to float64) Summary {
	sum := Summary{FromT: from, ToT: to}
	var cpu CPUTimes
	var haveCPU bool
	var mem [5]float64
	var memN int
	type diskSum struct {
		roles   []string
		d       DiskCounters
		seconds float64
	}
	disks := map[string]*diskSum{}
	var diskOrder []string
	hists := map[string]LatencyHistogram{}
	var latencyOrder []string
	var db engine.Activity
	var dbSeconds float64
	var haveDB bool
	roles := roleSums{}
	var groups groupSums
	var waits waitSums
	for i := range samples {
		s := &samples[i]
		if !inWindow(s, from, to) {
			continue
		}
		sum.Samples++
		if s.CPU != nil {
			cpu, haveCPU = cpu.plus(s.CPU.delta), true
		}
		if m := s.Memory; m != nil {
			for j, v := range []uint64{m.Total, m.Used, m.Cache, m.Dirty, m.Writeback} {
				mem[j] += float64(v)
			}
			memN++
		}
		for _, d := range s.Disks {
			ds := disks[d.Device]
			if ds == nil {
				ds = &diskSum{roles: d.Roles}
				disks[d.Device] = ds
				diskOrder = append(diskOrder, d.Device)
			}
			ds.d, ds.seconds = ds.d.plus(d.delta), ds.seconds+d.seconds
		}
		for _, l := range s.Latency {
			h := hists[l.Device]
			if h == nil {
				h = LatencyHistogram{}
				hists[l.Device] = h
				latencyOrder = append(latencyOrder, l.Device)
			}
			h.Add(l.hist)
		}
		if s.Database != nil {
			db, dbSeconds, haveDB = db.Plus(s.Database.delta), dbSeconds+s.Database.seconds, true
		}
		roles.add(s.ProcessIO)
		groups.add(s.GroupCPU)
		waits.add(s.Waits)
	}
	if haveCPU {
		sum.CPU = cpuShares(cpu)
	}
	if memN > 0 {
		mean := func(j int) uint64 { return uint64(mem[j] / float64(memN)) }
		sum.Memory = &Memory{Total: mean(0), Used: mean(1), Cache: mean(2), Dirty: mean(3), Writeback: mean(4)}
	}
	for _, name := range diskOrder {
		ds := disks[name]
		sum.Disks = append(sum.Disks, diskFigures(name, ds.roles, ds.d, ds.seconds))
	}
	for _, name := range latencyOrder {
		sum.Latency = append(sum.Latency, latencyFigures(name, hists[name]))
	}
	if haveDB {
		sum.Database = databaseFigures(db, dbSeconds)
	}
	sum.Waits = waits.total()
	var disksRead, disksWritten uint64
	for _, d := range sum.Disks {
		disksRead, disksWritten = disksRead+d.delta.ReadSectors*SectorBytes, disksWritten+d.delta.WriteSectors*SectorBytes
	}
	sum.ProcessIO = roles.totals(len(sum.Disks) > 0, disksRead, disksWritten)
	sum.GroupCPU = groups.totals()
	return sum
}

// groupSums adds up the groups' intervals, in their first order.
type groupSums struct {
	order []GroupCPU // each group's sums, in delta and seconds
}

func (g *groupSums) add(cpus []GroupCPU) {
	for _, c := range cpus {
		i := slices.IndexFunc(g.order, func(o GroupCPU) bool { return o.Server == c.Server })
		if i < 0 {
			g.order = append(g.order, GroupCPU{Server: c.Server})
			i = len(g.order) - 1
		}
		o := &g.order[i]
		// Limits are levels: the last interval's.
		o.delta, o.seconds, o.cpus, o.cpuset, o.IOLimit = o.delta.plus(c.delta), o.seconds+c.seconds, c.cpus, c.cpuset, c.IOLimit
	}
}

// totals are the groups' figures over the window.
func (g *groupSums) totals() []GroupCPU {
	var out []GroupCPU
	for _, o := range g.order {
		out = append(out, groupCPUFigures(o.Server, o.cpus, o.cpuset, o.IOLimit, o.delta, o.seconds))
	}
	return out
}

// roleSums adds up the roles' intervals, in their first order.
type roleSums struct {
	order []roleKey
	sums  map[roleKey]*roleSum
}

type roleKey struct{ server, role string }

type roleSum struct {
	source               string
	d                    roleCounters
	byteSeconds, seconds float64
	delay                bool
}

func (r *roleSums) add(ios []RoleIO) {
	if r.sums == nil {
		r.sums = map[roleKey]*roleSum{}
	}
	for _, io := range ios {
		k := roleKey{io.Server, io.Role}
		rs := r.sums[k]
		if rs == nil {
			rs = &roleSum{source: io.Source, delay: true}
			r.sums[k] = rs
			r.order = append(r.order, k)
		}
		rs.d, rs.byteSeconds, rs.seconds = rs.d.plus(io.delta), rs.byteSeconds+io.byteSeconds, rs.seconds+io.seconds
		rs.delay = rs.delay && io.IODelayPct != nil
	}
}

// totals are the roles' figures over the window; with disk figures, each role's
// share of the bytes the disks read and wrote.
func (r *roleSums) totals(haveDisks bool, disksRead, disksWritten uint64) []RoleTotal {
	var out []RoleTotal
	share := func(part, whole uint64) *float64 {
		if !haveDisks || whole == 0 {
			return nil
		}
		pct := 100 * float64(part) / float64(whole)
		return &pct
	}
	for _, k := range r.order {
		rs := r.sums[k]
		f := roleFigures(RoleIO{Source: rs.source}, rs.d, rs.byteSeconds, rs.seconds, rs.delay)
		t := RoleTotal{Server: k.server, Role: k.role, Source: rs.source, ReadMB: float64(rs.d.read) / 1e6,
			ReadPctOfDisks: share(rs.d.read, disksRead), IODelayPct: f.IODelayPct}
		if f.ReadMBps != nil {
			t.ReadMBps = *f.ReadMBps
		}
		if rs.source == sourceBlock {
			mb := float64(rs.d.write) / 1e6
			t.WriteMB, t.WriteMBps, t.WritePctOfDisks = &mb, f.WriteMBps, share(rs.d.write, disksWritten)
		}
		out = append(out, t)
	}
	return out
}
