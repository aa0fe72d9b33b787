package hammerdb

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/tpcc"
)

// Info is what a report says beside a run's own figures.
type Info struct {
	// Version is storbench's.
	Version string
	// Step is the study step the run was ("": a single run).
	Step string
	// Machine is the host the run was measured on (nil: not recorded).
	Machine *Machine
}

// Machine is a host as a study recorded it.
type Machine struct {
	CPUModel    string
	Cores       int
	MemoryBytes uint64
	Kernel      string
}

// rowNames are HammerDB's names of the transaction types, in its reports' order.
var rowNames = []struct {
	txn  tpcc.Transaction
	name string
}{{tpcc.NewOrder, "NEWORD"}, {tpcc.Payment, "PAYMENT"}, {tpcc.Delivery, "DELIVERY"}, {tpcc.StockLevel, "SLEV"}, {tpcc.OrderStatus, "OSTAT"}}

// Omitted are the fields of HammerDB's reports a report storbench writes leaves out,
// and why (docs/hammerdb-results.md).
var Omitted = []string{
	"system.hostname, system.nic, system.storage, system.system_vendor, system.system_type, system.cloud_instance: not recorded with a run",
	"metrics.cpu_percent[].irq_pct: storbench counts interrupts in sys_pct",
	"report_hints, analysis_hints: HammerDB's guidance for its own charts",
}

// Export is a TPC-C run as a HammerDB job report. The headline figures are the
// database view (nopm_db, tpm_db), as HammerDB reads them; its response times are the
// timed window's; its transaction count is the run's per-second timeline. Times are
// written in UTC.
func Export(res *driver.Result, info Info) (*Report, error) {
	if res == nil || res.Start.IsZero() {
		return nil, fmt.Errorf("not a TPC-C run's result")
	}
	product, release := res.Config.Server()
	if product == "" {
		product = res.Config.Engine
	}
	began := res.Start.Add(-time.Duration(res.Config.RampSeconds * float64(time.Second))).UTC()
	r := &Report{
		Schema:      SchemaName,
		Description: "A storbench TPROC-C run written as a HammerDB job report (" + SchemaName + "): storbench's figures where the report has a field, nothing where storbench does not measure it (storbench.omitted).",
		Artifact:    &Artifact{Type: "hammerdb-result-json", Schema: SchemaName, Source: "storbench", GeneratedBy: "storbench " + info.Version + " results export --hammerdb", Redacted: true},
		Disclaimer: Disclaimer{ResultType: "storbench result in HammerDB's job report format", Audited: false,
			Text: "A storbench result. storbench's TPROC-C workload is derived from the TPC-C specification, following HammerDB's TPROC-C. This result is not audited by the TPC and is not a TPC result."},
		Job: Job{JobID: jobID(res, began, info), HDBVersion: "storbench " + info.Version, Database: product, DatabaseDisplay: product, Release: release,
			Benchmark: "TPROC-C", Timestamp: began.Format(timeLayout)},
		BenchmarkConfig: BenchmarkConfig{Warehouses: res.Config.Warehouses, VirtualUsers: res.Config.Users,
			RampupMinutes: res.Config.RampSeconds / 60, DurationMinutes: res.End.Sub(res.Start).Minutes()},
		Result: Result{Type: "tproc_c_result", DatabaseDisplay: product, ActiveVirtualUsers: res.Config.Users, NOPM: res.NOPMDB, TPM: res.TPMDB,
			ChartData: []ChartItem{{"NOPM", res.NOPMDB}, {"TPM", res.TPMDB}}},
		System: info.system(),
		Storbench: &StorbenchFields{Version: info.Version, Step: info.Step, Engine: res.Config.Engine, Mode: res.Config.Mode, Inputs: res.Config.Inputs,
			NOPMClient: res.NOPMClient, TPMClient: res.TPMClient, Sources: res.Sources, Omitted: Omitted, TimeZone: "UTC"},
	}
	if len(res.Timeline) > 0 {
		s := Series{Name: product + " tpm", Database: product, DatabaseDisplay: product, Metric: "tpm"}
		for _, sec := range res.Timeline {
			s.Points = append(s.Points, Point{res.Start.Add(time.Duration(sec.T) * time.Second).UTC().Format(timeLayout), sec.TPM})
		}
		r.TransactionCnt = &TransactionCnt{Available: true, Series: []Series{s}}
	}
	// Where the server keeps no counter, the client's count stands in for the
	// database view (SQLite's TPM): the report's readers must know it.
	for _, f := range []struct{ figure, field string }{{"nopm_db", "result.nopm"}, {"tpm_db", "result.tpm"}} {
		if res.FromClient(f.figure) {
			r.Description += " " + f.field + " is storbench's client count: " + res.Sources[f.figure] + "."
		}
	}
	rows, err := responseRows(res)
	if err != nil {
		return nil, err
	}
	r.ResponseTimes = &ResponseTimes{Type: "boxplot", Unit: "milliseconds", Rows: rows}
	r.Metrics = metricsOf(res)
	return r, nil
}

