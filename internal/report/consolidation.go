package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/study"
)

// consolidationPair is one consolidation experiment on one target: its baseline
// (all instances on TPC-C) and its noisy run (some instances backing up).
type consolidationPair struct {
	Name            string
	Baseline, Noisy *study.ConsolidationRun
}

func consolidationPairs(srcs []*Source) []*consolidationPair {
	var out []*consolidationPair
	byName := map[string]*consolidationPair{}
	for _, src := range srcs {
		for i := range src.Steps {
			r := &src.Steps[i]
			c := r.Consolidation
			if c == nil {
				continue
			}
			name := qualified(srcs, src, r.Step.Target+"/"+r.Step.Experiment)
			p := byName[name]
			if p == nil {
				p = &consolidationPair{Name: name}
				byName[name] = p
				out = append(out, p)
			}
			if c.Noisy {
				p.Noisy = c
			} else {
				p.Baseline = c
			}
		}
	}
	return out
}

// consolidationSection is the noisy-neighbour test: per-instance throughput with and
// without the noise, and the shared disk over time with the backups shaded.
func consolidationSection(srcs []*Source) *Section {
	pairs := consolidationPairs(srcs)
	if len(pairs) == 0 {
		return nil
	}
	sec := &Section{ID: "consolidation", Title: "Consolidation and noisy neighbours"}
	if slices.ContainsFunc(pairs, func(p *consolidationPair) bool { return !p.acrossHosts() }) {
		sec.Intro = append(sec.Intro, consolidationIntro)
	}
	// Across hosts no storage is shared: each host's own disks and CPU are shown.
	if slices.ContainsFunc(pairs, (*consolidationPair).acrossHosts) {
		sec.Intro = append(sec.Intro, "Across hosts, each instance is an external target's database on its own host, all driven from this machine with one common start. "+
			"NOPM is each OLTP instance's database counter over the common timed window; a host's disks and CPU are its node_exporter's (/proc/diskstats: average per I/O each interval; /proc/stat) placed on this machine's timeline; "+
			"shaded spans are the noisy instances' backups, which load their own hosts' disks; the controller's CPU is this storbench process's own (getrusage).")
	}
	picker := 0
	for _, p := range pairs {
		sec.Blocks = append(sec.Blocks, Block{Table: consolidationTable(p)})
		if p.acrossHosts() {
			sec.Blocks = append(sec.Blocks, Block{Table: hostsTable(p)})
		}
		var bars []barSeries
		var names []string
		for _, run := range []*study.ConsolidationRun{p.Baseline, p.Noisy} {
			if run == nil {
				continue
			}
			label := runLabel(run)
			vs := make([]float64, len(run.Instances))
			for i, in := range run.Instances {
				if len(names) < len(run.Instances) {
					names = append(names, instanceName(&in, i))
				}
				vs[i] = math.NaN()
				if in.Run != nil {
					vs[i] = in.Run.NOPMDB
				}
			}
			bars = append(bars, barSeries{Name: label, Values: vs})
		}
		sec.Blocks = append(sec.Blocks, Block{Chart: ptr(barChart(p.Name+": NOPM per instance", "database counter per instance; noisy instances run backups instead", "instance", "NOPM", names, bars))})
		for _, run := range []*study.ConsolidationRun{p.Baseline, p.Noisy} {
			if run == nil {
				continue
			}
			label := runLabel(run)
			windows := backupWindows(run)
			var lines []xySeries
			for i, in := range run.Instances {
				if in.Run == nil {
					continue
				}
				var x, y []float64
				// The timed window only: after it the users stop, a drop to zero.
				for _, s := range in.Run.Timeline {
					if s.T > 0 && float64(s.T) <= in.Run.Config.DurationSeconds {
						x, y = append(x, float64(s.T)), append(y, s.TPM)
					}
				}
				lines = append(lines, xySeries{Name: instanceName(&in, i), X: x, Y: y})
			}
			sec.Blocks = append(sec.Blocks, Block{Chart: ptr(lineChart(p.Name+" "+label+": TPM per instance second by second", "storbench's client count per second × 60; shaded: backups", "s", "TPM", "", lines, windows))})
			if hosts := hostsOf(run); hosts != nil {
				picker++
				sec.Blocks = append(sec.Blocks, Block{Picker: hostCharts(fmt.Sprintf("hosts-%d", picker), p.Name+" "+label, hosts, windows)})
				continue
			}
			rates, lat := diskCharts(run.System, windows)
			rates.Title, lat.Title = p.Name+" "+label+": "+rates.Title, p.Name+" "+label+": "+lat.Title
			sec.Blocks = append(sec.Blocks, Block{Chart: &rates}, Block{Chart: &lat})
		}
		if p.Noisy != nil {
			if t, c := backupCycles(p); t != nil {
				sec.Blocks = append(sec.Blocks, Block{Chart: c}, Block{Table: t})
			}
		}
	}
	return sec
}

