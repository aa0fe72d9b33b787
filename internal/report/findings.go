package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/bottleneck"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/instance/cgroup"
	"github.com/storbench/storbench/internal/study"
)

// findingsSection opens the report as the papers do: a few sentences with numbers,
// per experiment, each comparing like with like, computed from the data.
func findingsSection(srcs []*Source, series []*Series) *Section {
	t := &Table{Title: "Findings", Columns: []string{"experiment", "finding"},
		Notes: []string{"NOPM: the database's New-Orders per minute over the timed window, the mean of repeats; ratios are B ÷ A. " +
			"A difference inside the lowest–highest range of the repeats, or measured over a timed window under " +
			strconv.Itoa(int(driver.CounterWindow.Seconds())) + " s or one judged unsteady (docs/steadiness.md), names no winner."}}
	add := func(experiment string, sentences []string) {
		for _, s := range sentences {
			t.Rows = append(t.Rows, []string{experiment, s})
		}
	}
	for _, g := range sweepGroups(series) {
		add(g.label(), g.findings())
	}
	for _, e := range capacityExperiments(srcs) {
		add(e.Name+" (capacity)", e.findings())
	}
	for _, e := range transferExperiments(srcs) {
		add(e.Name+" (backup and restore)", e.findings())
	}
	for _, p := range consolidationPairs(srcs) {
		add(p.Name+" (consolidation)", p.findings())
	}
	runs := fioRuns(srcs)
	for _, prof := range profileNames(runs) {
		add(prof+" (fio)", profileFindings(prof, runsOf(runs, prof)))
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return &Section{ID: "findings", Title: "Findings", Blocks: []Block{{Table: t}}}
}

// sweepGroup is what one experiment of runs compares: the targets of a user sweep
// (against the first), or one target's memory or CPU variants (against the
// largest). Series of two stores of one study file fall in the same group.
type sweepGroup struct {
	Kind, Experiment, Target string
	// Series holds the reference first.
	Series []*Series
}

// variantKinds are the kinds whose series are one target's variants.
var variantKinds = []string{study.MemorySweep, study.CPUSweep}

// step is a series' first step, which names its experiment and variant.
func (s *Series) step() study.Step { return s.Points[0].Steps[0].Step }

// variantSize orders a target's variants: its memory, or its number of CPUs.
func (s *Series) variantSize() int64 {
	st := s.step()
	if st.Kind == study.CPUSweep {
		return int64(cgroup.CountCPUs(st.CPUs))
	}
	return st.Memory
}

func sweepGroups(series []*Series) []*sweepGroup {
	var out []*sweepGroup
	byKey := map[string]*sweepGroup{}
	for _, s := range series {
		st := s.step()
		g := &sweepGroup{Kind: st.Kind, Experiment: st.Experiment}
		if st.Kind == kindRun {
			g.Experiment = ""
		}
		if slices.Contains(variantKinds, st.Kind) {
			g.Target = st.Target
		}
		key := g.Kind + "\x00" + g.Experiment + "\x00" + g.Target
		if byKey[key] == nil {
			byKey[key] = g
			out = append(out, g)
		}
		byKey[key].Series = append(byKey[key].Series, s)
	}
	for _, g := range out {
		if g.Target == "" {
			continue
		}
		// The largest variant is the reference: what less memory or fewer CPUs cost.
		largest := 0
		for i, s := range g.Series {
			if s.variantSize() > g.Series[largest].variantSize() {
				largest = i
			}
		}
		ref := g.Series[largest]
		g.Series = append([]*Series{ref}, slices.Delete(slices.Clone(g.Series), largest, largest+1)...)
	}
	return out
}

func (g *sweepGroup) label() string {
	switch {
	case g.Kind == kindRun:
		return "runs"
	case g.Kind == study.MemorySweep:
		return g.Experiment + " on " + g.Target + " (memory variants)"
	case g.Kind == study.CPUSweep:
		return g.Experiment + " on " + g.Target + " (CPU variants)"
	default:
		return g.Experiment + " (" + g.Kind + ")"
	}
}

func (g *sweepGroup) findings() []string {
	ref := g.Series[0]
	if len(g.Series) == 1 {
		return []string{singleSweepFinding(ref)}
	}
	var out []string
	common := commonUsers(g.Series)
	for _, s := range g.Series[1:] {
		if common > 0 {
			out = append(out, comparePoints(s.Name, ref.Name, s.at(common), ref.at(common), fmt.Sprintf("at %s", usersText(common))))
		}
		pb, pa := s.peak(), ref.peak()
		if pb.Users != common || pa.Users != common {
			out = append(out, comparePoints(
				fmt.Sprintf("%s (peak at %s)", s.Name, usersText(pb.Users)),
				fmt.Sprintf("%s (peak at %s)", ref.Name, usersText(pa.Users)), pb, pa, "at each one's peak"))
		}
	}
	return out
}

// comparePoints is the papers' sentence: B's NOPM as a multiple of A's, with the
// New-Order p95 and the data disk's latency beside it; or why no winner is named.
//
// It says what limited each side (their bottleneck verdicts): where neither side was
// limited by its storage, the difference does not measure the storage and no winner
// is named, however far apart the NOPM.
func comparePoints(nameB, nameA string, b, a *Point, where string) string {
	nameB, nameA, stacks := versioned(nameB, nameA, pointRelease(b), pointRelease(a))
	latency := pointLatencies(b, a)
	limits, storageBound := limitedBy(nameB, nameA, b, a)
	if tb, ta := pointTool(b), pointTool(a); tb != ta {
		// HammerDB's response times cover its whole run, ramp-up included, and its
		// window is its own: the two are not measured alike.
		return fmt.Sprintf("%s vs %s %s: %s vs %s NOPM%s%s; measured by different tools (%s, %s), over windows and response times not taken alike: no winner named.",
			nameB, nameA, where, mean(b.NOPMDB, 0), mean(a.NOPMDB, 0), latency, limits, cmp.Or(tb, "mixed"), cmp.Or(ta, "mixed"))
	}
	if w := shortestWindow(a, b); w < driver.CounterWindow {
		return fmt.Sprintf("%s vs %s %s: %s vs %s NOPM%s%s; the timed windows (%s) are under %s, too short for the database counters: no winner named.",
			nameB, nameA, where, mean(b.NOPMDB, 0), mean(a.NOPMDB, 0), latency, limits, seconds(w), seconds(driver.CounterWindow))
	}
	if u := unsteadyText([]string{nameB, nameA}, []*Point{b, a}); u != "" {
		return fmt.Sprintf("%s vs %s %s: %s vs %s NOPM%s%s; not every timed window was steady (%s), so a mean is over a changing rate: no winner named.",
			nameB, nameA, where, mean(b.NOPMDB, 0), mean(a.NOPMDB, 0), latency, limits, u)
	}
	if !storageBound {
		return fmt.Sprintf("%s vs %s %s: %s vs %s NOPM%s%s: the difference does not measure the storage, no winner named.",
			nameB, nameA, where, mean(b.NOPMDB, 0), mean(a.NOPMDB, 0), latency, limits)
	}
	if overlap(b.NOPMDB, a.NOPMDB) {
		return fmt.Sprintf("%s vs %s %s: %s vs %s NOPM is within the spread of the repeats%s%s: no winner named.",
			nameB, nameA, where, stat(b.NOPMDB, 0), stat(a.NOPMDB, 0), latency, limits)
	}
	return fmt.Sprintf("%s delivers %s the NOPM of %s %s (%s vs %s)%s%s%s.",
		nameB, ratio(b.NOPMDB.Mean, a.NOPMDB.Mean), nameA, where, mean(b.NOPMDB, 0), mean(a.NOPMDB, 0), latency, limits, stacks)
}

// limitedBy says what limited each side, from its runs' bottleneck verdicts, and
// whether the storage limited at least one of them. Points whose runs carry no
// verdict (stored before verdicts, or without metrics) say that what limited them is
// unknown, and count as possibly storage-bound: the comparison stands as before.
func limitedBy(nameB, nameA string, b, a *Point) (text string, storageBound bool) {
	vb, va := pointVerdict(b), pointVerdict(a)
	if vb == "" || va == "" {
		return "; what limited each side was not recorded", true
	}
	kb, ka := pointKind(b), pointKind(a)
	if kb != bottleneck.Storage && ka != bottleneck.Storage {
		return fmt.Sprintf("; neither was limited by its storage (%s: %s; %s: %s)", nameB, vb, nameA, va), false
	}
	return fmt.Sprintf("; limited by %s: %s, %s: %s", nameB, vb, nameA, va), true
}

// pointKind is the bottleneck kind all of a point's runs share, or
// bottleneck.Mixed when its repeats disagree; "" when a run has no verdict.
func pointKind(p *Point) string {
	kind := ""
	for _, st := range p.Steps {
		v := st.Run.Bottleneck
		switch {
		case v == nil:
			return ""
		case kind == "":
			kind = v.Kind
		case kind != v.Kind:
			return bottleneck.Mixed
		}
	}
	return kind
}

// pointVerdict is a point's verdict as a finding quotes it: its first run's detail
// and deciding figures, and how many repeats agreed; "" when a run has none.
func pointVerdict(p *Point) string {
	kind := pointKind(p)
	if kind == "" {
		return ""
	}
	var details []string
	for _, st := range p.Steps {
		if d := st.Run.Bottleneck.Detail; !slices.Contains(details, d) {
			details = append(details, d)
		}
	}
	// A run whose own verdict is mixed is not repeats that differed.
	if kind == bottleneck.Mixed && len(details) > 1 {
		return "its repeats differed: " + strings.Join(details, ", ")
	}
	v := p.Steps[0].Run.Bottleneck
	var figs []string
	for _, f := range v.Figures {
		figs = append(figs, f.Text())
	}
	text := strings.Join(details, " or ")
	if len(figs) > 0 {
		text += " — " + strings.Join(figs, ", ")
	}
	return text
}

// pointLatencies are B's and A's New-Order p95 and data disk latencies, where both
// were measured.
func pointLatencies(b, a *Point) string {
	var parts []string
	for _, l := range []struct {
		what     string
		b, a     Stat
		decimals int
	}{
		{"New-Order p95", b.NewOrderP95, a.NewOrderP95, 2},
		{"data disk average I/O", b.IOAwait, a.IOAwait, 3},
		{"p99 I/O", b.IOP99, a.IOP99, 3},
	} {
		if l.b.N > 0 && l.a.N > 0 {
			parts = append(parts, fmt.Sprintf("%s %s vs %s ms (%s)", l.what, mean(l.b, l.decimals), mean(l.a, l.decimals), ratio(l.b.Mean, l.a.Mean)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, ", ")
}

// singleSweepFinding is a configuration compared with nothing: its peak, and how
// its NOPM grew from its fewest users.
func singleSweepFinding(s *Series) string {
	peak := s.peak()
	out := fmt.Sprintf("%s peaks at %s NOPM at %s", s.Name, mean(peak.NOPMDB, 0), usersText(peak.Users))
	var lat []string
	if peak.NewOrderP95.N > 0 {
		lat = append(lat, "New-Order p95 "+mean(peak.NewOrderP95, 2)+" ms")
	}
	if peak.IOAwait.N > 0 {
		lat = append(lat, "data disk average I/O "+mean(peak.IOAwait, 3)+" ms")
	}
	if peak.IOP99.N > 0 {
		lat = append(lat, "p99 I/O "+mean(peak.IOP99, 3)+" ms")
	}
	if len(lat) > 0 {
		out += " (" + strings.Join(lat, ", ") + ")"
	}
	if first := &s.Points[0]; first.Users != peak.Users {
		out += fmt.Sprintf("; %s the NOPM of %s", ratio(peak.NOPMDB.Mean, first.NOPMDB.Mean), usersText(first.Users))
	}
	all := make([]*Point, len(s.Points))
	for i := range s.Points {
		all[i] = &s.Points[i]
	}
	if w := shortestWindow(all...); w < driver.CounterWindow {
		out += fmt.Sprintf("; the timed windows (%s) are under %s, too short for the database counters: indicative only", seconds(w), seconds(driver.CounterWindow))
	}
	var names []string
	for _, p := range all {
		names = append(names, "at "+usersText(p.Users))
	}
	if u := unsteadyText(names, all); u != "" {
		out += "; not every timed window was steady (" + u + "): indicative only"
	}
	return out + "."
}

// shortestWindow is the shortest timed window of the points' runs.
func shortestWindow(points ...*Point) time.Duration {
	w := time.Duration(math.MaxInt64)
	for _, p := range points {
		for _, s := range p.Steps {
			w = min(w, s.Run.End.Sub(s.Run.Start))
		}
	}
	return w
}

// overlap tells whether two figures' ranges over their repeats meet: the
// difference between them is then within the spread of the repeats.
func overlap(a, b Stat) bool {
	return a.N > 0 && b.N > 0 && (a.N > 1 || b.N > 1) && a.Min <= b.Max && b.Min <= a.Max
}

// ratio is b as a multiple of a, as the papers write it: "2.4x".
func ratio(b, a float64) string {
	if a == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return "-"
	}
	return strconv.FormatFloat(math.Round(100*b/a)/100, 'f', -1, 64) + "x"
}

func usersText(n int) string {
	if n == 1 {
		return "1 user"
	}
	return strconv.Itoa(n) + " users"
}

// seconds writes a window as the study file does ("3 s", "1.5 s").
func seconds(d time.Duration) string {
	return strconv.FormatFloat(math.Round(d.Seconds()*10)/10, 'f', -1, 64) + " s"
}

// transferExperiment is one backup-restore experiment's configurations, the first
// the reference.
type transferExperiment struct {
	Name    string
	Configs []string
	// Releases are the configurations' server releases, by index ("": not recorded).
	Releases []string
	Runs     []transferRun
}

func transferExperiments(srcs []*Source) []*transferExperiment {
	var out []*transferExperiment
	for _, src := range srcs {
		for i := range src.Steps {
			r := &src.Steps[i]
			if r.Backup == nil || r.Restore == nil || r.Step.Cycle < 1 {
				continue
			}
			k := slices.IndexFunc(out, func(e *transferExperiment) bool { return e.Name == r.Step.Experiment })
			if k < 0 {
				out = append(out, &transferExperiment{Name: r.Step.Experiment})
				k = len(out) - 1
			}
			e, cfg := out[k], qualified(srcs, src, configName(src, r.Step))
			if !slices.Contains(e.Configs, cfg) {
				e.Configs = append(e.Configs, cfg)
				e.Releases = append(e.Releases, targetRelease(src, r.Step.Target))
			}
			e.Runs = append(e.Runs, transferRun{cfg, "backup", r.Step.Cycle, r.Backup}, transferRun{cfg, "restore", r.Step.Cycle, r.Restore})
		}
	}
	return out
}

// transferFigures are one configuration's backups or restores: seconds over its
// cycles, and MB/s as all their bytes over all their seconds.
func (e *transferExperiment) transferFigures(cfg, what string) (secs Stat, mbps float64) {
	var vs []float64
	var bytes int64
	var total float64
	for _, r := range e.Runs {
		if r.Config == cfg && r.What == what {
			vs, bytes, total = append(vs, r.Transfer.Seconds), bytes+r.Transfer.Bytes, total+r.Transfer.Seconds
		}
	}
	if total > 0 {
		mbps = float64(bytes) / 1e6 / total
	}
	return statOf(vs), mbps
}

func (e *transferExperiment) findings() []string {
	var out []string
	ref := e.Configs[0]
	for _, what := range []string{"backup", "restore"} {
		sa, ra := e.transferFigures(ref, what)
		if len(e.Configs) == 1 {
			out = append(out, fmt.Sprintf("%s: a %s takes %s s at %s MB/s (%s).", ref, what, stat(sa, 1), num(ra, 1), cyclesText(sa.N)))
			continue
		}
		for i, cfg := range e.Configs[1:] {
			sb, rb := e.transferFigures(cfg, what)
			nameB, nameA, stacks := versioned(cfg, ref, e.Releases[i+1], e.Releases[0])
			if overlap(sb, sa) {
				out = append(out, fmt.Sprintf("%s vs %s: a %s takes %s vs %s s, within the spread of the cycles: no winner named.",
					nameB, nameA, what, stat(sb, 1), stat(sa, 1)))
				continue
			}
			out = append(out, fmt.Sprintf("%s's %ss take %s the seconds of %s's (%s vs %s s, %s) at %s its MB/s (%s vs %s)%s.",
				nameB, what, ratio(sb.Mean, sa.Mean), nameA, num(sb.Mean, 1), num(sa.Mean, 1), cyclesText(min(sa.N, sb.N)), ratio(rb, ra), num(rb, 1), num(ra, 1), stacks))
		}
	}
	return out
}

func cyclesText(n int) string {
	if n == 1 {
		return "1 cycle"
	}
	return fmt.Sprintf("mean of %d cycles", n)
}

// findings of a consolidation: each OLTP instance's NOPM with the noise against
// without, or, when the two runs did not run as many OLTP instances, what compares
// (NOPM per instance, with the caveat); the conditions of both (CPU idle, where the
// instances waited); the shared disk's latency and the noisy backups' seconds.
func (p *consolidationPair) findings() []string {
	if p.Baseline == nil || p.Noisy == nil {
		return nil
	}
	noisy, backups := 0, 0
	var changes []string
	window := time.Duration(math.MaxInt64)
	for i, in := range p.Noisy.Instances {
		if in.Role == study.RoleNoisy {
			noisy++
			backups += len(in.Backups)
		}
		if i >= len(p.Baseline.Instances) || in.Run == nil || p.Baseline.Instances[i].Run == nil {
			continue
		}
		base := p.Baseline.Instances[i].Run
		window = min(window, in.Run.End.Sub(in.Run.Start), base.End.Sub(base.Start))
		c := fmt.Sprintf("%s %s → %s", instanceLabel(&in, i), num(base.NOPMDB, 0), num(in.Run.NOPMDB, 0))
		var notes []string
		if p.matched() {
			notes = append(notes, change(in.Run.NOPMDB, base.NOPMDB))
		}
		// What limited the instance in each run: a change under the noise whose
		// instance was CPU-bound in both does not measure the storage.
		if vb, vn := base.Bottleneck, in.Run.Bottleneck; vb != nil && vn != nil {
			notes = append(notes, fmt.Sprintf("limited by %s → %s", vb.Detail, vn.Detail))
		}
		if len(notes) > 0 {
			c += " (" + strings.Join(notes, "; ") + ")"
		}
		changes = append(changes, c)
	}
	var out []string
	if len(changes) > 0 {
		s := fmt.Sprintf("With %d noisy %s backing up, the OLTP instances' NOPM went %s", noisy, plural(noisy, "instance", "instances"), strings.Join(changes, ", "))
		if !p.matched() {
			s = p.mismatch(changes)
		}
		if window < driver.CounterWindow {
			s += fmt.Sprintf("; the timed windows (%s) are under %s, too short for the database counters: no change claimed", seconds(window), seconds(driver.CounterWindow))
		}
		out = append(out, s+".")
	}
	out = append(out, p.conditions()...)
	b, n := p.Baseline.Summary, p.Noisy.Summary
	if n.MeanReadAwaitMs+n.MeanWriteAwaitMs > 0 {
		disk := "On the shared disk"
		if p.acrossHosts() {
			disk = "On the hosts' data disks (every host's intervals together)"
		}
		out = append(out, fmt.Sprintf("%s, read latency went %s → %s ms on average (%s), %s → %s ms in the worst interval; write %s → %s ms on average (%s), %s → %s ms in the worst interval%s.",
			disk,
			num(b.MeanReadAwaitMs, 2), num(n.MeanReadAwaitMs, 2), ratio(n.MeanReadAwaitMs, b.MeanReadAwaitMs), num(b.WorstReadAwaitMs, 2), num(n.WorstReadAwaitMs, 2),
			num(b.MeanWriteAwaitMs, 2), num(n.MeanWriteAwaitMs, 2), ratio(n.MeanWriteAwaitMs, b.MeanWriteAwaitMs), num(b.WorstWriteAwaitMs, 2), num(n.WorstWriteAwaitMs, 2),
			p.ioP99()))
	}
	if backups > 0 {
		out = append(out, fmt.Sprintf("The noisy %s %d %s took %s s on average, %s s the longest.",
			plural(noisy, "instance's", "instances'"), backups, plural(backups, "backup", "backups"), num(n.BackupMeanSeconds, 1), num(n.BackupMaxSeconds, 1)))
	}
	return out
}

// change is b against a as a signed percentage: "+9%", "-12%".
func change(b, a float64) string {
	if a == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.0f%%", 100*(b-a)/a)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// profileFindings are one fio profile's configurations, each as % of the first:
// a point's figures, or over several points the range of IOPS.
func profileFindings(profile string, runs []fioRun) []string {
	configs := configsOf(runs)
	type key struct{ role, point string }
	var keys []key
	at := map[key]map[string]int{} // config → index in runs
	points := func(c string, k key) *fioPoint {
		i, ok := at[k][c]
		if !ok {
			return nil
		}
		r := runs[i]
		for j := range r.Result.Points {
			if p := &r.Result.Points[j]; p.Name == k.point {
				return &fioPoint{p.IOPS, p.MBps, p.MeanLatMs(), max(p.Read.P99Ms, p.Write.P99Ms)}
			}
		}
		return nil
	}
	for i, r := range runs {
		for _, p := range r.Result.Points {
			k := key{r.Role, p.Name}
			if at[k] == nil {
				at[k] = map[string]int{}
				keys = append(keys, k)
			}
			at[k][r.Config] = i
		}
	}
	name := func(k key) string {
		if k.role != "" && k.role != "data" {
			return k.point + " (" + k.role + ")"
		}
		return k.point
	}
	var out []string
	if len(configs) == 1 {
		for _, k := range keys {
			p := points(configs[0], k)
			out = append(out, fmt.Sprintf("%s, %s: %s IOPS, %s MB/s, %s ms mean and %s ms p99 latency.",
				configs[0], name(k), num(p.IOPS, 0), num(p.MBps, 1), num(p.MeanMs, 3), num(p.P99Ms, 3)))
		}
		return out
	}
	ref := configs[0]
	for _, c := range configs[1:] {
		type pct struct {
			point string
			v     float64
		}
		var iops []pct
		var one string
		for _, k := range keys {
			a, b := points(ref, k), points(c, k)
			if a == nil || b == nil || a.IOPS == 0 {
				continue
			}
			iops = append(iops, pct{name(k), 100 * b.IOPS / a.IOPS})
			one = fmt.Sprintf("%s delivers %s of %s's IOPS on %s (%s vs %s) and %s of its MB/s, at %s of its mean latency (%s vs %s ms).",
				c, percentOf(b.IOPS, a.IOPS), ref, name(k), num(b.IOPS, 0), num(a.IOPS, 0), percentOf(b.MBps, a.MBps),
				percentOf(b.MeanMs, a.MeanMs), num(b.MeanMs, 3), num(a.MeanMs, 3))
		}
		switch len(iops) {
		case 0:
		case 1:
			out = append(out, one)
		default:
			byValue := func(x, y pct) int { return cmp.Compare(x.v, y.v) }
			lo, hi := slices.MinFunc(iops, byValue), slices.MaxFunc(iops, byValue)
			out = append(out, fmt.Sprintf("%s delivers %.0f%% (%s) to %.0f%% (%s) of %s's IOPS over the profile's %d points.",
				c, lo.v, lo.point, hi.v, hi.point, ref, len(iops)))
		}
	}
	return out
}

// fioPoint is the figures of one fio point a finding compares.
type fioPoint struct{ IOPS, MBps, MeanMs, P99Ms float64 }
