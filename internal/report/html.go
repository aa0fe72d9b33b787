package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/outfile"
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

// DefaultPath is where a report of results goes when no file is given: beside the
// first results store or result file, named after it (results/a gives results/a.html,
// run.json run.html), so that the reports of two studies in one folder do not replace
// each other.
func DefaultPath(results []string) string {
	first := filepath.Clean(results[0])
	return strings.TrimSuffix(first, filepath.Ext(first)) + ".html"
}

// generatorMark opens the generator meta tag the report template writes in its
// head: a file that has it near its start is a report storbench wrote.
const generatorMark = `<meta name="generator" content="storbench `

// reportKind is a report as outfile knows it again: by its generator mark.
var reportKind = outfile.Kind{What: "a report storbench wrote", Is: func(head []byte) bool {
	return bytes.Contains(head, []byte(generatorMark))
}}

// WriteFile writes the report to file (File) whole: beside it first, then renamed
// over it, so a failed render never leaves half a report. Only an empty file or a
// report storbench wrote is replaced: a user's own file of that name is not lost.
func WriteFile(file outfile.Target, r *Report) error {
	if err := file.Check(); err != nil {
		return err
	}
	path := file.Path
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("%w: report file %s: %v", input.ErrInvalid, path, err)
	}
	defer os.Remove(tmp.Name())
	if err := Write(tmp, r); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the report: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// File is the report file at path, named by setting flag in messages ("-o"; quick's
// "--path"): a command that measures first checks it before it measures.
func File(path, flag string) outfile.Target {
	return outfile.Target{Path: path, Flag: flag, Kind: reportKind}
}

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
