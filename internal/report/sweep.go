package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/storbench/storbench/internal/study"
)

// Where the sweep charts' figures come from, said once for the charts and tables
// (NOPM and TPM: throughputSource, a database counter or the client's count).
const (
	p95Source = "client-measured (HdrHistogram)"
	awaitSrc  = "/proc/diskstats: average per I/O, reads and writes"
	cpuSource = "/proc/stat, mean over the timed window"
)

// experimentTitles name a section after its experiment's kind.
var experimentTitles = map[string]string{
	study.UserSweep: "User sweep", study.MemorySweep: "Memory variants", study.CPUSweep: "CPU variants",
	study.Replication: "Replication", kindRun: "Runs",
}

// experiment is the series of one experiment (of every source: the same
// experiment of two studies is compared; single runs make one experiment): the
// charts compare them and nothing else, so bars of different experiments never
// share an axis.
type experiment struct {
	name, kind string
	series     []*Series
}

// experiments groups the series by experiment, in their first order.
func experiments(series []*Series) []*experiment {
	var out []*experiment
	for _, s := range series {
		step := s.Points[0].Steps[0].Step
		name := step.Experiment
		if step.Kind == kindRun {
			name = ""
		}
		i := slices.IndexFunc(out, func(e *experiment) bool { return e.name == name && e.kind == step.Kind })
		if i < 0 {
			out = append(out, &experiment{name: name, kind: step.Kind})
			i = len(out) - 1
		}
		out[i].series = append(out[i].series, s)
	}
	return out
}

// sweepSections are the papers' charts of the TPROC-C experiments, one section per
// experiment: a user sweep as lines per user count, one per configuration, with
// the New-Order p95 and the data disk's latency on the right-hand axis; variants
// (memory, CPUs) measured at one user count as grouped bars; and the experiment's
// own rows of the per-step table.
func sweepSections(series []*Series) []*Section {
	var sections []*Section
	ids := map[string]int{}
	for _, e := range experiments(series) {
		id := "tpcc"
		if e.name != "" {
			id += "-" + sectionID(e.name)
		}
		if ids[id]++; ids[id] > 1 {
			id += "-" + strconv.Itoa(ids[id])
		}
		title := experimentTitles[e.kind]
		if title == "" {
			title = e.kind
		}
		if e.name != "" {
			title += ": " + e.name
		}
		sec := &Section{ID: id, Title: title, Intro: []string{fmt.Sprintf(sweepIntro, throughputSources(e.series))}}
		if len(allUsers(e.series)) > 1 {
			sec.Blocks = sweepLines(e.series)
		} else {
			sec.Blocks = variantBars(e.series)
		}
		sec.Blocks = append(sec.Blocks, Block{Table: stepTable(e.series)})
		if t := verdictTable(e.series); t != nil {
			sec.Blocks = append(sec.Blocks, Block{Table: t})
		}
		if t := sweepRoleTable(e.series); t != nil {
			sec.Blocks = append(sec.Blocks, Block{Table: t})
		}
		if t := sweepWaitTable(e.series); t != nil {
			sec.Blocks = append(sec.Blocks, Block{Table: t})
		}
		sections = append(sections, sec)
	}
	return sections
}

