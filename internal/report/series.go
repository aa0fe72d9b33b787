package report

import (
	"math"
	"regexp"
	"slices"
	"sort"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/study"
)

// Series is one configuration's user sweep: a target (and variant: memory, CPUs,
// replica) with its measured points, each the mean of its repeats.
type Series struct {
	// Name identifies the series in every chart and table: the steps' common ID
	// (target/experiment[/variant]), prefixed with the source when a report has
	// several, followed by " @ host" for an external target whose host is known.
	Name string
	// ID is the steps' common ID alone, as a study file's costs block names it.
	ID     string
	Source *Source
	Points []Point // by users, ascending
}

// Point is one user count of a series: the figures of its repeats, each as a Stat.
type Point struct {
	Users int
	Steps []*study.StepResult
	// Throughput: database counters (HammerDB's view) and the client's count.
	NOPMDB, TPMDB, NOPMClient, TPMClient Stat
	// TPMPerUser is the database TPM divided by the users.
	TPMPerUser Stat
	// NewOrderP95 is the client-measured New-Order response time.
	NewOrderP95 Stat
	// CPU shares of all CPUs over the timed window (/proc/stat).
	CPUIdle, CPUIOWait Stat
	// IOAwait is the data disk's average time per I/O, reads and writes together
	// (/proc/diskstats: total I/O time ÷ I/Os); IOP99 the per-I/O 99th percentile
	// (bpftrace, block layer) where it was traced.
	IOAwait, IOP99 Stat
}

// Stat is a figure over a point's repeats. N = 0: not measured (shown as "-").
type Stat struct {
	N              int
	Mean, Min, Max float64
}

func statOf(values []float64) Stat {
	if len(values) == 0 {
		return Stat{}
	}
	s := Stat{N: len(values), Min: math.Inf(1), Max: math.Inf(-1)}
	for _, v := range values {
		s.Mean += v
		s.Min, s.Max = min(s.Min, v), max(s.Max, v)
	}
	s.Mean /= float64(len(values))
	return s
}

// sweepKinds are the step kinds whose runs make user sweeps.
var sweepKinds = []string{study.UserSweep, study.MemorySweep, study.CPUSweep, study.IOSweep, study.Replication, kindRun}

// repeatPart is what varies inside one series: the users and the repeat.
var repeatPart = regexp.MustCompile(`/users=\d+/rep=\d+$`)

// sweeps groups the sources' runs into series, in the order they first appear.
func sweeps(srcs []*Source) []*Series {
	var out []*Series
	byName := map[string]*Series{}
	points := map[string]map[int][]*study.StepResult{}
	for _, src := range srcs {
		for i := range src.Steps {
			r := &src.Steps[i]
			if r.Run == nil || !slices.Contains(sweepKinds, r.Step.Kind) {
				continue
			}
			id := repeatPart.ReplaceAllString(r.Step.ID, "")
			name := qualified(srcs, src, id) + ioLimitName(r)
			if host := targetHost(src, r.Step.Target); host != "" {
				name += " @ " + host
			}
			s := byName[name]
			if s == nil {
				s = &Series{Name: name, ID: id, Source: src}
				byName[name] = s
				points[name] = map[int][]*study.StepResult{}
				out = append(out, s)
			}
			points[name][r.Run.Config.Users] = append(points[name][r.Run.Config.Users], r)
		}
	}
	for _, s := range out {
		for users, steps := range points[s.Name] {
			s.Points = append(s.Points, pointOf(users, steps))
		}
		sort.Slice(s.Points, func(i, j int) bool { return s.Points[i].Users < s.Points[j].Users })
	}
	return out
}

// ioLimitName is " [io LIMIT]" for a step run under its target's I/O limit: an
// io-sweep's steps name theirs in their IDs already.
func ioLimitName(r *study.StepResult) string {
	if r.IOThrottle == nil || r.Step.IOLimit != nil {
		return ""
	}
	return " [io " + r.IOThrottle.Limit.Label() + "]"
}

// targetHost is an external target's host as its environment recorded it ("": a
// managed target, on the machine of the study, or not recorded).
func targetHost(src *Source, target string) string {
	if src.Env == nil {
		return ""
	}
	for _, t := range src.Env.Targets {
		if t.Name == target {
			return t.Host
		}
	}
	return ""
}

