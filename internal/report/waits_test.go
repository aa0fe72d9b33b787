package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/procrole"
)

// waitsReport is the fixture run with a wait profile: 4 users, from second 20 on
// two of them waiting on locks instead of running.
func waitsReport(t *testing.T) *Report {
	t.Helper()
	srcs, err := Load([]string{fixtureRunA})
	if err != nil {
		t.Fatal(err)
	}
	run := srcs[0].Steps[0].Run
	run.Config.DurationSeconds = 30
	sys := run.System
	sys.Samples = nil
	for sec := 1; sec <= 30; sec++ {
		seconds := map[string]float64{metrics.WaitCPU: 3, metrics.WaitWAL: 1}
		verdict := "cpu (database host)"
		if sec > 20 {
			seconds = map[string]float64{metrics.WaitCPU: 1, metrics.WaitWAL: 1, metrics.WaitLock: 2}
			verdict = "locks"
		}
		sys.Samples = append(sys.Samples, metrics.Sample{T: float64(sec), Seconds: 1, Bottleneck: verdict,
			Disks: []metrics.Disk{{Device: "sda", Roles: []string{"data"}, ReadIOPS: 100, WriteIOPS: 50, ReadMBps: 0.4, WriteMBps: 1, ReadAwaitMs: 0.2, WriteAwaitMs: 0.5}},
			Waits: &metrics.Waits{Source: "pg_stat_activity sampled at 10 Hz",
				Roles: []metrics.RoleWaits{{Role: procrole.Clients, Seconds: seconds, IntervalSeconds: 1}}}})
	}
	sys.Summary.Waits = &metrics.Waits{Source: "pg_stat_activity sampled at 10 Hz",
		Roles: []metrics.RoleWaits{{Role: procrole.Clients, Seconds: map[string]float64{metrics.WaitCPU: 70, metrics.WaitWAL: 30, metrics.WaitLock: 20}, IntervalSeconds: 30}}}
	r, err := Build(srcs, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestWaitsInTheReport: the run's timeline has the stacked wait classes beside its
// TPM, the locks showing from second 20 on, and its user step's table the shares
// over the window.
func TestWaitsInTheReport(t *testing.T) {
	r := waitsReport(t)
	var chart *Chart
	var table *Table
	for _, s := range r.Sections {
		for _, b := range s.Blocks {
			if b.Picker != nil && s.ID == "timeline" {
				charts := b.Picker.Charts[0]
				chart = &charts[len(charts)-1]
			}
			if b.Table != nil && strings.HasPrefix(s.ID, "tpcc") && b.Table.Title == "Where the clients' time went per user step" {
				table = b.Table
			}
		}
	}
	if chart == nil || chart.Title != "Where the database's time went" {
		t.Fatalf("no wait chart in the run's timeline: %+v", chart)
	}
	var o struct {
		Series []struct {
			Name       string                      `json:"name"`
			Stack      string                      `json:"stack"`
			YAxisIndex int                         `json:"yAxisIndex"`
			Data       []struct{ Value []float64 } `json:"data"`
			MarkArea   struct {
				Data [][]struct {
					Name  string `json:"name"`
					XAxis any    `json:"xAxis"`
				} `json:"data"`
			} `json:"markArea"`
		} `json:"series"`
	}
	if err := json.Unmarshal([]byte(chart.Option), &o); err != nil {
		t.Fatal(err)
	}
	at := func(name string, sec float64) float64 {
		for _, s := range o.Series {
			for _, d := range s.Data {
				if s.Name == name && d.Value[0] == sec {
					return d.Value[1]
				}
			}
		}
		return -1
	}
	// The verdict per interval, as spans over the chart: the CPU's to second 20, the
	// locks' after.
	var spans []string
	for _, s := range o.Series {
		for _, pair := range s.MarkArea.Data {
			if len(pair) == 2 {
				spans = append(spans, fmt.Sprintf("%s %v-%v", pair[0].Name, pair[0].XAxis, pair[1].XAxis))
			}
		}
	}
	if want := []string{"cpu (database host) 0-20", "locks 20-30"}; !slices.Equal(spans, want) {
		t.Errorf("the verdict's spans %q, want %q", spans, want)
	}
	if at("cpu", 10) != 3 || at("lock", 10) != 0 || at("cpu", 25) != 1 || at("lock", 25) != 2 || at("wal", 25) != 1 {
		t.Errorf("active sessions by class at 10 s: cpu %g lock %g; at 25 s: cpu %g lock %g wal %g; want 3 0, 1 2 1",
			at("cpu", 10), at("lock", 10), at("cpu", 25), at("lock", 25), at("wal", 25))
	}
	var names []string
	for _, s := range o.Series {
		names = append(names, s.Name)
		if s.Name != "TPM (client)" && s.Stack != "waits" {
			t.Errorf("class %s is not stacked", s.Name)
		}
		if s.Name == "TPM (client)" && (s.YAxisIndex != 1 || len(s.Data) == 0) {
			t.Errorf("TPM on axis %d with %d points, want the right-hand axis and the run's seconds", s.YAxisIndex, len(s.Data))
		}
	}
	if !slices.Equal(names, []string{"cpu", "wal", "lock", "TPM (client)"}) {
		t.Errorf("series %v: want the classes seen, in their order, and TPM", names)
	}
	if table == nil {
		t.Fatal("no wait table in the user-sweep section")
	}
	if want := []string{"4.0", "58", "0", "25", "17", "0", "0", "0"}; len(table.Rows) != 1 || !slices.Equal(table.Rows[0][2:], want) {
		t.Errorf("wait table %v %v, want a row ending %v", table.Columns, table.Rows, want)
	}
}

// TestWaitsLayoutInChromium: the report with a wait chart draws every chart.
func TestWaitsLayoutInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	checkLayoutInChromium(t, waitsReport(t), 1200)
}
