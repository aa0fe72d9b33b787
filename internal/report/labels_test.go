package report

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// singleRun is a run given as a JSON file (storbench run --json), seen as a source
// of one step, with the figures' recorded sources.
func singleRun(label string, nopm float64, window time.Duration, tpmSource string) *Source {
	var x fixture
	x.run(kindRun, "", label, label, 1, 1, figures{nopm: nopm, window: window, tpmSource: tpmSource}, nil)
	src := x.source()
	src.Label, src.Path = label, label+".json"
	return src
}

// TestRunsIntroLabelsEachFigure: the trial's two 3 s SQLite runs. Their NOPM is
// sum(d_next_o_id), a database counter, and only their TPM is the client's
// count: the Runs section says so figure by figure.
func TestRunsIntroLabelsEachFigure(t *testing.T) {
	series := sweeps([]*Source{singleRun("run-1", 1000, 3*time.Second, sqliteTPMSource), singleRun("run-2", 900, 3*time.Second, sqliteTPMSource)})
	intro := sweepSections(series)[0].Intro[0]
	if !strings.Contains(intro, "NOPM: database counter; TPM: client count") {
		t.Errorf("the Runs section's intro does not label NOPM and TPM each by its own source:\n%s", intro)
	}
	pg := sweeps([]*Source{singleRun("run-1", 1000, time.Minute, pgTPMSource)})
	if intro := sweepSections(pg)[0].Intro[0]; !strings.Contains(intro, "NOPM and TPM: database counters") {
		t.Errorf("a PostgreSQL run's intro does not say both figures are database counters:\n%s", intro)
	}
}

// TestCompareLabelsFromSources: compare labels and marks the throughput figures
// from the results' recorded sources as the report's per-step table does: SQLite's
// TPM is the client's count (‡), a PostgreSQL TPM over 5 s is marked †, and NOPM,
// read from the data, is a database counter, unmarked.
func TestCompareLabelsFromSources(t *testing.T) {
	for _, c := range []struct {
		name, tpmSource, note, mark, explained string
		window                                 time.Duration
	}{
		{"sqlite", sqliteTPMSource, "NOPM: database counter; TPM: client count", markClient, markClient + " client count", 3 * time.Second},
		{"postgres, 5 s", pgTPMSource, "NOPM and TPM: database counters", markShortWindow, markShortWindow + " timed window under 30 s", 5 * time.Second},
	} {
		a, b := singleRun("run-1", 1000, c.window, c.tpmSource), singleRun("run-2", 900, c.window, c.tpmSource)
		tables, err := Compare(a, b)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(tables, func(t *Table) bool { return t.Title == "Per user step" })
		if i < 0 {
			t.Fatalf("%s: no per-step table", c.name)
		}
		tab := tables[i]
		notes := strings.Join(tab.Notes, "\n")
		if !strings.HasPrefix(notes, c.note) || !strings.Contains(notes, c.explained) {
			t.Errorf("%s: the comparison's notes do not say %q and explain %s:\n%s", c.name, c.note, c.mark, notes)
		}
		row := tab.Rows[0]
		nopmA, nopmB, tpmA, tpmB := row[slices.Index(tab.Columns, "NOPM A")], row[slices.Index(tab.Columns, "NOPM B")],
			row[slices.Index(tab.Columns, "TPM A")], row[slices.Index(tab.Columns, "TPM B")]
		if !strings.HasSuffix(tpmA, " "+c.mark) || !strings.HasSuffix(tpmB, " "+c.mark) {
			t.Errorf("%s: TPM cells %q, %q are not marked %s", c.name, tpmA, tpmB, c.mark)
		}
		if strings.ContainsAny(nopmA+nopmB, markClient+markShortWindow) {
			t.Errorf("%s: NOPM cells %q, %q are marked: NOPM is read from the data", c.name, nopmA, nopmB)
		}
	}
}

// TestReportAndCompareAgree: one function labels both: the report's per-step
// table and compare mark the same runs' figures alike.
func TestReportAndCompareAgree(t *testing.T) {
	a, b := singleRun("run-1", 1000, 3*time.Second, sqliteTPMSource), singleRun("run-2", 900, 3*time.Second, sqliteTPMSource)
	step := stepTable(sweeps([]*Source{a, b}))
	tables, err := Compare(a, b)
	if err != nil {
		t.Fatal(err)
	}
	cmp := tables[slices.IndexFunc(tables, func(t *Table) bool { return t.Title == "Per user step" })]
	if got, want := cmp.Rows[0][slices.Index(cmp.Columns, "TPM A")], step.Rows[0][slices.Index(step.Columns, "TPM (database)")]; got != want {
		t.Errorf("compare's TPM A %q, the report's %q", got, want)
	}
	if !slices.Contains(cmp.Notes, step.Notes[1]) {
		t.Errorf("compare does not explain the mark as the report does: %q not in %q", step.Notes[1], cmp.Notes)
	}
}
