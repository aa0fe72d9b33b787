package report

import (
	_ "embed"
	"html/template"
	"io"
	"strings"
)

// ECharts is inlined, so the report opens with no network: the common build of
// Apache ECharts 5.6.0 (line, bar, canvas and SVG renderers), from the echarts npm
// package's dist/. ECharts 6 moved go-echarts' titles and legends: stay on 5.x.
var (
	//go:embed assets/echarts.common.min.js
	echartsJS string
	//go:embed assets/echarts-LICENSE.txt
	echartsLicence string
	//go:embed assets/echarts-LICENSE-d3.txt
	echartsLicenceD3 string
	//go:embed assets/report.css
	reportCSS string
	//go:embed assets/report.js
	reportJS string
	//go:embed assets/report.html.tmpl
	reportHTML string
)

// echartsVersion is the inlined ECharts release.
const echartsVersion = "5.6.0"

var page = template.Must(template.New("report").Funcs(template.FuncMap{"pickerOptions": pickerOptions}).Parse(reportHTML))

// Write renders the report as one self-contained HTML file.
func Write(w io.Writer, r *Report) error {
	return page.Execute(w, struct {
		*Report
		CSS            template.CSS
		ECharts        template.JS
		Script         template.JS
		EChartsRelease string
		EChartsLicence string
	}{r, template.CSS(reportCSS), template.JS(echartsJS), template.JS(reportJS), echartsVersion,
		echartsLicence + "\n\n---- licenses/LICENSE-d3 ----\n" + echartsLicenceD3})
}

// pickerOptions is a picker's charts as one JSON array: per choice, its options.
func pickerOptions(p *Picker) template.JS {
	var b strings.Builder
	b.WriteByte('[')
	for i, charts := range p.Charts {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('[')
		for k, c := range charts {
			if k > 0 {
				b.WriteByte(',')
			}
			b.WriteString(string(c.Option))
		}
		b.WriteByte(']')
	}
	b.WriteByte(']')
	return template.JS(b.String())
}