func runLabel(run *study.ConsolidationRun) string {
	if run.Noisy {
		return "with noisy neighbours"
	}
	return "baseline"
}

// instanceLabel names the i-th consolidated instance as the tables do: on one
// target, c1…, as the instances' own names repeat the target's long one; across
// hosts, the target's name (db1…), which is the instance's.
func instanceLabel(in *study.InstanceResult, i int) string {
	if in != nil && in.Host != "" {
		return in.Name
	}
	return fmt.Sprintf("c%d", i+1)
}

// instanceName is an instance's name in charts, which have no host column: across
// hosts, "db1 @ host".
func instanceName(in *study.InstanceResult, i int) string {
	if in != nil && in.Host != "" {
		return in.Name + " @ " + in.Host
	}
	return instanceLabel(in, i)
}

// acrossHosts tells a consolidation of several hosts' databases, each instance
// with its own host and metrics, from one on a target's shared storage.
func (p *consolidationPair) acrossHosts() bool {
	return hostsOf(p.Baseline) != nil || hostsOf(p.Noisy) != nil
}

// hostMetrics is one host of a consolidation across hosts: its instances and what
// its node_exporter said over the window.
type hostMetrics struct {
	Host      string
	Instances []string
	System    *metrics.Report
}

// hostsOf lists a run's hosts in the order they first appear (nil: the run is on
// one target, its System the shared storage's). Targets on one host read the same
// node_exporter over the same window, so a host's figures are those of its first
// instance with metrics (a second target there that named other disks has those
// disks left out).
func hostsOf(run *study.ConsolidationRun) []*hostMetrics {
	if run == nil || run.System != nil {
		return nil
	}
	var out []*hostMetrics
	for i := range run.Instances {
		in := &run.Instances[i]
		if in.Host == "" {
			continue
		}
		k := slices.IndexFunc(out, func(h *hostMetrics) bool { return h.Host == in.Host })
		if k < 0 {
			out = append(out, &hostMetrics{Host: in.Host})
			k = len(out) - 1
		}
		h := out[k]
		h.Instances = append(h.Instances, in.Name)
		if h.System == nil {
			h.System = in.System
		}
	}
	return out
}

// hostCharts are one run's per-host charts, a host at a time: its disks' rates and
// latencies and its CPU, all of the run's backups shaded (whether a backup on one
// host reaches the others is the question).
func hostCharts(id, title string, hosts []*hostMetrics, windows []window) *Picker {
	p := &Picker{ID: id, Label: title + ": host"}
	for _, h := range hosts {
		name := h.Host + " (" + strings.Join(h.Instances, ", ") + ")"
		rates, lat := diskCharts(h.System, windows)
		cpu := hostCPUChart(h.System, windows)
		for _, c := range []*Chart{&rates, &lat, &cpu} {
			c.Title = title + ", " + name + ": " + c.Title
		}
		p.Choices = append(p.Choices, name)
		p.Charts = append(p.Charts, []Chart{rates, lat, cpu})
	}
	return p
}

