package hammerdb

import (
	"encoding/json"
	"maps"
	"os"
	"testing"

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

	back, err := Read(b)
	if err != nil {
		t.Fatal(err)
	}
	if back.NOPMDB != res.NOPMDB || back.TPMDB != res.TPMDB || back.NOPMClient != res.NOPMClient || back.TPMClient != res.TPMClient {
		t.Errorf("throughput %v %v %v %v, want %v %v %v %v", back.NOPMDB, back.TPMDB, back.NOPMClient, back.TPMClient, res.NOPMDB, res.TPMDB, res.NOPMClient, res.TPMClient)
	}
	if !maps.Equal(back.Sources, res.Sources) {
		t.Errorf("sources %v, want %v", back.Sources, res.Sources)
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
