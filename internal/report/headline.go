package report

import (
	"fmt"
	"strconv"
)

// headlineTable is the one-glance answer to "what did the storage change?": per
// configuration, its peak and where, and every configuration at the largest user
// count they all ran, against the first.
func headlineTable(series []*Series) *Table {
	if len(series) == 0 {
		return nil
	}
	common := commonUsers(series)
	atCol := "NOPM at common users (database)"
	if common > 0 {
		atCol = fmt.Sprintf("NOPM at %d users (database)", common)
		if common == 1 {
			atCol = "NOPM at 1 user (database)"
		}
	}
	t := &Table{
		Title: "Headline",
		Columns: []string{"configuration", "peak NOPM (database)", "at users", atCol, "% of " + series[0].Name,
			"new-order p95 ms at peak (client)", "avg I/O latency ms at peak (diskstats)", "p99 I/O latency ms at peak (bpftrace)"},
		Notes: []string{
			"NOPM (database): New-Orders committed per minute from the database's counters over the timed window (HammerDB's figure); repeated steps are averaged.",
			"new-order p95: client-measured response time; avg I/O latency: the data disk's total I/O time ÷ I/Os (/proc/diskstats), reads and writes together; p99 I/O latency: per-I/O block-layer percentile (bpftrace), '-' where it was not traced.",
		},
	}
	if common == 0 {
		t.Notes = append(t.Notes, "the configurations share no user count: no like-for-like column")
	}
	var first *Point
	if common > 0 {
		first = series[0].at(common)
	}
	for _, s := range series {
		peak := s.peak()
		row := []string{s.Name, mean(peak.NOPMDB, 0), strconv.Itoa(peak.Users), "-", "-",
			mean(peak.NewOrderP95, 2), mean(peak.IOAwait, 3), mean(peak.IOP99, 3)}
		if p := s.at(common); p != nil && common > 0 {
			row[3], row[4] = mean(p.NOPMDB, 0), statPercent(p.NOPMDB, first.NOPMDB)
		}
		t.Rows = append(t.Rows, row)
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
