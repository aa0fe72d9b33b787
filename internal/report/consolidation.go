package report

import (
	"fmt"
	"math"
	"strconv"

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
	sec := &Section{ID: "consolidation", Title: "Consolidation and noisy neighbours",
		Intro: []string{"Several instances share the target's storage. NOPM is each OLTP instance's database counter over the common timed window; the shared disk is /proc/diskstats (average per I/O each interval); shaded spans are the noisy instances' backups."}}
	for _, p := range pairs {
		sec.Blocks = append(sec.Blocks, Block{Table: consolidationTable(p)})
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
					names = append(names, instanceLabel(i))
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
				for _, s := range in.Run.Timeline {
					if s.T > 0 {
						x, y = append(x, float64(s.T)), append(y, s.TPM)
					}
				}
				lines = append(lines, xySeries{Name: instanceLabel(i), X: x, Y: y})
			}
			sec.Blocks = append(sec.Blocks, Block{Chart: ptr(lineChart(p.Name+" "+label+": TPM per instance second by second", "storbench's client count per second × 60; shaded: backups", "s", "TPM", "", lines, windows))})
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

// instanceLabel names the i-th consolidated instance as the tables do: the
// instances' own names repeat the target's long one.
func instanceLabel(i int) string { return fmt.Sprintf("c%d", i+1) }

func backupWindows(run *study.ConsolidationRun) []window {
	var ws []window
	for i, in := range run.Instances {
		for _, b := range in.Backups {
			ws = append(ws, window{Name: fmt.Sprintf("%s #%d", instanceLabel(i), b.Cycle), Start: b.StartT, End: b.EndT})
		}
	}
	return ws
}

// consolidationTable is per instance: NOPM baseline vs noisy and its share.
func consolidationTable(p *consolidationPair) *Table {
	t := &Table{Title: p.Name + ": per instance",
		Columns: []string{"instance", "role (noisy run)", "NOPM baseline (database)", "NOPM noisy (database)", "noisy % of baseline",
			"new-order p95 ms baseline (client)", "new-order p95 ms noisy (client)", "backups", "backup s mean"},
		Notes: []string{"the noisy run's shared disk: " + diskFacts(p.Noisy) + "; the baseline's: " + diskFacts(p.Baseline)}}
	n := 0
	for _, run := range []*study.ConsolidationRun{p.Baseline, p.Noisy} {
		if run != nil {
			n = max(n, len(run.Instances))
		}
	}
	// The totals compare like with like: the instances on TPC-C in both runs.
	var totalBase, totalNoisy float64
	both := 0
	for i := range n {
		var base, noisy *study.InstanceResult
		if p.Baseline != nil && i < len(p.Baseline.Instances) {
			base = &p.Baseline.Instances[i]
		}
		if p.Noisy != nil && i < len(p.Noisy.Instances) {
			noisy = &p.Noisy.Instances[i]
		}
		row := []string{instanceLabel(i), "-", "-", "-", "-", "-", "-", "-", "-"}
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
		t.Rows = append(t.Rows, row)
	}
	if both == 0 {
		return t
	}
	total := []string{fmt.Sprintf("the %d on TPC-C in both", both), "", num(totalBase, 0), num(totalNoisy, 0), percentOf(totalNoisy, totalBase), "", "", "", ""}
	t.Rows = append(t.Rows, total)
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
			t.Rows = append(t.Rows, []string{instanceLabel(i), strconv.Itoa(b.Cycle), num(b.StartT, 1), num(b.Seconds, 1), num(b.MBps, 1)})
			if b.Cycle >= 1 {
				vs[b.Cycle-1] = b.Seconds
			}
		}
		bars = append(bars, barSeries{Name: instanceLabel(i), Values: vs})
	}
	if len(t.Rows) == 0 {
		return nil, nil
	}
	return t, ptr(barChart(p.Name+": seconds per backup", "storbench's timing of each backup of the noisy run", "cycle", "s", cats, bars))
}