// jobID is HammerDB's form of a job's ID, 24 upper-case hex digits, the first 8 the
// job's start in Unix seconds (as HammerDB's are), the rest from what tells runs apart
// (the step, the window's start, the database).
func jobID(res *driver.Result, began time.Time, info Info) string {
	sum := sha256.Sum256([]byte(info.Step + "\x00" + res.Start.Format(time.RFC3339Nano) + "\x00" + res.Config.DSN))
	return fmt.Sprintf("%08X", uint32(began.Unix())) + strings.ToUpper(hex.EncodeToString(sum[:8]))
}

func (info Info) system() *System {
	m := info.Machine
	if m == nil {
		return nil
	}
	s := &System{Available: true, CPUModel: m.CPUModel, OSName: m.Kernel}
	if m.Cores > 0 {
		s.CPUCount = strconv.Itoa(m.Cores)
	}
	if m.MemoryBytes > 0 {
		s.Memory = fmt.Sprintf("%.1f GB", float64(m.MemoryBytes)/(1<<30))
	}
	return s
}

// responseRows are the timed window's response times per type, HammerDB's columns
// from the run's histograms; elapsed_ms is the window, ratio_pct the type's share of
// the users' time in it.
func responseRows(res *driver.Result) ([]Row, error) {
	window := float64(res.End.Sub(res.Start).Milliseconds())
	var rows []Row
	for _, rn := range rowNames {
		st := res.Transactions.Of(rn.txn)
		h, err := st.Latencies.Decode()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rn.txn, err)
		}
		row := Row{Name: rn.name, ElapsedMs: window, Calls: st.Count, AvgMs: st.MeanMs, MaxMs: st.MaxMs,
			P99Ms: st.P99Ms, P95Ms: st.P95Ms, P50Ms: st.P50Ms, TotalMs: round3(st.MeanMs * float64(st.Count))}
		p90 := st.P90Ms
		row.P90Ms = &p90
		if h != nil && h.TotalCount() > 0 {
			row.MinMs = float64(h.Min()) / 1000
			row.P25Ms = float64(h.ValueAtQuantile(25)) / 1000
			row.P75Ms = float64(h.ValueAtQuantile(75)) / 1000
			row.SD = round3(h.StdDev() / 1000)
		}
		if window > 0 && res.Config.Users > 0 {
			row.RatioPct = round3(100 * row.TotalMs / (window * float64(res.Config.Users)))
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// metricsOf is the sampler's CPU shares and the sampled disks' IOPS and MB/s (all of
// them together, reads and writes), per sample (nil: not sampled).
func metricsOf(res *driver.Result) *Metrics {
	if res.System == nil || len(res.System.Samples) == 0 {
		return nil
	}
	m := &Metrics{Available: true}
	for _, s := range res.System.Samples {
		at := s.Time.UTC().Format(timeLayout)
		if c := s.CPU; c != nil {
			m.CPUPercent = append(m.CPUPercent, CPUPercent{Timestamp: at, UsrPct: round3(c.User), SysPct: round3(c.System), IdlePct: round3(c.Idle)})
		}
		if len(s.Disks) > 0 {
			var iops, mbps float64
			for _, d := range s.Disks {
				iops += d.ReadIOPS + d.WriteIOPS
				mbps += d.ReadMBps + d.WriteMBps
			}
			m.IOPS = append(m.IOPS, Point{at, round3(iops)})
			m.MBps = append(m.MBps, Point{at, round3(mbps)})
		}
	}
	return m
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
