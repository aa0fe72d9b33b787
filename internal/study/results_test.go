package study

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/driver"
)

// results list names a step whose interruption left a partial run kept apart, with
// what it measured, and counts it; once the step is stored it is only stored.
func TestWriteListInterrupted(t *testing.T) {
	s := loadEveryKind(t)
	store, err := OpenStore(filepath.Join(t.TempDir(), "results"), s, []byte("study"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Unlock()
	steps := Plan(s)
	if err := store.writeJSON("plan.json", steps); err != nil {
		t.Fatal(err)
	}
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
