package report

import (
	"slices"
	"strconv"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/metrics"
)

// Where the database's time went: the clients' sessions' active time by wait class
// (docs/metrics.md), beside the throughput.

const waitsNote = "the clients' sessions' active time by wait class, as the database's wait events tell (the source per run: pg_stat_activity sampled, or MariaDB's performance_schema); cpu = active with no wait event; see docs/metrics.md for the mapping"

// waitChart stacks the clients' mean active sessions in each wait class per
// sampling interval, with the client's TPM per second on the right-hand axis.
func waitChart(run *driver.Result, sys *metrics.Report) Chart {
	const title = "Where the database's time went"
	if !hasWaits(sys) {
		why := "no wait profile was taken for this run"
		if sys != nil && sys.Summary.Waits != nil && sys.Summary.Waits.Missing != "" {
			why += ": " + sys.Summary.Waits.Missing
		}
		return lineChart(title, why, "s", "", "", nil, nil)
	}
	points := map[string][]opts.LineData{}
	source := ""
	for _, s := range sys.Samples {
		c := s.Waits.Clients()
		if c == nil || c.IntervalSeconds <= 0 {
			continue
		}
		source = s.Waits.Source
		for _, class := range metrics.WaitClasses {
			points[class] = append(points[class], opts.LineData{Value: []any{s.T, c.Seconds[class] / c.IntervalSeconds}})
		}
	}
	var tpm []opts.LineData
	for _, s := range run.Timeline {
		if float64(s.T) <= sys.Samples[len(sys.Samples)-1].T {
			tpm = append(tpm, opts.LineData{Value: []any{float64(s.T), s.TPM}})
		}
	}
	line := charts.NewLine()
	line.SetGlobalOptions(append(common(title, "clients' mean active sessions in each class per interval ("+source+"); TPM: storbench's client count", "active sessions"),
		charts.WithXAxisOpts(opts.XAxis{Name: "s", Type: "value", Min: "dataMin", Max: "dataMax"}),
		charts.WithDataZoomOpts(opts.DataZoom{Type: "inside"}))...)
	line.ExtendYAxis(yAxis("TPM"))
	for _, class := range metrics.WaitClasses {
		if !slices.ContainsFunc(points[class], func(d opts.LineData) bool { return d.Value.([]any)[1].(float64) > 0 }) {
			continue // a class never seen is no band
		}
		line.AddSeries(class, points[class], charts.WithLineChartOpts(opts.LineChart{Stack: "waits", ShowSymbol: opts.Bool(false)}),
			charts.WithAreaStyleOpts(opts.AreaStyle{Opacity: opts.Float(0.6)}), charts.WithLineStyleOpts(opts.LineStyle{Width: 0.5}))
	}
	tpmOpts := []charts.SeriesOpts{charts.WithLineChartOpts(opts.LineChart{YAxisIndex: 1, ShowSymbol: opts.Bool(false)}),
		charts.WithLineStyleOpts(opts.LineStyle{Width: 1.5, Type: "dashed"})}
	if spans := verdictSpans(sys.Samples); len(spans) > 0 {
		tpmOpts = append(tpmOpts, charts.WithMarkAreaData(spans...),
			charts.WithMarkAreaStyleOpts(opts.MarkAreaStyle{ItemStyle: &opts.ItemStyle{Color: "rgba(0,0,0,0.03)", BorderColor: "rgba(0,0,0,0.25)", BorderWidth: 0.5},
				Label: &opts.Label{Show: opts.Bool(true), Position: "insideTop", FontSize: 10}}))
	}
	line.AddSeries("TPM (client)", tpm, tpmOpts...)
	return Chart{Title: title, Option: option(line), Height: 380}
}

// verdictSpans are the runs of consecutive intervals with the same bottleneck
// verdict (docs/bottlenecks.md), each as a marked area named by its verdict: the
// verdict second by second above the wait classes that decide it.
func verdictSpans(samples []metrics.Sample) [][]opts.MarkAreaData {
	var spans [][]opts.MarkAreaData
	for i := 0; i < len(samples); {
		v := samples[i].Bottleneck
		j := i
		for j+1 < len(samples) && samples[j+1].Bottleneck == v {
			j++
		}
		if v != "" {
			spans = append(spans, []opts.MarkAreaData{{Name: v, XAxis: samples[i].T - samples[i].Seconds}, {XAxis: samples[j].T}})
		}
		i = j + 1
	}
	return spans
}

// hasWaits tells whether a run's samples hold the clients' wait profile.
func hasWaits(sys *metrics.Report) bool {
	return sys != nil && slices.ContainsFunc(sys.Samples, func(s metrics.Sample) bool { return s.Waits.Clients() != nil })
}

// sweepWaitTable is each user step's clients' wait shares over its timed window;
// nil when no run took a wait profile.
func sweepWaitTable(series []*Series) *Table {
	t := &Table{Title: "Where the clients' time went per user step", Keys: 2,
		Columns: append([]string{"configuration", "users", "active sessions"}, waitColumns()...),
		Notes:   []string{waitsNote + "; % of the clients' active time over the timed window; a figure of more than one run is their mean and [range]."}}
	for _, s := range series {
		for _, p := range s.Points {
			var clients []metrics.RoleWaits
			for _, st := range p.Steps {
				if st.Run != nil && st.Run.System != nil {
					if c := st.Run.System.Summary.Waits.Clients(); c != nil {
						clients = append(clients, *c)
					}
				}
			}
			if len(clients) == 0 {
				continue
			}
			row := []string{s.Name, strconv.Itoa(p.Users), stat(waitStat(clients, metrics.RoleWaits.MeanActive), 1)}
			for _, class := range metrics.WaitClasses {
				row = append(row, stat(waitStat(clients, func(r metrics.RoleWaits) float64 { return r.Pct(class) }), 0))
			}
			t.Rows = append(t.Rows, row)
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// waitColumns name the classes' columns.
func waitColumns() []string {
	var cols []string
	for _, class := range metrics.WaitClasses {
		cols = append(cols, class+" %")
	}
	return cols
}

// waitStat is a figure of the clients' profile over a point's runs.
func waitStat(rs []metrics.RoleWaits, f func(metrics.RoleWaits) float64) Stat {
	vs := make([]float64, len(rs))
	for i, r := range rs {
		vs[i] = f(r)
	}
	return statOf(vs)
}
