package report

import (
	"math"
	"slices"
	"strconv"
)

// sweepSections are the papers' user-sweep charts: throughput per user step, TPM
// per user, CPU per step and latency per step, one series per configuration.
func sweepSections(series []*Series) []*Section {
	if len(series) == 0 {
		return nil
	}
	users := allUsers(series)
	cats := make([]string, len(users))
	for i, u := range users {
		cats[i] = strconv.Itoa(u)
	}
	bars := func(title, source, yName string, f func(*Point) Stat) Chart {
		var bs []barSeries
		for _, s := range series {
			vs := make([]float64, len(users))
			for i, u := range users {
				vs[i] = math.NaN()
				if p := s.at(u); p != nil && f(p).N > 0 {
					vs[i] = f(p).Mean
				}
			}
			bs = append(bs, barSeries{Name: s.Name, Values: vs})
		}
		return barChart(title, source, "users", yName, cats, bs)
	}
	has := func(f func(*Point) Stat) bool {
		for _, s := range series {
			for i := range s.Points {
				if f(&s.Points[i]).N > 0 {
					return true
				}
			}
		}
		return false
	}
	repeated := ""
	if maxRepeats(series) > 1 {
		repeated = "; repeated steps: the mean (the tables give the range)"
	}

	throughput := &Section{ID: "throughput", Title: "Throughput per user step",
		Intro: []string{"NOPM and TPM from the database's counters over each step's timed window (HammerDB's view); the table also gives storbench's own client count" + repeated + "."}}
	throughput.Blocks = []Block{
		{Chart: ptr(bars("NOPM per user step", throughputSource(series, "nopm_db")+" (New-Orders committed per minute)"+repeated, "NOPM", func(p *Point) Stat { return p.NOPMDB }))},
		{Chart: ptr(bars("TPM per user step", throughputSource(series, "tpm_db")+" (commits + rollbacks per minute)"+repeated, "TPM", func(p *Point) Stat { return p.TPMDB }))},
		{Chart: ptr(bars("TPM per user", throughputSource(series, "tpm_db")+" TPM ÷ virtual users"+repeated, "TPM per user", func(p *Point) Stat { return p.TPMPerUser }))},
		{Table: stepTable(series)},
	}
	sections := []*Section{throughput}

	cpu := &Section{ID: "cpu", Title: "CPU per user step",
		Intro: []string{"Shares of all CPUs over each step's timed window, from /proc/stat on the database's host: the papers' '% CPU idle' (Perfmon) and the time waiting for I/O."}}
	if has(func(p *Point) Stat { return p.CPUIdle }) {
		cpu.Blocks = append(cpu.Blocks,
			Block{Chart: ptr(bars("% CPU idle per user step", "/proc/stat, mean over the timed window"+repeated, "% idle", func(p *Point) Stat { return p.CPUIdle }))},
			Block{Chart: ptr(bars("% CPU iowait per user step", "/proc/stat, mean over the timed window"+repeated, "% iowait", func(p *Point) Stat { return p.CPUIOWait }))})
	}
	sections = append(sections, cpu)

	latency := &Section{ID: "latency", Title: "Latency per user step",
		Intro: []string{"New-Order response time as the client measured it; the data disk's average time per I/O (/proc/diskstats: I/O time ÷ I/Os, an average, not a percentile); and the per-I/O 99th percentile where storbench traced the block layer (bpftrace)."}}
	latency.Blocks = append(latency.Blocks,
		Block{Chart: ptr(bars("New-Order p95 response time per user step", "client-measured (HdrHistogram)"+repeated, "ms", func(p *Point) Stat { return p.NewOrderP95 }))})
	if has(func(p *Point) Stat { return p.IOAwait }) {
		latency.Blocks = append(latency.Blocks,
			Block{Chart: ptr(bars("Average I/O latency per user step (data disk)", "/proc/diskstats: average per I/O, reads and writes"+repeated, "ms", func(p *Point) Stat { return p.IOAwait }))})
	}
	if has(func(p *Point) Stat { return p.IOP99 }) {
		latency.Blocks = append(latency.Blocks,
			Block{Chart: ptr(bars("99th percentile I/O latency per user step (data disk)", "bpftrace, block layer: per-I/O percentile"+repeated, "ms", func(p *Point) Stat { return p.IOP99 }))})
	}
	return append(sections, latency)
}

// stepTable lists every point of every series with its figures and their sources.
func stepTable(series []*Series) *Table {
	t := &Table{Title: "Per user step",
		Columns: []string{"configuration", "users", "runs", "NOPM (database)", "TPM (database)", "NOPM (client)", "TPM (client)",
			"TPM per user (database)", "new-order p95 ms (client)", "CPU idle %", "CPU iowait %", "avg I/O ms (diskstats)", "p99 I/O ms (bpftrace)"},
		Notes: append([]string{"a figure measured in more than one run shows its mean and, in brackets, the lowest and highest run; '-': not measured."}, databaseNotes(series)...)}
	for _, s := range series {
		for _, p := range s.Points {
			t.Rows = append(t.Rows, []string{s.Name, strconv.Itoa(p.Users), strconv.Itoa(len(p.Steps)),
				databaseCell(&p, "nopm_db", p.NOPMDB), databaseCell(&p, "tpm_db", p.TPMDB), stat(p.NOPMClient, 0), stat(p.TPMClient, 0), stat(p.TPMPerUser, 0),
				stat(p.NewOrderP95, 2), stat(p.CPUIdle, 1), stat(p.CPUIOWait, 1), stat(p.IOAwait, 3), stat(p.IOP99, 3)})
		}
	}
	return t
}

func allUsers(series []*Series) []int {
	var users []int
	for _, s := range series {
		for _, p := range s.Points {
			if !slices.Contains(users, p.Users) {
				users = append(users, p.Users)
			}
		}
	}
	slices.Sort(users)
	return users
}

func maxRepeats(series []*Series) int {
	n := 0
	for _, s := range series {
		for _, p := range s.Points {
			n = max(n, len(p.Steps))
		}
	}
	return n
}

func ptr[T any](v T) *T { return &v }
