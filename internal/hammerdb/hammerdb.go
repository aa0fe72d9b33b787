// Package hammerdb reads and writes HammerDB's job reports (hammerdb-job-report-v1,
// the JSON HammerDB 6.0 writes and the public results repository collects): a
// storbench TPC-C run as one, filled with storbench's figures where the report has
// a field and nothing invented where it does not (Export), and one of HammerDB's as a
// run the report and compare can show, labelled as HammerDB's figures (Read). Every
// report read or written is validated against HammerDB's published schema and the
// rules HammerDB's result validator adds for TPROC-C (schema/).
package hammerdb

import (
	"bytes"
	"embed"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/storbench/storbench/internal/outfile"
)

// SchemaName is the reports' "schema".
const SchemaName = "hammerdb-job-report-v1"

// timeLayout is how the reports write a time: local wall-clock time, no zone.
const timeLayout = "2006-01-02 15:04:05"

// Report is a job report's fields that storbench writes or reads; others a report
// holds (report_hints, analysis_hints) are kept out of both.
type Report struct {
	Schema          string           `json:"schema"`
	Description     string           `json:"description,omitempty"`
	Artifact        *Artifact        `json:"artifact,omitempty"`
	Disclaimer      Disclaimer       `json:"disclaimer"`
	Job             Job              `json:"job"`
	BenchmarkConfig BenchmarkConfig  `json:"benchmark_config"`
	System          *System          `json:"system,omitempty"`
	Result          Result           `json:"result"`
	TransactionCnt  *TransactionCnt  `json:"transaction_count,omitempty"`
	ResponseTimes   *ResponseTimes   `json:"response_times,omitempty"`
	Metrics         *Metrics         `json:"metrics,omitempty"`
	Storbench       *StorbenchFields `json:"storbench,omitempty"`
}

// Artifact says what made the report.
type Artifact struct {
	Type        string `json:"type"`
	Schema      string `json:"schema"`
	Source      string `json:"source"`
	GeneratedBy string `json:"generated_by"`
	Redacted    bool   `json:"redacted"`
}

// Disclaimer is the report's statement that it is no audited TPC result.
type Disclaimer struct {
	ResultType string `json:"result_type,omitempty"`
	Audited    bool   `json:"audited"`
	Text       string `json:"text,omitempty"`
}

// Job identifies the run.
type Job struct {
	JobID           string `json:"jobid"`
	HDBVersion      string `json:"hdb_version"`
	Database        string `json:"database"`
	DatabaseDisplay string `json:"database_display"`
	Release         string `json:"release,omitempty"`
	Benchmark       string `json:"benchmark"`
	Timestamp       string `json:"timestamp"`
}

// BenchmarkConfig is the run's configuration: HammerDB's four fields, and where
// storbench writes the report, its own settings beside them.
type BenchmarkConfig struct {
	Warehouses      int     `json:"warehouses"`
	VirtualUsers    int     `json:"virtual_users"`
	RampupMinutes   float64 `json:"rampup_minutes"`
	DurationMinutes float64 `json:"duration_minutes"`
}

// System is the machine the run was on.
type System struct {
	Available bool   `json:"available"`
	CPUModel  string `json:"cpumodel,omitempty"`
	CPUCount  string `json:"cpucount,omitempty"`
	Memory    string `json:"memory,omitempty"`
	OSName    string `json:"os_name,omitempty"`
}

// Result holds the headline figures.
type Result struct {
	Type               string      `json:"type"`
	DatabaseDisplay    string      `json:"database_display,omitempty"`
	ActiveVirtualUsers int         `json:"active_virtual_users,omitempty"`
	NOPM               float64     `json:"nopm"`
	TPM                float64     `json:"tpm"`
	ChartData          []ChartItem `json:"chart_data,omitempty"`
}

// ChartItem is one bar of the result chart.
type ChartItem struct {
	Metric string  `json:"metric"`
	Value  float64 `json:"value"`
}

// TransactionCnt is the transaction rate over time.
type TransactionCnt struct {
	Available bool     `json:"available"`
	Series    []Series `json:"series"`
}

// Series is one database's transactions a minute, sampled over the run.
type Series struct {
	Name            string  `json:"name"`
	Database        string  `json:"database,omitempty"`
	DatabaseDisplay string  `json:"database_display,omitempty"`
	Metric          string  `json:"metric"`
	Points          []Point `json:"points"`
}

// Point is a value at a time (timeLayout).
type Point struct {
	Timestamp string  `json:"timestamp"`
	Value     float64 `json:"value"`
}

