package report

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/procrole"
	"github.com/storbench/storbench/internal/study"
)

// TestWhatWroteAtSecond40 gives a run a checkpoint at second 40: the run's role
// chart must show the checkpointer's writes at 40 with a checkpoint marked there,
// and the user step's role table must give the checkpointer's share of the disk.
func TestWhatWroteAtSecond40(t *testing.T) {
	srcs, err := Load([]string{fixtureRunA})
	if err != nil {
		t.Fatal(err)
	}
	sys := srcs[0].Steps[0].Run.System
	srcs[0].Steps[0].Run.Config.DurationSeconds = 45 // the charts stop at the window's end
	sys.Samples = nil
	for sec := 1; sec <= 45; sec++ {
		s := metrics.Sample{T: float64(sec), Seconds: 1, Database: &metrics.Database{},
			Disks: []metrics.Disk{{Device: "sda", WriteMBps: 5}},
			ProcessIO: []metrics.RoleIO{{Role: procrole.Clients, Source: "block", ReadMBps: ptr(2.0), WriteMBps: ptr(1.0)},
				{Role: procrole.Checkpointer, Source: "block", ReadMBps: ptr(0.0), WriteMBps: ptr(0.0)}}}
		if sec == 40 {
			s.ProcessIO[1].WriteMBps, s.Database.Checkpoints = ptr(80.0), 1
		}
		sys.Samples = append(sys.Samples, s)
	}
	pct := 62.0
	sys.Summary.ProcessIO = []metrics.RoleTotal{{Role: procrole.Clients, Source: "block", ReadMBps: 2, WriteMBps: ptr(1.0)},
		{Role: procrole.Checkpointer, Source: "block", WriteMBps: ptr(1.8), WritePctOfDisks: &pct}}
	r, err := Build(srcs, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}

	var chart *Chart
	var table *Table
	for _, s := range r.Sections {
		for _, b := range s.Blocks {
			if b.Picker != nil && s.ID == "timeline" {
				chart = &b.Picker.Charts[0][3]
			}
			if b.Table != nil && strings.HasPrefix(s.ID, "tpcc") && b.Table.Title == "I/O by process role per user step" {
				table = b.Table
			}
		}
	}
	if chart == nil || chart.Title != "Writes by process role" {
		t.Fatalf("no role chart in the run's timeline: %+v", chart)
	}
	var o struct {
		Series []struct {
			Name     string                      `json:"name"`
			Stack    string                      `json:"stack"`
			Data     []struct{ Value []float64 } `json:"data"`
			MarkLine struct {
				Data []struct {
					XAxis float64 `json:"xAxis"`
				} `json:"data"`
			} `json:"markLine"`
		} `json:"series"`
	}
	if err := json.Unmarshal([]byte(chart.Option), &o); err != nil {
		t.Fatal(err)
	}
	at40 := map[string]float64{}
	var marks []float64
	for _, s := range o.Series {
		for _, d := range s.Data {
			if d.Value[0] == 40 {
				at40[s.Name] = d.Value[1]
			}
		}
		for _, m := range s.MarkLine.Data {
			marks = append(marks, m.XAxis)
		}
	}
	if at40[procrole.Checkpointer] != 80 || at40[procrole.Clients] != 1 || at40["disks' writes (diskstats)"] != 5 {
		t.Errorf("writes at second 40: %v, want checkpointer 80, client_backends 1, disks 5", at40)
	}
	if !slices.Equal(marks, []float64{40}) {
		t.Errorf("checkpoints marked at %v, want [40]", marks)
	}
	if table == nil {
		t.Fatal("no role table in the user-sweep section")
	}
	if !slices.ContainsFunc(table.Rows, func(r []string) bool { return r[2] == procrole.Checkpointer && r[5] == "1.80" && r[6] == "62" }) {
		t.Errorf("role table rows %v lack the checkpointer's 1.80 MB/s written, 62%% of the disk's", table.Rows)
	}
}

// TestRoleWritesOfProcIO: a result stored before the block layer counted the roles'
// writes holds /proc/PID/io write_bytes (a trial's quick study: the client backends
// at 178.61 MB/s, 159% of what the disk wrote; on Linux 6.18 up to 9x): the table
// shows its reads and no writes, and the chart no writes at all.
func TestRoleWritesOfProcIO(t *testing.T) {
	var x fixture
	x.run(study.UserSweep, "sweep", "quick", "quick/sweep", 1, 1, figures{nopm: 1000, await: 0.2}, nil)
	read, write := 92.0, 159.0
	sys := x.steps[0].Run.System
	sys.Summary.ProcessIO = []metrics.RoleTotal{{Role: procrole.Clients, ReadMBps: 14.16, WriteMBps: ptr(178.61),
		ReadPctOfDisks: &read, WritePctOfDisks: &write}}
	sys.Samples = []metrics.Sample{{T: 1, Seconds: 1, ProcessIO: []metrics.RoleIO{{Role: procrole.Clients, ReadMBps: ptr(14.16), WriteMBps: ptr(178.61)}}}}
	table := sweepRoleTable(sweeps([]*Source{x.source()}))
	if table == nil || len(table.Rows) != 1 {
		t.Fatalf("role table %+v, want the client backends' row", table)
	}
	row := table.Rows[0]
	if slices.Contains(row, "178.61") || slices.Contains(row, "159") {
		t.Errorf("row %v shows /proc/PID/io's write_bytes as the role's writes", row)
	}
	if header := table.Columns[slices.Index(row, "92")]; header != "% of disk reads" {
		t.Errorf("the reads' share shown under %q", header)
	}
	if c := roleChart(sys); strings.Contains(string(c.Option), "178.61") {
		t.Errorf("the role chart shows /proc/PID/io's write_bytes: %s", c.Option)
	}
}
