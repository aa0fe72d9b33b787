package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/procrole"
	"github.com/storbench/storbench/internal/study"
)

// Who does the I/O: the database server's processes by role (client backends,
// checkpointer, WAL writer, a backup…), beside the kernel's threads and other
// processes, from the block layer, which adds up to what the disks did.

const rolesSource = "the block layer (bpftrace on block:block_bio_queue): the bytes each task submitted to the sampled disks, summed per role of the server's processes; " + procrole.KernelWriteback + " (kworker threads, above all the flusher writing back pages any process dirtied: a checkpointer's pages written back by it count there, not under the checkpointer), " + procrole.Journal + " (jbd2), " + procrole.KernelOther + " and " + procrole.OtherProcesses + " are rows of their own, so that the rows add up to the disks' writes; a run whose block layer was not traced has reads by role only (/proc/PID/io read_bytes); MB = 10^6 bytes"

// The role tables' disk columns: a role's share of what the sampled disks read and
// wrote over the same window. /proc/PID/io write_bytes, which counts pages dirtied,
// is never shown as a role's writes: on Linux 6.18 it credited the client backends
// with 335% of what the disks wrote.
const (
	readShareColumn  = "% of disk reads"
	writeShareColumn = "% of disk writes"
	diskColumnsNote  = readShareColumn + " and " + writeShareColumn + ": the role's bytes as a share of the sampled disks' over the same window; a run traced without the block layer has no writes by role (\"-\")"
)

// blockWrites is a role's writes per second over an interval or window, when they
// come from the block layer: a result stored before storbench counted them there
// holds /proc/PID/io write_bytes, which is not shown.
func blockWrites(source string, v *float64) *float64 {
	if source != "block" {
		return nil
	}
	return v
}

// roleName names a role of one of several servers (consolidated instances) with
// the server's name.
func roleName(server, role string) string {
	if server == "" {
		return role
	}
	return server + " " + role
}

// roleChart stacks a run's write MB/s by role over its timeline, with the disks'
// write MB/s as a line and the database's checkpoints marked: what wrote during
// any second is read off it.
func roleChart(sys *metrics.Report) Chart {
	const title = "Writes by process role"
	if !hasRoleWrites(sys) {
		return lineChart(title, "no writes by process role for this run: the server is not on this host, or its disks' block layer was not traced (bpftrace)", "s", "", "", nil, nil)
	}
	type key struct{ server, role string }
	var order []key
	points := map[key][]opts.LineData{}
	var disks []opts.LineData
	var checkpoints []opts.MarkLineNameXAxisItem
	for _, s := range sys.Samples {
		for _, r := range s.ProcessIO {
			k := key{r.Server, r.Role}
			if _, ok := points[k]; !ok {
				order = append(order, k)
			}
			w := math.NaN() // a gap: the interval's trace came late, or no writes here
			if v := blockWrites(r.Source, r.WriteMBps); v != nil {
				w = *v
			}
			points[k] = append(points[k], opts.LineData{Value: []any{s.T, value(w)}})
		}
		if len(s.Disks) > 0 {
			var w float64
			for _, d := range s.Disks {
				w += d.WriteMBps
			}
			disks = append(disks, opts.LineData{Value: []any{s.T, w}})
		}
		if s.Database != nil && s.Database.Checkpoints > 0 {
			checkpoints = append(checkpoints, opts.MarkLineNameXAxisItem{Name: "checkpoint", XAxis: s.T})
		}
	}
	line := charts.NewLine()
	line.SetGlobalOptions(append(common(title, rolesSource+"; vertical lines: checkpoints counted in that interval", "MB/s written"),
		charts.WithXAxisOpts(opts.XAxis{Name: "s", Type: "value", Min: "dataMin", Max: "dataMax"}),
		charts.WithDataZoomOpts(opts.DataZoom{Type: "inside"}))...)
	for i, k := range order {
		if !slices.ContainsFunc(points[k], func(d opts.LineData) bool { v, ok := d.Value.([]any)[1].(float64); return ok && v > 0 }) {
			continue // a role that wrote nothing is no band
		}
		options := []charts.SeriesOpts{charts.WithLineChartOpts(opts.LineChart{Stack: "roles", ShowSymbol: opts.Bool(false)}),
			charts.WithAreaStyleOpts(opts.AreaStyle{Opacity: opts.Float(0.6)}), charts.WithLineStyleOpts(opts.LineStyle{Width: 0.5})}
		if i == 0 && len(checkpoints) > 0 {
			options = append(options, charts.WithMarkLineNameXAxisItemOpts(checkpoints...),
				charts.WithMarkLineStyleOpts(opts.MarkLineStyle{Symbol: []string{"none", "none"},
					Label: &opts.Label{Show: opts.Bool(true), Formatter: "checkpoint"}}))
		}
		line.AddSeries(roleName(k.server, k.role), points[k], options...)
	}
	if len(disks) > 0 {
		line.AddSeries("disks' writes (diskstats)", disks, charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false)}),
			charts.WithLineStyleOpts(opts.LineStyle{Width: 1.5, Type: "dashed"}))
	}
	return Chart{Title: title, Option: option(line), Height: 380}
}