func pointOf(users int, steps []*study.StepResult) Point {
	p := Point{Users: users, Steps: steps}
	collect := func(f func(*driver.Result) (float64, bool)) Stat {
		var vs []float64
		for _, s := range steps {
			if v, ok := f(s.Run); ok {
				vs = append(vs, v)
			}
		}
		return statOf(vs)
	}
	always := func(f func(*driver.Result) float64) Stat {
		return collect(func(r *driver.Result) (float64, bool) { return f(r), true })
	}
	p.NOPMDB = always(func(r *driver.Result) float64 { return r.NOPMDB })
	p.TPMDB = always(func(r *driver.Result) float64 { return r.TPMDB })
	p.NOPMClient = collect(func(r *driver.Result) (float64, bool) { return r.NOPMClient, r.Measured("nopm_client") })
	p.TPMClient = collect(func(r *driver.Result) (float64, bool) { return r.TPMClient, r.Measured("tpm_client") })
	p.TPMPerUser = always(func(r *driver.Result) float64 { return r.TPMDB / float64(max(users, 1)) })
	p.NewOrderP95 = always(func(r *driver.Result) float64 { return r.Transactions.NewOrder.P95Ms })
	p.CPUIdle = collect(func(r *driver.Result) (float64, bool) {
		if r.System == nil || r.System.Summary.CPU == nil {
			return 0, false
		}
		return r.System.Summary.CPU.Idle, true
	})
	p.CPUIOWait = collect(func(r *driver.Result) (float64, bool) {
		if r.System == nil || r.System.Summary.CPU == nil {
			return 0, false
		}
		return r.System.Summary.CPU.IOWait, true
	})
	p.IOAwait = collect(func(r *driver.Result) (float64, bool) {
		d := dataDisk(r.System)
		if d == nil {
			return 0, false
		}
		return diskAwait(*d)
	})
	p.IOP99 = collect(func(r *driver.Result) (float64, bool) {
		l := dataLatency(r.System)
		if l == nil || l.IOs == 0 {
			return 0, false
		}
		return l.P99Ms, true
	})
	return p
}

// dataDisk is the summary of the disk holding the database's data (the first disk
// when no role says so).
func dataDisk(sys *metrics.Report) *metrics.Disk {
	if sys == nil || len(sys.Summary.Disks) == 0 {
		return nil
	}
	return diskWithRole(sys.Summary.Disks, "data")
}

func diskWithRole(disks []metrics.Disk, role string) *metrics.Disk {
	for i := range disks {
		if slices.Contains(disks[i].Roles, role) {
			return &disks[i]
		}
	}
	if len(disks) == 0 {
		return nil
	}
	return &disks[0]
}

// diskAwait is the average time per I/O over reads and writes: each side's await is
// its I/O time ÷ its I/Os, so weighting by the rates gives total time ÷ total I/Os.
func diskAwait(d metrics.Disk) (float64, bool) {
	ios := d.ReadIOPS + d.WriteIOPS
	if ios == 0 {
		return 0, false
	}
	return (d.ReadAwaitMs*d.ReadIOPS + d.WriteAwaitMs*d.WriteIOPS) / ios, true
}

// dataLatency is the traced per-I/O latency of the data disk.
func dataLatency(sys *metrics.Report) *metrics.Latency {
	d := dataDisk(sys)
	if d == nil {
		return nil
	}
	for i := range sys.Summary.Latency {
		if sys.Summary.Latency[i].Device == d.Device {
			return &sys.Summary.Latency[i]
		}
	}
	return nil
}

// peak is the point with the highest mean database NOPM.
func (s *Series) peak() *Point {
	var best *Point
	for i := range s.Points {
		if best == nil || s.Points[i].NOPMDB.Mean > best.NOPMDB.Mean {
			best = &s.Points[i]
		}
	}
	return best
}

// at is the point at a user count, or nil.
func (s *Series) at(users int) *Point {
	for i := range s.Points {
		if s.Points[i].Users == users {
			return &s.Points[i]
		}
	}
	return nil
}

// commonUsers is the largest user count every series measured (0: none).
func commonUsers(series []*Series) int {
	if len(series) == 0 {
		return 0
	}
	best := 0
	for _, p := range series[0].Points {
		all := true
		for _, s := range series[1:] {
			if s.at(p.Users) == nil {
				all = false
				break
			}
		}
		if all {
			best = max(best, p.Users)
		}
	}
	return best
}
