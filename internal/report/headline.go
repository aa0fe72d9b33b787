package report

import (
	"strconv"
)

// headlineTable is the one-glance answer to "what did the storage change?": per
// configuration, its peak and where, and like for like within its experiment: every
// configuration of an experiment at the largest user count they all ran, against
// the experiment's reference (the first target; of memory or CPU variants, the
// largest). Experiments are never compared with each other: a sweep at 1, 2, 3, 5,
// 8 users and memory variants at 4 users each keep their own column.
func headlineTable(series []*Series) *Table {
	if len(series) == 0 {
		return nil
	}
	t := &Table{
		Title: "Headline",
		Columns: []string{"configuration", "peak NOPM (database)", "at users", "like for like: users", "NOPM there (database)", "% of reference",
			"new-order p95 ms at peak (client)", "avg I/O latency ms at peak (diskstats)", "p99 I/O latency ms at peak (bpftrace)"},
		Notes: []string{
			"NOPM (database): New-Orders committed per minute from the database's counters over the timed window (HammerDB's figure); repeated steps are averaged.",
			"like for like: within each experiment, at the largest user count all its configurations ran, as % of the experiment's reference (its first row: the first target, or the largest memory or CPU variant); '-': the experiment's configurations share no user count.",
			"new-order p95: client-measured response time; avg I/O latency: the data disk's total I/O time ÷ I/Os (/proc/diskstats), reads and writes together; p99 I/O latency: per-I/O block-layer percentile (bpftrace), '-' where it was not traced.",
		},
	}
	for _, g := range sweepGroups(series) {
		common := commonUsers(g.Series)
		var ref *Point
		if common > 0 {
			ref = g.Series[0].at(common)
		}
		for _, s := range g.Series {
			peak := s.peak()
			row := []string{s.Name, mean(peak.NOPMDB, 0), strconv.Itoa(peak.Users), "-", "-", "-",
				mean(peak.NewOrderP95, 2), mean(peak.IOAwait, 3), mean(peak.IOP99, 3)}
			if ref != nil {
				p := s.at(common)
				row[3], row[4], row[5] = strconv.Itoa(common), mean(p.NOPMDB, 0), statPercent(p.NOPMDB, ref.NOPMDB)
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

func headlineSection(series []*Series) *Section {
	t := headlineTable(series)
	if t == nil {
		return nil
	}
	return &Section{ID: "headline", Title: "Headline", Blocks: []Block{{Table: t}}}
}