// sweepRoleTable is each user step's I/O by role over its timed window, with each
// role's share of the disks' bytes; nil when no run sampled its server's processes.
func sweepRoleTable(series []*Series) *Table {
	t := &Table{Title: "I/O by process role per user step", Keys: 3,
		Columns: []string{"configuration", "users", "role", "read MB/s", readShareColumn, "write MB/s", writeShareColumn},
		Notes:   []string{rolesSource + "; a figure of more than one run is their mean and [range]; roles without I/O are left out.", diskColumnsNote + "."}}
	for _, s := range series {
		for _, p := range s.Points {
			var order []string
			byRole := map[string][]metrics.RoleTotal{}
			for _, st := range p.Steps {
				if st.Run == nil || st.Run.System == nil {
					continue
				}
				for _, r := range st.Run.System.Summary.ProcessIO {
					name := roleName(r.Server, r.Role)
					if _, ok := byRole[name]; !ok {
						order = append(order, name)
					}
					byRole[name] = append(byRole[name], r)
				}
			}
			for _, name := range order {
				rs := byRole[name]
				read, write := roleStat(rs, func(r metrics.RoleTotal) *float64 { return &r.ReadMBps }), roleStat(rs, func(r metrics.RoleTotal) *float64 { return blockWrites(r.Source, r.WriteMBps) })
				if read.Max == 0 && write.Max == 0 {
					continue
				}
				t.Rows = append(t.Rows, []string{s.Name, strconv.Itoa(p.Users), name, stat(read, 2),
					stat(roleStat(rs, func(r metrics.RoleTotal) *float64 { return r.ReadPctOfDisks }), 0), stat(write, 2),
					stat(roleStat(rs, func(r metrics.RoleTotal) *float64 { return blockWrites(r.Source, r.WritePctOfDisks) }), 0)})
			}
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// roleStat is a role's figure over a point's runs, those that have it.
func roleStat(rs []metrics.RoleTotal, f func(metrics.RoleTotal) *float64) Stat {
	var vs []float64
	for _, r := range rs {
		if v := f(r); v != nil {
			vs = append(vs, *v)
		}
	}
	return statOf(vs)
}

// withConsolidationRoles adds the per-role table of each consolidation run to its
// section: the noisy instances' backups are their own role there.
func withConsolidationRoles(sec *Section, srcs []*Source) *Section {
	if sec == nil {
		return nil
	}
	t := &Table{Title: "I/O by process role per instance", Keys: 4,
		Columns: []string{"experiment", "run", "instance", "role", "read MB", readShareColumn, "write MB", writeShareColumn},
		Notes:   []string{rolesSource + "; over the common timed window, against the shared disks; a backup is the server's processes serving it (PostgreSQL: the WAL sender running BASE_BACKUP); roles without I/O are left out.", diskColumnsNote + "."}}
	for _, p := range consolidationPairs(srcs) {
		for _, run := range []*study.ConsolidationRun{p.Baseline, p.Noisy} {
			if run == nil || run.System == nil {
				continue
			}
			for _, r := range run.System.Summary.ProcessIO {
				written := blockWrites(r.Source, r.WriteMB)
				if r.ReadMB == 0 && (written == nil || *written == 0) {
					continue
				}
				writeCell := "-"
				if written != nil {
					writeCell = num(*written, 1)
				}
				t.Rows = append(t.Rows, []string{p.Name, runLabel(run), consolidatedInstance(run, r.Server), r.Role,
					num(r.ReadMB, 1), pctCell(r.ReadPctOfDisks), writeCell, pctCell(blockWrites(r.Source, r.WritePctOfDisks))})
			}
		}
	}
	if len(t.Rows) > 0 {
		sec.Blocks = append(sec.Blocks, Block{Table: t})
	}
	return sec
}

// consolidatedInstance labels a server of a consolidation run as its tables do,
// saying which are the noisy (or idle) ones.
func consolidatedInstance(run *study.ConsolidationRun, server string) string {
	for i := range run.Instances {
		in := &run.Instances[i]
		if in.Name == server {
			if in.Role != study.RoleOLTP { // noisy, or idle in the baseline
				return instanceLabel(in, i) + " (" + in.Role + ")"
			}
			return instanceLabel(in, i)
		}
	}
	return server
}

func pctCell(p *float64) string {
	if p == nil || math.IsNaN(*p) {
		return "-"
	}
	return fmt.Sprintf("%.0f", *p)
}

// hasRoleWrites tells whether a run's samples hold writes by process role from the
// block layer.
func hasRoleWrites(sys *metrics.Report) bool {
	return sys != nil && slices.ContainsFunc(sys.Samples, func(s metrics.Sample) bool {
		return slices.ContainsFunc(s.ProcessIO, func(r metrics.RoleIO) bool { return blockWrites(r.Source, r.WriteMBps) != nil })
	})
}

// hasProcessIO tells whether a run's samples hold I/O by process role.
func hasProcessIO(sys *metrics.Report) bool {
	return sys != nil && slices.ContainsFunc(sys.Samples, func(s metrics.Sample) bool { return len(s.ProcessIO) > 0 })
}
