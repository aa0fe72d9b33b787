package report

import (
	"encoding/json"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
)

// Chart is one chart of the report: go-echarts builds its ECharts option, which the
// page's own script hands to the inlined ECharts (no network, no CDN).
type Chart struct {
	Title  string
	Option template.JS
	// Height in pixels.
	Height int
}

// option serialises a go-echarts chart's option for a <script type="application/json">
// block: a "<" inside a label must not close the script element.
func option(c interface {
	Validate()
	JSON() map[string]any
}) template.JS {
	c.Validate()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c.JSON()); err != nil {
		// A value JSON cannot hold: the chart says so rather than break the page.
		b.Reset()
		enc.Encode(map[string]any{"title": map[string]any{"text": "this chart could not be drawn", "subtext": err.Error()}})
	}
	return template.JS(strings.TrimSpace(strings.ReplaceAll(b.String(), "<", `\u003c`)))
}

// common are the options every chart shares: a title with its source in the
// subtitle, a legend below it, no animation (printing and screenshots see the final
// state at once) and a toolbox to save the chart as an image. The grid holds the
// axis labels (containLabel), so long figures are never cut.
func common(title, source, yName string) []charts.GlobalOpts {
	return []charts.GlobalOpts{
		charts.WithTitleOpts(opts.Title{Title: title, Subtitle: source, Left: "center"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "48", Type: "scroll", Left: "center", Width: "80%"}),
		charts.WithGridOpts(opts.Grid{Top: "100", Left: "20", Right: "20", Bottom: "36", ContainLabel: opts.Bool(true)}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithAnimation(false),
		// The y axis stays at the left edge, not at x = 0 (ramp-up is before 0).
		charts.WithYAxisOpts(yAxis(yName)),
		charts.WithToolboxOpts(opts.Toolbox{Show: opts.Bool(true), Right: "10", Feature: &opts.ToolBoxFeature{
			SaveAsImage: &opts.ToolBoxFeatureSaveAsImage{Show: opts.Bool(true), Title: "save"}}}),
	}
}

// yAxis is a value axis named above its top end; the page's script turns the name
// towards the plot (go-echarts has no nameTextStyle), so the right-hand one is not
// cut at the chart's edge.
func yAxis(name string) opts.YAxis {
	return opts.YAxis{Name: name, Type: "value", AxisLine: &opts.AxisLine{OnZero: opts.Bool(false)}}
}

// xAxis is the x axis named below its middle, clear of the labels.
func xAxis(name, kind string) opts.XAxis {
	return opts.XAxis{Name: name, Type: kind, NameLocation: "middle", NameGap: 26}
}

// barSeries is one series of a bar chart: a value per category, NaN where it was
// not measured (no bar).
type barSeries struct {
	Name   string
	Values []float64
}

// barChart draws bars per category (user counts, cycles, instances) with one
// series per configuration, as the papers do.
func barChart(title, source, xName, yName string, categories []string, series []barSeries) Chart {
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(common(title, source, yName),
		charts.WithXAxisOpts(xAxis(xName, "category")))...)
	bar.SetXAxis(categories)
	for _, s := range series {
		if !slices.ContainsFunc(s.Values, isFigure) {
			continue // nothing measured: no empty entry in the legend
		}
		data := make([]opts.BarData, len(s.Values))
		for i, v := range s.Values {
			data[i] = opts.BarData{Value: value(v)}
		}
		bar.AddSeries(s.Name, data)
	}
	return Chart{Title: title, Option: option(bar), Height: 420}
}

// xySeries is one line over a numeric axis (seconds).
type xySeries struct {
	Name string
	X, Y []float64
	// YAxis 1 puts the line on the right-hand axis.
	YAxis int
}

// window is a shaded span of the x axis: a backup running, the ramp-up.
type window struct {
	Name       string
	Start, End float64
}

