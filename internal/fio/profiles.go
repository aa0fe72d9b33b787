package fio

import (
	"fmt"
	"slices"
	"strings"

	"github.com/storbench/storbench/internal/input"
)

// Profile is a named storage test from the papers: a table of points that fio runs
// one after another on the same test file.
type Profile struct {
	Name        string
	Description string
	Source      string
	Points      []PointSpec
}

// PointSpec is one point of a profile: one fio job with group reporting.
type PointSpec struct {
	Name       string
	Pattern    string // fio's rw: randread, randwrite, randrw, read, write, rw
	BlockSize  int    // bytes
	ReadPct    int    // for the mixed patterns randrw and rw
	Jobs       int
	QueueDepth int
	// DSync opens the file O_DSYNC as well as O_DIRECT: every write is durable
	// before it completes (DiskSpd -h, a database's log and data file writes).
	DSync bool
	// RandomBuffers refills the write buffers with random data for every I/O
	// (DiskSpd -Z): storage that compresses or deduplicates cannot shortcut them.
	RandomBuffers bool
	// Steady asks fio to detect steady state with this criterion.
	Steady string
}

const kib = 1024

// mixName names a point's pattern for tables: "randrw 70/30", "read".
func (p PointSpec) mixName() string {
	if p.Pattern == "randrw" || p.Pattern == "rw" {
		return fmt.Sprintf("%s %d/%d", p.Pattern, p.ReadPct, 100-p.ReadPct)
	}
	return p.Pattern
}

// point builds a spec whose name says what it is, e.g. "8k-randrw60-j4-qd8".
func point(pattern string, bs, readPct, jobs, qd int) PointSpec {
	mix := pattern
	if pattern == "randrw" || pattern == "rw" {
		mix = fmt.Sprintf("%s%d", pattern, readPct)
	}
	return PointSpec{Name: fmt.Sprintf("%dk-%s-j%d-qd%d", bs/kib, mix, jobs, qd), Pattern: pattern,
		BlockSize: bs, ReadPct: readPct, Jobs: jobs, QueueDepth: qd}
}

func dsync(p PointSpec) PointSpec {
	p.DSync = true
	p.Name += "-dsync"
	return p
}

// dataMatrix is the papers' data-file matrix: 8 KiB (a database page) read, write,
// 60/40 and 40/60 over threads × queue depth, plus larger reads and writes such as
// read-ahead and checkpoints issue.
func dataMatrix() []PointSpec {
	var ps []PointSpec
	for _, mix := range []struct {
		pattern string
		readPct int
	}{{"randread", 100}, {"randwrite", 0}, {"randrw", 60}, {"randrw", 40}} {
		for _, jobs := range []int{4, 8, 16, 32} {
			for _, qd := range []int{4, 8, 16} {
				ps = append(ps, point(mix.pattern, 8*kib, mix.readPct, jobs, qd))
			}
		}
	}
	for _, bs := range []int{64 * kib, 512 * kib} {
		ps = append(ps, point("randread", bs, 100, 8, 8), point("randwrite", bs, 0, 8, 8))
	}
	return ps
}

// logSequential is the papers' log-file pattern: 60 KiB and 120 KiB sequential writes
// (a log flush's sizes), durable at queue depth 1 as a commit waits for them, then
// at queue depth 8, and mixed 60/40 as when log backups read the log.
func logSequential() []PointSpec {
	var ps []PointSpec
	for _, bs := range []int{60 * kib, 120 * kib} {
		ps = append(ps, dsync(point("write", bs, 0, 1, 1)), point("write", bs, 0, 1, 8), point("rw", bs, 60, 1, 8))
	}
	return ps
}

// Profiles are the papers' raw-storage tests.
var Profiles = []Profile{
	{
		Name:        "hcibench-4k-70r",
		Description: "4 KiB random, 70% read, 4 jobs × queue depth 8",
		Source:      "HCIBench's OLTP-like default workload in the hyperconverged storage papers",
		Points:      []PointSpec{point("randrw", 4*kib, 70, 4, 8)},
	},
	{
		Name:        "sql-data-8k",
		Description: "8 KiB random, 25% writes, 8 jobs × queue depth 4, O_DIRECT + O_DSYNC, random buffers",
		Source:      "DiskSpd -b8K -d30 -o4 -t8 -h -r -w25 -L -Z1G -c20G, SQL Server data files",
		Points: []PointSpec{func() PointSpec {
			p := dsync(point("randrw", 8*kib, 75, 8, 4))
			p.RandomBuffers = true
			return p
		}()},
	},
	{
		Name:        "data-matrix",
		Description: "8 KiB read, write, 60/40, 40/60 at jobs {4,8,16,32} × queue depth {4,8,16}, plus 64 KiB and 512 KiB reads and writes (52 points)",
		Source:      "the data-file matrices of the SQL Server storage papers",
		Points:      dataMatrix(),
	},
	{
		Name:        "log-seq",
		Description: "60 KiB and 120 KiB sequential writes at queue depth 1 with O_DSYNC and at 8, and 60/40 read/write",
		Source:      "the log-file patterns of the SQL Server storage papers",
		Points:      logSequential(),
	},
	{
		Name:        "steady-4k-75r-qd32",
		Description: "4 KiB random, 75% read, queue depth 32, until the IOPS slope is flat (fio steadystate iops_slope:0.3%)",
		Source:      "the SSD papers' steady-state 4k 75/25 run",
		Points: []PointSpec{func() PointSpec {
			p := point("randrw", 4*kib, 75, 1, 32)
			p.Steady = "iops_slope:0.3%"
			return p
		}()},
	},
	{
		Name:        "seq-read-256k",
		Description: "256 KiB sequential reads, queue depth 32",
		Source:      "the papers' sequential read test (backup reads, scans)",
		Points:      []PointSpec{point("read", 256*kib, 100, 1, 32)},
	},
	{
		Name:        "seq-write-128k",
		Description: "128 KiB sequential writes, queue depth 32",
		Source:      "the papers' sequential write test (restores, bulk loads)",
		Points:      []PointSpec{point("write", 128*kib, 0, 1, 32)},
	},
}

// Lookup finds profiles by name; every profile if all is set.
func Lookup(names []string, all bool) ([]Profile, error) {
	if all {
		return Profiles, nil
	}
	if len(names) == 0 {
		return nil, input.Errorf("profiles", "give {profiles} NAME (see storbench fio --list) or {all}")
	}
	var out []Profile
	for _, n := range names {
		i := slices.IndexFunc(Profiles, func(p Profile) bool { return p.Name == n })
		if i < 0 {
			return nil, input.Errorf("profiles", "no fio profile %q: use one of %s", n, strings.Join(profileNames(), ", "))
		}
		out = append(out, Profiles[i])
	}
	return out, nil
}

func profileNames() []string {
	var ns []string
	for _, p := range Profiles {
		ns = append(ns, p.Name)
	}
	return ns
}
