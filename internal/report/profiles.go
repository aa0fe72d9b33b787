package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/fio"
)

// fioRun is one profile run on one configuration (a target's data or WAL path).
type fioRun struct {
	Config string // target, with the source when several
	Role   string
	Result *fio.Result
}

// fioRuns lists every profile run of the sources, in order.
func fioRuns(srcs []*Source) []fioRun {
	var out []fioRun
	for _, src := range srcs {
		for i := range src.Steps {
			r := &src.Steps[i]
			for j := range r.Fio {
				cfg := qualified(srcs, src, configName(src, r.Step))
				out = append(out, fioRun{Config: cfg, Role: r.Step.PathRole, Result: &r.Fio[j]})
			}
		}
	}
	return out
}

// profilesSection is the storage alone, before any database: per profile a table
// of every point on every configuration with "B as % of A" columns (A = the first
// configuration), IOPS bars, and each point's second-by-second IOPS.
func profilesSection(srcs []*Source) *Section {
	runs := fioRuns(srcs)
	if len(runs) == 0 {
		return nil
	}
	sec := &Section{ID: "storage-profiles", Title: "Storage profiles (fio)",
		Intro: []string{profilesIntro}}
	picker := &Picker{ID: "fio-points", Label: "point"}
	for _, prof := range profileNames(runs) {
		of := runsOf(runs, prof)
		t, chart := profileTable(prof, of)
		sec.Blocks = append(sec.Blocks, Block{Table: t}, Block{Chart: &chart})
		for _, r := range of {
			for i := range r.Result.Points {
				p := &r.Result.Points[i]
				picker.Choices = append(picker.Choices, fmt.Sprintf("%s %s %s %s", r.Config, r.Role, prof, p.Name))
				picker.Charts = append(picker.Charts, []Chart{pointChart(p)})
			}
		}
	}
	if len(picker.Choices) > 0 {
		sec.Blocks = append(sec.Blocks, Block{Picker: picker})
	}
	return sec
}

// profileTable is one profile's points (rows) on each configuration (columns).
func profileTable(profile string, runs []fioRun) (*Table, Chart) {
	type rowKey struct{ role, point string }
	var keys []rowKey
	configs := configsOf(runs)
	points := map[rowKey]map[string]*fio.Point{}
	for _, r := range runs {
		for i := range r.Result.Points {
			p := &r.Result.Points[i]
			k := rowKey{r.Role, p.Name}
			if points[k] == nil {
				points[k] = map[string]*fio.Point{}
				keys = append(keys, k)
			}
			points[k][r.Config] = p
		}
	}
	t := &Table{Title: profile + ": " + runs[0].Result.Description,
		Columns: []string{"point", "role", "pattern", "bs", "jobs", "qd"},
		Notes: []string{"source: " + runs[0].Result.Source,
			"role: the path's role in a study's target (data, wal); '-': a standalone fio result. Paths tested: " + pathsTested(runs) + "."},
		Keys: 2, Groups: []int{4}}
	for _, c := range configs {
		t.Columns = append(t.Columns, c+" IOPS", c+" MB/s", c+" mean ms", c+" p99 ms")
		t.Groups = append(t.Groups, 4)
	}
	for _, c := range configs[1:] {
		t.Columns = append(t.Columns, c+" IOPS % of "+configs[0], c+" MB/s % of "+configs[0], c+" mean ms % of "+configs[0])
	}
	categories := make([]string, len(keys))
	iops := make([]barSeries, len(configs))
	for i, c := range configs {
		iops[i] = barSeries{Name: c, Values: make([]float64, len(keys))}
	}
	for ki, k := range keys {
		var ref *fio.Point
		for _, c := range configs {
			if p := points[k][c]; p != nil {
				ref = p
				break
			}
		}
		role := k.role
		if role == "" {
			role = "-"
		}
		categories[ki] = k.point
		if k.role != "" && k.role != "data" {
			categories[ki] = k.point + " (" + k.role + ")"
		}
		row := []string{k.point, role, ref.Mix(), fio.SizeText(ref.BlockSize), strconv.Itoa(ref.Jobs), strconv.Itoa(ref.QueueDepth)}
		for i, c := range configs {
			p := points[k][c]
			iops[i].Values[ki] = math.NaN()
			if p == nil {
				row = append(row, "-", "-", "-", "-")
				continue
			}
			iops[i].Values[ki] = p.IOPS
			row = append(row, num(p.IOPS, 0), num(p.MBps, 1), num(p.MeanLatMs(), 3), num(max(p.Read.P99Ms, p.Write.P99Ms), 3))
		}
		a := points[k][configs[0]]
		for _, c := range configs[1:] {
			b := points[k][c]
			if a == nil || b == nil {
				row = append(row, "-", "-", "-")
				continue
			}
			row = append(row, percentOf(b.IOPS, a.IOPS), percentOf(b.MBps, a.MBps), percentOf(b.MeanLatMs(), a.MeanLatMs()))
		}
		t.Rows = append(t.Rows, row)
	}
	return t, barChart(profile+": IOPS per point", "fio (reads + writes per second over the point's runtime)", "point", "IOPS", categories, iops)
}

// pathsTested names where each configuration's test file lived ("A fio-fast:
// /mnt/nvme (ext4 on nvme0n1)"), with the role when a study gave one.
func pathsTested(runs []fioRun) string {
	var out []string
	for _, r := range runs {
		who := r.Config
		if r.Role != "" {
			who += " " + r.Role
		}
		where := r.Result.Target.Path
		if t := r.Result.Target; t.FSType != "" && t.Chain != "" {
			where += " (" + t.FSType + " on " + t.Chain + ")"
		}
		if line := who + ": " + where; !slices.Contains(out, line) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "; ")
}

// configsOf lists the configurations of runs in their first order.
func configsOf(runs []fioRun) []string {
	var out []string
	for _, r := range runs {
		if !slices.Contains(out, r.Config) {
			out = append(out, r.Config)
		}
	}
	return out
}

// pointChart is one fio point's second-by-second IOPS and latency from fio's logs.
func pointChart(p *fio.Point) Chart {
	var t, r, w, rl, wl []float64
	for _, s := range p.Series {
		t = append(t, float64(s.T))
		r, w = append(r, s.ReadIOPS), append(w, s.WriteIOPS)
		rl, wl = append(rl, awaitOrGap(s.ReadLatMs, s.ReadIOPS)), append(wl, awaitOrGap(s.WriteLatMs, s.WriteIOPS))
	}
	source := "fio's per-second logs: IOPS, mean completion latency per second"
	if len(p.Series) == 0 {
		source = "no per-second log: " + p.SeriesNote
	}
	return lineChart(p.Name+" second by second", source, "s", "IOPS", "ms", []xySeries{
		{Name: "read IOPS", X: t, Y: r}, {Name: "write IOPS", X: t, Y: w},
		{Name: "read ms (mean)", X: t, Y: rl, YAxis: 1}, {Name: "write ms (mean)", X: t, Y: wl, YAxis: 1}}, nil)
}

// runsOf are the runs of one profile.
func runsOf(runs []fioRun, profile string) []fioRun {
	var out []fioRun
	for _, r := range runs {
		if r.Result.Profile == profile {
			out = append(out, r)
		}
	}
	return out
}

// profileNames lists the profiles run, in their first order.
func profileNames(runs []fioRun) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range runs {
		if !seen[r.Result.Profile] {
			seen[r.Result.Profile] = true
			out = append(out, r.Result.Profile)
		}
	}
	return out
}