// hostCPUChart draws a host's CPU over the window as shares of all its CPUs.
func hostCPUChart(sys *metrics.Report, windows []window) Chart {
	const title, source = "CPU", "node_exporter's /proc/stat per sampling interval, % of all the host's CPUs"
	var x, user, system, iowait []float64
	if sys != nil {
		for _, s := range sys.Samples {
			if s.CPU != nil {
				x = append(x, s.T)
				user, system, iowait = append(user, s.CPU.User), append(system, s.CPU.System), append(iowait, s.CPU.IOWait)
			}
		}
	}
	if len(x) == 0 {
		return lineChart(title, "no CPU figures were sampled on this host", "s", "", "", nil, nil)
	}
	return lineChart(title, source, "s", "%", "", []xySeries{{Name: "user", X: x, Y: user}, {Name: "system", X: x, Y: system},
		{Name: "iowait", X: x, Y: iowait}}, windows)
}

func backupWindows(run *study.ConsolidationRun) []window {
	var ws []window
	for i, in := range run.Instances {
		for _, b := range in.Backups {
			ws = append(ws, window{Name: fmt.Sprintf("%s #%d", instanceLabel(&in, i), b.Cycle), Start: b.StartT, End: b.EndT})
		}
	}
	return ws
}

// consolidationTable is per instance: NOPM baseline vs noisy and its share. Across
// hosts it has the instances' hosts, one host's instances together.
func consolidationTable(p *consolidationPair) *Table {
	across := p.acrossHosts()
	t := &Table{Title: p.Name + ": per instance",
		Columns: []string{"instance", "role (noisy run)", "NOPM baseline (database)", "NOPM noisy (database)", "noisy % of baseline",
			"new-order p95 ms baseline (client)", "new-order p95 ms noisy (client)", "backups", "backup s mean"},
		Notes: []string{"the noisy run's shared disk: " + diskFacts(p.Noisy) + "; the baseline's: " + diskFacts(p.Baseline)}}
	if across {
		t.Columns = slices.Insert(t.Columns, 1, "host")
		// The study's summary pools the hosts' data disks: no disk is shared.
		t.Notes = []string{"the noisy run's data disks, every host's intervals pooled: " + diskFacts(p.Noisy) + "; the baseline's: " + diskFacts(p.Baseline)}
	}
	n := 0
	for _, run := range []*study.ConsolidationRun{p.Baseline, p.Noisy} {
		if run != nil {
			n = max(n, len(run.Instances))
		}
	}
	instances := func(i int) (base, noisy *study.InstanceResult) {
		if p.Baseline != nil && i < len(p.Baseline.Instances) {
			base = &p.Baseline.Instances[i]
		}
		if p.Noisy != nil && i < len(p.Noisy.Instances) {
			noisy = &p.Noisy.Instances[i]
		}
		return base, noisy
	}
	host := func(i int) string {
		base, noisy := instances(i)
		if noisy != nil {
			return noisy.Host
		}
		return base.Host
	}
	// One host's instances together, hosts in their first order; on one target
	// every host is "" and the order the instances'.
	var hosts []string
	for i := range n {
		if !slices.Contains(hosts, host(i)) {
			hosts = append(hosts, host(i))
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return slices.Index(hosts, host(a)) - slices.Index(hosts, host(b)) })
	// The totals compare like with like: the instances on TPC-C in both runs.
	var totalBase, totalNoisy float64
	both := 0
	for _, i := range order {
		base, noisy := instances(i)
		in := noisy
		if in == nil {
			in = base
		}
		row := []string{instanceLabel(in, i), "-", "-", "-", "-", "-", "-", "-", "-"}
		if base != nil && base.Run != nil {
			row[2], row[5] = num(base.Run.NOPMDB, 0), num(base.Run.Transactions.NewOrder.P95Ms, 2)
		}
		if noisy != nil {
			row[1] = noisy.Role
			if noisy.Run != nil {
				row[3], row[6] = num(noisy.Run.NOPMDB, 0), num(noisy.Run.Transactions.NewOrder.P95Ms, 2)
				if base != nil && base.Run != nil {
					row[4] = percentOf(noisy.Run.NOPMDB, base.Run.NOPMDB)
					totalBase += base.Run.NOPMDB
					totalNoisy += noisy.Run.NOPMDB
					both++
				}
			}
			if len(noisy.Backups) > 0 {
				var secs []float64
				for _, b := range noisy.Backups {
					secs = append(secs, b.Seconds)
				}
				row[7], row[8] = strconv.Itoa(len(noisy.Backups)), num(statOf(secs).Mean, 1)
			}
		}
		if across {
			row = slices.Insert(row, 1, dash(in.Host))
		}
		t.Rows = append(t.Rows, row)
	}
	if both == 0 {
		return t
	}
	total := []string{fmt.Sprintf("the %d on TPC-C in both", both), "", num(totalBase, 0), num(totalNoisy, 0), percentOf(totalNoisy, totalBase), "", "", "", ""}
	if across {
		total = slices.Insert(total, 1, "")
	}
	t.Rows = append(t.Rows, total)
	return t
}