// sectionID keeps the letters, digits and dashes of a name, for an HTML id.
func sectionID(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// figure is one of a point's figures, for the charts.
type figure func(*Point) Stat

func has(series []*Series, f figure) bool {
	for _, s := range series {
		for i := range s.Points {
			if f(&s.Points[i]).N > 0 {
				return true
			}
		}
	}
	return false
}

// repeatedNote says what a point of repeated steps shows.
func repeatedNote(series []*Series) string {
	if maxRepeats(series) > 1 {
		return "; repeats: the mean"
	}
	return ""
}

// sweepLines are a user sweep's charts: a line per configuration over the user
// counts, the left axis a throughput, the right a latency (dashed), as the papers
// draw them.
func sweepLines(series []*Series) []Block {
	repeated := repeatedNote(series)
	users := allUsers(series)
	cats := make([]string, len(users))
	for i, u := range users {
		cats[i] = strconv.Itoa(u)
	}
	lines := func(name string, f figure, axis int) []xySeries {
		var out []xySeries
		for _, s := range series {
			l := xySeries{Name: s.Name + " " + name, YAxis: axis, Y: make([]float64, len(users))}
			for i, u := range users {
				l.Y[i] = math.NaN()
				if p := s.at(u); p != nil && f(p).N > 0 {
					l.Y[i] = f(p).Mean
				}
			}
			out = append(out, l)
		}
		return out
	}
	nopm := func(p *Point) Stat { return p.NOPMDB }
	tpm := func(p *Point) Stat { return p.TPMDB }
	p95 := func(p *Point) Stat { return p.NewOrderP95 }
	await := func(p *Point) Stat { return p.IOAwait }
	p99 := func(p *Point) Stat { return p.IOP99 }
	idle := func(p *Point) Stat { return p.CPUIdle }
	iowait := func(p *Point) Stat { return p.CPUIOWait }
	blocks := []Block{{Chart: ptr(categoryLines("NOPM and New-Order p95 per user count",
		"NOPM: "+throughputSource(series, "nopm_db")+"; dashed, right: New-Order p95, client-measured"+repeated, "users", "NOPM", "p95 ms", cats,
		append(lines("NOPM", nopm, 0), lines("p95 ms", p95, 1)...)))}}
	tpmLines, right, source := lines("TPM", tpm, 0), "", "TPM: "+throughputSource(series, "tpm_db")
	if has(series, await) {
		tpmLines, right, source = append(tpmLines, lines("avg I/O ms", await, 1)...), "ms per I/O", source+"; dashed, right: data disk, average per I/O (diskstats)"
	}
	if has(series, p99) {
		tpmLines, right, source = append(tpmLines, lines("p99 I/O ms", p99, 1)...), "ms per I/O", source+" and p99 (bpftrace)"
	}
	blocks = append(blocks, Block{Chart: ptr(categoryLines("TPM and the data disk's latency per user count", source+repeated, "users", "TPM", right, cats, tpmLines))})
	if has(series, idle) {
		blocks = append(blocks, Block{Chart: ptr(categoryLines("% CPU idle and iowait per user count", cpuSource+"; dashed, right: iowait"+repeated,
			"users", "% idle", "% iowait", cats, append(lines("% idle", idle, 0), lines("% iowait", iowait, 1)...)))})
	}
	return blocks
}

// variantBars are the charts of an experiment measured at one user count: grouped
// bars per variant (memory, CPUs), one bar per target; without variants, one bar
// per configuration.
func variantBars(series []*Series) []Block {
	repeated := repeatedNote(series)
	// A series' ID is target/experiment[/variant]: the variant is the category,
	// the rest names the bar.
	var cats, names []string
	variantOf := func(s *Series) (name, cat string) {
		parts := strings.SplitN(s.ID, "/", 3)
		if len(parts) < 3 {
			return s.Name, strconv.Itoa(s.Points[0].Users) + " users"
		}
		return strings.Replace(s.Name, "/"+parts[2], "", 1), parts[2]
	}
	for _, s := range series {
		name, cat := variantOf(s)
		if !slices.Contains(cats, cat) {
			cats = append(cats, cat)
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	xName := "variant"
	if len(cats) == 1 {
		xName = ""
	}
	bars := func(title, source, yName string, f figure) Block {
		var bs []barSeries
		for _, n := range names {
			vs := make([]float64, len(cats))
			for i := range vs {
				vs[i] = math.NaN()
			}
			for _, s := range series {
				if name, cat := variantOf(s); name == n && f(&s.Points[0]).N > 0 {
					vs[slices.Index(cats, cat)] = f(&s.Points[0]).Mean
				}
			}
			bs = append(bs, barSeries{Name: n, Values: vs})
		}
		return Block{Chart: ptr(barChart(title, source+repeated, xName, yName, cats, bs))}
	}
	users := strconv.Itoa(series[0].Points[0].Users)
	blocks := []Block{
		bars("NOPM at "+users+" users", throughputSource(series, "nopm_db")+" (New-Orders committed per minute)", "NOPM", func(p *Point) Stat { return p.NOPMDB }),
		bars("TPM at "+users+" users", throughputSource(series, "tpm_db")+" (commits + rollbacks per minute)", "TPM", func(p *Point) Stat { return p.TPMDB }),
		bars("New-Order p95 response time at "+users+" users", p95Source, "ms", func(p *Point) Stat { return p.NewOrderP95 }),
	}
	if f := func(p *Point) Stat { return p.IOAwait }; has(series, f) {
		blocks = append(blocks, bars("Average I/O latency of the data disk at "+users+" users", awaitSrc, "ms", f))
	}
	if f := func(p *Point) Stat { return p.CPUIdle }; has(series, f) {
		blocks = append(blocks, bars("% CPU idle at "+users+" users", cpuSource, "% idle", f))
	}
	return blocks
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
				databaseCell(&p, "nopm_db", p.NOPMDB), databaseCell(&p, "tpm_db", p.TPMDB), stat(p.NOPMClient, 0), stat(p.TPMClient, 0), databaseCell(&p, "tpm_db", p.TPMPerUser),
				stat(p.NewOrderP95, 2), stat(p.CPUIdle, 1), stat(p.CPUIOWait, 1), stat(p.IOAwait, 3), stat(p.IOP99, 3)})
		}
	}
	return t
}

// verdictTable gives each run's bottleneck verdict and the figures that decided it;
// nil when no run has one (no metrics sampled, or stored before verdicts).
func verdictTable(series []*Series) *Table {
	t := &Table{Title: "Bottleneck per step", Columns: []string{"configuration", "users", "run", "bottleneck", "deciding figures"},
		Notes: []string{"what limited each run's timed window, from the wait shares where sampled, else the instance's cgroup, the host's CPUs, the disks and the driver's own CPU; docs/bottlenecks.md says how each is decided and how to read it."}}
	for _, s := range series {
		for _, p := range s.Points {
			for i, st := range p.Steps {
				v := st.Run.Bottleneck
				if v == nil {
					continue
				}
				var figs []string
				for _, f := range v.Figures {
					figs = append(figs, f.Text())
				}
				t.Rows = append(t.Rows, []string{s.Name, strconv.Itoa(p.Users), strconv.Itoa(i + 1), v.Detail, strings.Join(figs, ", ")})
			}
		}
	}
	if len(t.Rows) == 0 {
		return nil
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
