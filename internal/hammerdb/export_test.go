package hammerdb

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/tpcc"
)

// runOf reads a real run's result (storbench run --json against PostgreSQL 15).
func runOf(t *testing.T, path string) *driver.Result {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var res driver.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	return &res
}

// A storbench run written as a job report validates against HammerDB's schema and
// rules, is known again as storbench's, and reads back with its NOPM, TPM, client
// counts, sources and every response-time figure unchanged.
func TestExportRoundTrip(t *testing.T) {
	res := runOf(t, "../report/testdata/run-slow.json")
	rep, err := Export(res, Info{Version: "test", Machine: &Machine{CPUModel: "a CPU", Cores: 2, MemoryBytes: 24 << 30, Kernel: "Linux 6.18"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(b); err != nil {
		t.Fatalf("the export does not validate: %v", err)
	}
	if !Kind.Is(b[:min(len(b), 4096)]) {
		t.Error("outfile does not know the export as storbench's")
	}
	if rep.Job.Database != "PostgreSQL" || rep.Job.Release != "15.18" || len(rep.Job.JobID) != 24 || rep.Job.HDBVersion != "storbench test" {
		t.Errorf("job %+v", rep.Job)
	}
	window := res.End.Sub(res.Start)
	for _, row := range rep.ResponseTimes.Rows {
		if row.Calls > 0 && !(row.MinMs <= row.P25Ms && row.P25Ms <= row.P50Ms && row.P50Ms <= row.P75Ms && row.P75Ms <= row.P95Ms && row.P95Ms <= row.P99Ms && row.P99Ms <= row.MaxMs) {
			t.Errorf("%s: percentiles out of order: %+v", row.Name, row)
		}
		if row.ElapsedMs != float64(window.Milliseconds()) {
			t.Errorf("%s: elapsed %v ms, the window is %v", row.Name, row.ElapsedMs, window)
		}
	}

	began := res.Start.Add(-time.Duration(res.Config.RampSeconds * float64(time.Second))).UTC()
	if rep.Job.Timestamp != began.Format(timeLayout) || rep.Job.JobID[:8] != fmt.Sprintf("%08X", began.Unix()) {
		t.Errorf("job %s at %s: want the users' start %s (UTC), its Unix seconds in the ID", rep.Job.JobID, rep.Job.Timestamp, began)
	}
	for i, p := range rep.TransactionCnt.Series[0].Points {
		sec := res.Timeline[i]
		if p.Value != sec.TPM || p.Timestamp != res.Start.Add(time.Duration(sec.T)*time.Second).UTC().Format(timeLayout) {
			t.Errorf("transaction count point %d: %+v, want second %d's %v TPM", i, p, sec.T, sec.TPM)
		}
	}

	back, err := Read(b)
	if err != nil {
		t.Fatal(err)
	}
	if back.Measured("timeline_nopm") {
		t.Error("the report carries no NOPM per second, yet it reads back as measured")
	}
	if !back.Start.Equal(res.Start.Truncate(time.Second)) && back.Start.Sub(res.Start).Abs() >= time.Second {
		t.Errorf("window start %v, want %v", back.Start, res.Start)
	}
	for i, sec := range back.Timeline {
		if want := res.Timeline[i]; sec.T != want.T || sec.TPM != want.TPM || sec.Phase != want.Phase {
			t.Errorf("second %d read back as %+v, want %+v", i, sec, want)
		}
	}
	if back.NOPMDB != res.NOPMDB || back.TPMDB != res.TPMDB || back.NOPMClient != res.NOPMClient || back.TPMClient != res.TPMClient {
		t.Errorf("throughput %v %v %v %v, want %v %v %v %v", back.NOPMDB, back.TPMDB, back.NOPMClient, back.TPMClient, res.NOPMDB, res.TPMDB, res.NOPMClient, res.TPMClient)
	}
	for figure, source := range res.Sources {
		if back.Sources[figure] != source {
			t.Errorf("source of %s: %q, want %q", figure, back.Sources[figure], source)
		}
	}
	for txn := range tpcc.NumTransactions {
		got, want := back.Transactions.Of(txn), res.Transactions.Of(txn)
		if got.Count != want.Count || got.MeanMs != want.MeanMs || got.P50Ms != want.P50Ms || got.P90Ms != want.P90Ms ||
			got.P95Ms != want.P95Ms || got.P99Ms != want.P99Ms || got.MaxMs != want.MaxMs {
			t.Errorf("%s: %+v, want %+v", txn, got.Latencies, want.Latencies)
		}
	}
	if back.Config.Users != res.Config.Users || back.Config.Warehouses != res.Config.Warehouses || back.End.Sub(back.Start) != window.Round(1e6) ||
		back.Config.Mode != res.Config.Mode || len(back.Timeline) != len(res.Timeline) {
		t.Errorf("config %+v, window %v, %d seconds; want %+v, %v, %d", back.Config, back.End.Sub(back.Start), len(back.Timeline), res.Config, window, len(res.Timeline))
	}
}
