package study

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/steady"
)

// results list names a step whose interruption left a partial run kept apart, with
// what it measured, and counts it; once the step is stored it is only stored.
func TestWriteListInterrupted(t *testing.T) {
	store, steps := plannedStore(t)
	now := time.Now()
	run := &driver.Result{NOPMDB: 1234}
	if err := store.SaveStep(&StepResult{Step: steps[0], Ended: now, Run: run}); err != nil {
		t.Fatal(err)
	}
	if err := store.SaveInterrupted(&StepResult{Step: steps[1], Ended: now, Run: run}); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteList(&b, store); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	line := regexp.MustCompile(`(?m)^2/\d+\s+` + regexp.QuoteMeta(steps[1].ID) + `\s+interrupted \d\d:\d\d:\d\d\s+partial: NOPM 1234 .*$`)
	if !line.MatchString(out) || !strings.Contains(out, "1 of 29 steps stored") || !strings.Contains(out, "; 1 interrupted, kept apart") {
		t.Errorf("results list does not show the interrupted step:\n%s", out)
	}

	if err := store.SaveStep(&StepResult{Step: steps[1], Ended: now, Run: run}); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := WriteList(&b, store); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "interrupted") {
		t.Errorf("a step stored since its interruption is still listed as interrupted:\n%s", b.String())
	}
}

// A database TPM over a window under driver.CounterWindow is marked in a step's log
// line, results list and results show, as the report marks it; one over a longer
// window, or the client's count standing in, is not.
func TestShortWindowMarked(t *testing.T) {
	t.Parallel()
	start := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	run := func(window time.Duration, tpmSource string) *driver.Result {
		return &driver.Result{Start: start, End: start.Add(window), NOPMDB: 18729, TPMDB: 17196,
			Sources: map[string]string{"tpm_db": tpmSource}}
	}
	counter := "pg_stat_database xact_commit + xact_rollback of this database, delta over the timed window"
	short := run(2*time.Second, counter)
	if line := runLine(short); !strings.Contains(line, "NOPM 18729 (database), TPM 17196 (database) "+driver.ShortWindowMark) || driver.ShortWindowMark != "(window under 30 s: database TPM indicative)" {
		t.Errorf("a 2 s window's line %q is not marked", line)
	}
	clientTPM := run(2*time.Second, "the engine keeps no transaction counter (sqlite): the client's count, as tpm_client")
	for _, r := range []*driver.Result{run(driver.CounterWindow, counter), clientTPM} {
		if line := runLine(r); strings.Contains(line, "indicative") {
			t.Errorf("line %q is marked", line)
		}
	}
	// Each figure names its source: SQLite's TPM is the client's count.
	if line := runLine(clientTPM); !strings.Contains(line, "TPM 17196 (client count)") {
		t.Errorf("SQLite's line %q does not say its TPM is the client's count", line)
	}

	store, steps := plannedStore(t)
	step := &StepResult{Step: steps[0], Ended: start, Run: short}
	if err := store.SaveStep(step); err != nil {
		t.Fatal(err)
	}
	var list, show strings.Builder
	if err := WriteList(&list, store); err != nil {
		t.Fatal(err)
	}
	if err := WriteStep(&show, step); err != nil {
		t.Fatal(err)
	}
	for what, out := range map[string]string{"results list": list.String(), "results show": show.String()} {
		if !strings.Contains(out, driver.ShortWindowMark) {
			t.Errorf("%s does not mark the 2 s window's database TPM:\n%s", what, out)
		}
	}
}

// A step's line marks an unsteady window, and says how long a window run until
// steady ran and how it ended; a steady window of its duration, or one too short to
// judge, adds nothing.
func TestUnsteadyWindowMarked(t *testing.T) {
	start := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	counter := "pg_stat_database xact_commit + xact_rollback of this database, delta over the timed window"
	run := func(v steady.Verdict, window time.Duration, ended string) *driver.Result {
		return &driver.Result{Start: start, End: start.Add(window), NOPMDB: 18729, TPMDB: 17196, Steadiness: &v, UntilSteadyEnded: ended,
			Sources: map[string]string{"tpm_db": counter}}
	}
	unsteady := steady.Verdict{SlopePctPerMin: -38, SlopeErrPct: 1, CVPct: 21, Seconds: 60}
	for _, c := range []struct {
		run  *driver.Result
		want string
	}{
		{run(unsteady, time.Minute, ""), ", window UNSTEADY (slope -38%/min)"},
		{run(steady.Verdict{Steady: true, Seconds: 60}, 95*time.Second, driver.EndedSteady), ", window ran 95 s until steady"},
		{run(unsteady, 10*time.Minute, driver.EndedAtMax), ", window ran its longest, 600 s, UNSTEADY (slope -38%/min)"},
		{run(steady.Verdict{Steady: true, Seconds: 60}, time.Minute, ""), "(client)"},
		{run(steady.Verdict{TooShort: true, Seconds: 10}, 10*time.Second, ""), "(client)"},
	} {
		if line := runLine(c.run); !strings.HasSuffix(line, c.want) {
			t.Errorf("line %q, want it to end %q", line, c.want)
		}
	}
}

// The export's columns are documented, every one of them: a column added to the code
// and not to docs/study.md fails here.
func TestExportColumnsDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "study.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "### CSV columns")
	if !ok {
		t.Fatal("docs/study.md has no CSV columns section")
	}
	for _, c := range csvColumns {
		if !strings.Contains(section, "`"+c+"`") {
			t.Errorf("column %s is not in docs/study.md's CSV columns", c)
		}
	}
}

// plannedStore is a results store of the study of every kind with its plan stored
// and no step yet, unlocked when the test ends.
func plannedStore(t *testing.T) (*Store, []Step) {
	t.Helper()
	s := loadEveryKind(t)
	store, err := OpenStore(filepath.Join(t.TempDir(), "results"), s, []byte("study"), false, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Unlock)
	steps := Plan(s)
	if err := store.writeJSON("plan.json", steps); err != nil {
		t.Fatal(err)
	}
	return store, steps
}