// hostsTable is per host and run: its data disk's latency and its CPU over the
// timed window, and what driving every host at once cost the controller.
func hostsTable(p *consolidationPair) *Table {
	t := &Table{Title: p.Name + ": per host",
		Columns: []string{"host", "instances", "run", "disk", "read ms (avg per I/O)", "read ms worst interval", "write ms (avg per I/O)", "write ms worst interval",
			"CPU user+system %", "CPU iowait %"},
		Notes: []string{"each host's node_exporter over the timed window: disk: its data disk (the first sampled when none is marked data), /proc/diskstats, " +
			"the window's I/O time ÷ its I/Os and the worst sampling interval's average; CPU: /proc/stat, shares of all the host's CPUs"}}
	type hostRun struct {
		run *study.ConsolidationRun
		h   *hostMetrics
	}
	var hosts []string
	byHost := map[string][]hostRun{}
	for _, run := range []*study.ConsolidationRun{p.Baseline, p.Noisy} {
		for _, h := range hostsOf(run) {
			if byHost[h.Host] == nil {
				hosts = append(hosts, h.Host)
			}
			byHost[h.Host] = append(byHost[h.Host], hostRun{run, h})
		}
	}
	for _, host := range hosts {
		for _, hr := range byHost[host] {
			row := []string{host, strings.Join(hr.h.Instances, ", "), runLabel(hr.run), "-", "-", "-", "-", "-", "-", "-"}
			sys := hr.h.System
			if sys == nil {
				t.Rows = append(t.Rows, row)
				continue
			}
			if d := dataDisk(sys); d != nil {
				row[3], row[4], row[6] = d.Device, num(d.ReadAwaitMs, 2), num(d.WriteAwaitMs, 2)
				var worstRead, worstWrite float64
				// The timed window's intervals, as the study's summary counts them.
				window := hr.run.End.Sub(hr.run.Start).Seconds() + 0.5
				for _, s := range sys.Samples {
					if s.T <= 0 || s.T > window {
						continue
					}
					for _, sd := range s.Disks {
						if sd.Device == d.Device {
							worstRead, worstWrite = max(worstRead, sd.ReadAwaitMs), max(worstWrite, sd.WriteAwaitMs)
						}
					}
				}
				row[5], row[7] = num(worstRead, 2), num(worstWrite, 2)
			}
			if c := sys.Summary.CPU; c != nil {
				row[8], row[9] = num(c.User+c.System, 1), num(c.IOWait, 1)
			}
			t.Rows = append(t.Rows, row)
		}
	}
	for _, run := range []*study.ConsolidationRun{p.Baseline, p.Noisy} {
		if run != nil && run.Controller != nil {
			c := run.Controller
			t.Notes = append(t.Notes, fmt.Sprintf("controller, %s: %s µs CPU per transaction (%s s user+system of the storbench process over the timed window, from getrusage, ÷ %s transactions completed in the window over all targets)",
				runLabel(run), num(c.MicrosPerTransaction, 1), num(c.Seconds, 2), num(float64(c.Transactions), 0)))
		}
	}
	return t
}