// lineChart draws lines over seconds; windows are shaded behind them; a second
// y axis is added when a series asks for it. The points go in datasets, one per
// distinct x axis, as compact rows ([x, y1, y2…]): a study's hundreds of
// second-by-second series keep the page small.
func lineChart(title, source, xName, yName, y2Name string, series []xySeries, windows []window) Chart {
	// A series with nothing measured would only be an empty entry in the legend.
	series = slices.DeleteFunc(slices.Clone(series), func(s xySeries) bool { return !slices.ContainsFunc(s.Y, isFigure) })
	// The x axis spans the data; from 0 when nothing is before 0 (no ramp-up).
	var xMin any = 0
	for _, s := range series {
		if len(s.X) > 0 && slices.Min(s.X) < 0 {
			xMin = "dataMin"
		}
	}
	line := charts.NewLine()
	line.SetGlobalOptions(append(common(title, source, yName),
		charts.WithXAxisOpts(opts.XAxis{Name: xName, Type: "value", Min: xMin, Max: "dataMax", NameLocation: "middle", NameGap: 26}),
		charts.WithDataZoomOpts(opts.DataZoom{Type: "inside"}))...)
	if y2Name != "" {
		line.ExtendYAxis(yAxis(y2Name))
	}
	// A short series (a transfer of a second or two) shows its points, or a lone
	// point would not show at all.
	points := 0
	for _, s := range series {
		points = max(points, len(s.X))
	}
	type dataset struct {
		x    []float64
		cols [][]float64
	}
	var sets []*dataset
	for i, s := range series {
		var d *dataset
		k := slices.IndexFunc(sets, func(d *dataset) bool { return slices.Equal(d.x, s.X) })
		if k < 0 {
			d = &dataset{x: s.X}
			sets = append(sets, d)
			k = len(sets) - 1
		} else {
			d = sets[k]
		}
		d.cols = append(d.cols, s.Y)
		// A line on the right-hand axis is dashed, so it is not read on the left one.
		style := opts.LineStyle{Width: 1.5}
		if s.YAxis == 1 {
			style.Type = "dashed"
		}
		options := []charts.SeriesOpts{charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(points <= 60), YAxisIndex: s.YAxis}),
			charts.WithLineStyleOpts(style), charts.WithDatasetIndex(k),
			charts.WithEncodeOpts(opts.Encode{X: 0, Y: len(d.cols)})}
		if i == 0 && len(windows) > 0 {
			pairs := make([][]opts.MarkAreaData, len(windows))
			for k, w := range windows {
				pairs[k] = []opts.MarkAreaData{{Name: w.Name, XAxis: w.Start}, {XAxis: w.End}}
			}
			options = append(options, charts.WithMarkAreaData(pairs...),
				charts.WithMarkAreaStyleOpts(opts.MarkAreaStyle{ItemStyle: &opts.ItemStyle{Color: "rgba(255,173,177,0.35)"},
					Label: &opts.Label{Show: opts.Bool(true), Position: "insideTop", FontSize: 10}}))
		}
		line.AddSeries(s.Name, nil, options...)
	}
	for _, d := range sets {
		line.AddDataset(opts.Dataset{Source: rows(d.x, d.cols)})
	}
	return Chart{Title: title, Option: option(line), Height: 380}
}

// categoryLines draws a line per series over categories (user counts: 1, 2, 3,
// 5, 8… equally spaced, as the papers draw a sweep); Y holds a value per category,
// NaN where none was measured (a gap). A series with YAxis 1 goes on the right-hand
// axis, dashed.
func categoryLines(title, source, xName, yName, y2Name string, categories []string, series []xySeries) Chart {
	line := charts.NewLine()
	line.SetGlobalOptions(append(common(title, source, yName), charts.WithXAxisOpts(xAxis(xName, "category")))...)
	if y2Name != "" {
		line.ExtendYAxis(yAxis(y2Name))
	}
	line.SetXAxis(categories)
	for _, s := range series {
		if !slices.ContainsFunc(s.Y, isFigure) {
			continue
		}
		data := make([]opts.LineData, len(s.Y))
		for i, v := range s.Y {
			data[i] = opts.LineData{Value: value(v)}
		}
		style := opts.LineStyle{Width: 2}
		if s.YAxis == 1 {
			style.Type = "dashed"
		}
		line.AddSeries(s.Name, data, charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(true), YAxisIndex: s.YAxis, ConnectNulls: opts.Bool(true)}),
			charts.WithLineStyleOpts(style))
	}
	return Chart{Title: title, Option: option(line), Height: 420}
}

// rows writes a dataset's source as JSON rows [x, y1, y2…], each y with the digits
// a chart can show: whole numbers from 1,000 up, else four significant digits; a
// missing figure is "-" (a gap).
func rows(x []float64, cols [][]float64) json.RawMessage {
	b := make([]byte, 0, len(x)*8*(len(cols)+1))
	b = append(b, '[')
	for i := range x {
		if i > 0 {
			b = append(b, ',')
		}
		// Seconds to the millisecond: sub-second intervals keep their own x.
		b = append(b, '[')
		b = strconv.AppendFloat(b, math.Round(x[i]*1000)/1000, 'f', -1, 64)
		for _, c := range cols {
			b = append(b, ',')
			b = appendFigure(b, c[i])
		}
		b = append(b, ']')
	}
	return append(b, ']')
}

func appendFigure(b []byte, v float64) []byte {
	switch {
	case value(v) == "-":
		return append(b, `"-"`...)
	case math.Abs(v) >= 1000:
		return strconv.AppendFloat(b, math.Round(v), 'f', -1, 64)
	default:
		return strconv.AppendFloat(b, v, 'g', 4, 64)
	}
}

// isFigure tells a measured figure from a gap (NaN, ±Inf).
func isFigure(v float64) bool { return value(v) != "-" }

// value is a figure as ECharts takes it: "-" for a missing value, which leaves a gap.
func value(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return v
}
