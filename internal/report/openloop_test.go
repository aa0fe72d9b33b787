package report

import (
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/driver"
)

// TestOpenLoopShown: a run that offered a rate gets a row of offered vs achieved,
// skipped and late counts and both latency views, and its throughput chart draws
// the arrivals and the skipped ones beside the completed; a closed-loop run gets
// neither.
func TestOpenLoopShown(t *testing.T) {
	srcs, err := Load([]string{fixtureRunA})
	if err != nil {
		t.Fatal(err)
	}
	run := srcs[0].Steps[0].Run
	if r, err := Build(srcs, Options{Now: fixedNow}); err != nil {
		t.Fatal(err)
	} else if s := sectionByID(r, "open-loop"); s != nil {
		t.Fatalf("a closed-loop run has a fixed-rate section: %+v", s)
	}
	run.Rate = &driver.RateResult{OfferedTPM: 60000, ArrivedTPM: 60120, AchievedTPM: 41200, Arrived: 30060, Skipped: 9400,
		SkippedShare: 0.3127, Late: 77, Backlog: 12, Lag: driver.Latencies{P99Ms: 480}, UsersBusy: 0.97}
	run.Transactions.NewOrder.P90Ms = 612.5
	run.Transactions.NewOrder.Service = &driver.Latencies{P90Ms: 3.25}
	for i := range run.Timeline {
		run.Timeline[i].OfferedTPM, run.Timeline[i].Skipped = 60000, 150
	}
	r, err := Build(srcs, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	s := sectionByID(r, "open-loop")
	if s == nil {
		t.Fatal("no fixed-rate section for a run that offered a rate")
	}
	row := strings.Join(s.Blocks[0].Table.Rows[0], " | ")
	for _, want := range []string{"60,000", "60,120", "41,200", "68.5", "9,400", "31.3", "77", "12", "612.50", "3.25", "480.00", "97"} {
		if !strings.Contains(row, want) {
			t.Errorf("fixed-rate row %q lacks %s", row, want)
		}
	}
	tl := sectionByID(r, "timeline")
	chart := string(tl.Blocks[0].Picker.Charts[0][0].Option)
	for _, want := range []string{"TPM offered (arrivals)", "arrivals skipped per second (latency limit)"} {
		if !strings.Contains(chart, want) {
			t.Errorf("the run's throughput chart lacks %q", want)
		}
	}
}

func sectionByID(r *Report, id string) *Section {
	for i := range r.Sections {
		if r.Sections[i].ID == id {
			return &r.Sections[i]
		}
	}
	return nil
}