// ResponseTimes are the transactions' response times, one row per type.
type ResponseTimes struct {
	Type string `json:"type"`
	Unit string `json:"unit"`
	Rows []Row  `json:"rows"`
}

// Row is one transaction type's response times (milliseconds).
type Row struct {
	Name      string   `json:"name"`
	ElapsedMs float64  `json:"elapsed_ms"`
	Calls     int64    `json:"calls"`
	MinMs     float64  `json:"min_ms"`
	AvgMs     float64  `json:"avg_ms"`
	MaxMs     float64  `json:"max_ms"`
	TotalMs   float64  `json:"total_ms"`
	P99Ms     float64  `json:"p99_ms"`
	P95Ms     float64  `json:"p95_ms"`
	P90Ms     *float64 `json:"p90_ms,omitempty"` // storbench's; HammerDB has none
	P75Ms     float64  `json:"p75_ms"`
	P50Ms     float64  `json:"p50_ms"`
	P25Ms     float64  `json:"p25_ms"`
	SD        float64  `json:"sd"`
	RatioPct  float64  `json:"ratio_pct"`
}

// Metrics are the host's CPU and I/O over the run.
type Metrics struct {
	Available  bool         `json:"available"`
	CPUPercent []CPUPercent `json:"cpu_percent,omitempty"`
	IOPS       []Point      `json:"iops,omitempty"`
	MBps       []Point      `json:"mbps,omitempty"`
}

// CPUPercent is one CPU sample. storbench counts interrupts in system time, as
// Perfmon's % Privileged Time does, so it writes no irq_pct.
type CPUPercent struct {
	Timestamp string   `json:"timestamp"`
	UsrPct    float64  `json:"usr_pct"`
	SysPct    float64  `json:"sys_pct"`
	IRQPct    *float64 `json:"irq_pct,omitempty"`
	IdlePct   float64  `json:"idle_pct"`
}

// StorbenchFields are what a report storbench wrote adds to HammerDB's fields, in
// a block of its own (the schema allows any): the figures' sources and the settings
// HammerDB's report has no field for.
type StorbenchFields struct {
	Version    string            `json:"storbench_version"`
	Step       string            `json:"step,omitempty"`
	Engine     string            `json:"engine"`
	Mode       string            `json:"mode"`
	Inputs     string            `json:"inputs,omitempty"`
	NOPMClient float64           `json:"nopm_client"`
	TPMClient  float64           `json:"tpm_client"`
	Sources    map[string]string `json:"sources"`
	Omitted    []string          `json:"omitted"`
	TimeZone   string            `json:"time_zone"`
}

// Kind is a report storbench wrote, as outfile knows it again: it replaces only such
// a file.
var Kind = outfile.Kind{What: "a HammerDB job report storbench wrote", Is: func(head []byte) bool {
	return bytes.HasPrefix(bytes.TrimSpace(head), []byte("{")) && bytes.Contains(head, []byte(`"schema": "`+SchemaName+`"`)) &&
		bytes.Contains(head, []byte(`"source": "storbench"`))
}}

//go:embed schema/*.json
var schemaFiles embed.FS

// schema is HammerDB's v1 schema with the TPROC-C rules (schema/tproc-c.schema.json).
var schema = func() *jsonschema.Schema {
	c := jsonschema.NewCompiler()
	for _, name := range []string{"hammerdb-job-report-v1.schema.json", "tproc-c.schema.json"} {
		b, err := schemaFiles.ReadFile("schema/" + name)
		if err != nil {
			panic(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			panic(fmt.Sprintf("schema/%s: %v", name, err))
		}
		id, _ := doc.(map[string]any)["$id"].(string)
		if err := c.AddResource(id, doc); err != nil {
			panic(err)
		}
	}
	s, err := c.Compile("https://storbench.invalid/schemas/hammerdb-tproc-c.schema.json")
	if err != nil {
		panic(err)
	}
	return s
}()

// Validate checks a report's JSON against HammerDB's v1 schema and the TPROC-C
// rules, and says in one line what does not hold.
func Validate(b []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	if err := schema.Validate(doc); err != nil {
		return fmt.Errorf("does not follow HammerDB's %s schema for TPROC-C: %s", SchemaName, oneLine(err))
	}
	return nil
}

var english = message.NewPrinter(language.English)

// oneLine is a validation error's causes, the deepest of each, on one line.
func oneLine(err error) string {
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return err.Error()
	}
	var leaves []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			at := "/" + strings.Join(e.InstanceLocation, "/")
			leaves = append(leaves, fmt.Sprintf("at %s: %s", at, e.ErrorKind.LocalizedString(english)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return strings.Join(leaves, "; ")
}