func diskFacts(run *study.ConsolidationRun) string {
	if run == nil {
		return "not run"
	}
	f := run.Summary
	return fmt.Sprintf("read %s ms mean of the intervals, %s ms worst; write %s ms mean of the intervals, %s ms worst (each interval's average per I/O)",
		num(f.MeanReadAwaitMs, 2), num(f.WorstReadAwaitMs, 2), num(f.MeanWriteAwaitMs, 2), num(f.WorstWriteAwaitMs, 2))
}

// backupCycles lists the noisy run's backups (when, how long, how fast) and draws
// their durations per cycle.
func backupCycles(p *consolidationPair) (*Table, *Chart) {
	t := &Table{Title: p.Name + ": backups of the noisy run",
		Columns: []string{"instance", "cycle", "start s", "seconds", "MB/s"},
		Notes:   []string{"start: seconds from the start of the timed window; MB = 10^6 bytes"}}
	cycles := 0
	for _, in := range p.Noisy.Instances {
		for _, b := range in.Backups {
			cycles = max(cycles, b.Cycle)
		}
	}
	if cycles < 1 {
		return nil, nil
	}
	cats := make([]string, cycles)
	for i := range cats {
		cats[i] = strconv.Itoa(i + 1)
	}
	var bars []barSeries
	for i, in := range p.Noisy.Instances {
		if len(in.Backups) == 0 {
			continue
		}
		vs := make([]float64, cycles)
		for k := range vs {
			vs[k] = math.NaN()
		}
		for _, b := range in.Backups {
			t.Rows = append(t.Rows, []string{instanceLabel(&in, i), strconv.Itoa(b.Cycle), num(b.StartT, 1), num(b.Seconds, 1), num(b.MBps, 1)})
			if b.Cycle >= 1 {
				vs[b.Cycle-1] = b.Seconds
			}
		}
		bars = append(bars, barSeries{Name: instanceName(&in, i), Values: vs})
	}
	if len(t.Rows) == 0 {
		return nil, nil
	}
	return t, ptr(barChart(p.Name+": seconds per backup", "storbench's timing of each backup of the noisy run", "cycle", "s", cats, bars))
}

// matched tells whether the baseline ran as many OLTP instances as the noisy run
// (an idle baseline), so that the two differ by the noise alone.
func (p *consolidationPair) matched() bool {
	return p.Baseline.OLTPInstances() == p.Noisy.OLTPInstances()
}

// mismatch is the NOPM finding of a baseline that ran more OLTP instances than the
// noisy run: on shared CPUs the noisy run gains what the extra instances took, so
// neither the total nor an instance's change measures the noise; NOPM per OLTP
// instance is given with that caveat, and no effect is named.
func (p *consolidationPair) mismatch(changes []string) string {
	b, n := p.Baseline.OLTPInstances(), p.Noisy.OLTPInstances()
	fewer := "one instance less"
	if b-n != 1 {
		fewer = fmt.Sprintf("%d instances less", b-n)
	}
	return fmt.Sprintf("The baseline ran %d OLTP instances, the noisy run %d: the NOPM difference mixes the backup's effect with %s; NOPM per OLTP instance %s → %s (%s), not the noise's effect alone",
		b, n, fewer, num(nopmPerInstance(p.Baseline), 0), num(nopmPerInstance(p.Noisy), 0), strings.Join(changes, ", "))
}

// nopmPerInstance is the mean NOPM of a run's OLTP instances.
func nopmPerInstance(run *study.ConsolidationRun) float64 {
	var sum float64
	n := 0
	for _, in := range run.Instances {
		if in.Role == study.RoleOLTP && in.Run != nil {
			sum += in.Run.NOPMDB
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// conditions are what compares between the two runs whatever their instances did:
// the CPU left idle, and where each OLTP instance's sessions spent their active time
// (when wait events were sampled).
func (p *consolidationPair) conditions() []string {
	var out []string
	if b, n := cpuIdle(p.Baseline), cpuIdle(p.Noisy); !math.IsNaN(b) && !math.IsNaN(n) {
		out = append(out, fmt.Sprintf("CPU idle went %s%% → %s%% (baseline → noisy run).", num(b, 0), num(n, 0)))
	}
	var waits []string
	for i, in := range p.Noisy.Instances {
		if in.Role != study.RoleOLTP || i >= len(p.Baseline.Instances) {
			continue
		}
		b, n := instanceWaits(p.Baseline, i), instanceWaits(p.Noisy, i)
		if b == nil || n == nil {
			continue
		}
		io := func(w *metrics.RoleWaits) string {
			return num(w.Pct(metrics.WaitDataIO)+w.Pct(metrics.WaitWAL), 0)
		}
		waits = append(waits, fmt.Sprintf("%s %s%% → %s%% on I/O, %s%% → %s%% on CPU", instanceLabel(&in, i),
			io(b), io(n), num(b.Pct(metrics.WaitCPU), 0), num(n.Pct(metrics.WaitCPU), 0)))
	}
	if len(waits) > 0 {
		out = append(out, "Of their active time the OLTP instances' sessions spent "+strings.Join(waits, "; ")+".")
	}
	return out
}

// systems are the metrics of a run's host: the shared storage's, or across hosts
// each host's.
func systems(run *study.ConsolidationRun) []*metrics.Report {
	if run.System != nil {
		return []*metrics.Report{run.System}
	}
	var out []*metrics.Report
	for _, h := range hostsOf(run) {
		if h.System != nil {
			out = append(out, h.System)
		}
	}
	return out
}

// cpuIdle is a run's CPU idle over the window, the hosts' mean across hosts (NaN:
// not sampled).
func cpuIdle(run *study.ConsolidationRun) float64 {
	var sum float64
	n := 0
	for _, sys := range systems(run) {
		if c := sys.Summary.CPU; c != nil {
			sum += c.Idle
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// instanceWaits is where instance i's client sessions spent their active time: in
// the shared sampler's profile, the instance's first role (the clients' come
// first); across hosts, the instance's own run's. Nil when no wait was sampled.
func instanceWaits(run *study.ConsolidationRun, i int) *metrics.RoleWaits {
	in := &run.Instances[i]
	if run.System != nil {
		if w := run.System.Summary.Waits; w != nil {
			for k := range w.Roles {
				if w.Roles[k].Server == in.Name {
					return &w.Roles[k]
				}
			}
		}
		return nil
	}
	if in.Run != nil && in.Run.System != nil {
		return in.Run.System.Summary.Waits.Clients()
	}
	return nil
}

// ioP99 is the shared data disk's per-I/O p99 in both runs, when both sampled it
// (bpftrace): ", per-I/O p99 0.90 → 2.10 ms".
func (p *consolidationPair) ioP99() string {
	b, n := dataDiskP99(p.Baseline), dataDiskP99(p.Noisy)
	if math.IsNaN(b) || math.IsNaN(n) {
		return ""
	}
	return fmt.Sprintf("; per-I/O p99 %s → %s ms", num(b, 2), num(n, 2))
}

// dataDiskP99 is the per-I/O p99 of a run's shared data disk (NaN: not sampled,
// or across hosts, where no disk is shared).
func dataDiskP99(run *study.ConsolidationRun) float64 {
	d := dataDisk(run.System)
	if d == nil {
		return math.NaN()
	}
	for _, l := range run.System.Summary.Latency {
		if l.Device == d.Device && l.IOs > 0 {
			return l.P99Ms
		}
	}
	return math.NaN()
}
