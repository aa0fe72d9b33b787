package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/study"
)

// Whether the points' timed windows were steady (driver.Result.Steadiness,
// docs/steadiness.md): a mean over a window whose rate drifted or swung is no figure
// to name a winner by.

// pointSteadiness is a point's steadiness as a finding quotes it: "steady", a run's label
// ("UNSTEADY (slope -38%/min)"), "2 of 3 runs UNSTEADY", "too short to judge";
// "-" when no run was judged.
func pointSteadiness(p *Point) string {
	var judged, short int
	var unsteady []*study.StepResult
	for _, st := range p.Steps {
		switch v := st.Run.Steadiness; {
		case v == nil || v.NotJudged:
			continue
		case v.Unsteady():
			unsteady = append(unsteady, st)
		case v.TooShort:
			short++
		}
		judged++
	}
	switch {
	case judged == 0:
		return "-"
	case len(unsteady) > 0 && len(p.Steps) == 1:
		return unsteady[0].Run.Steadiness.Label()
	case len(unsteady) == 1:
		return fmt.Sprintf("1 of %d runs %s", len(p.Steps), unsteady[0].Run.Steadiness.Label())
	case len(unsteady) > 1:
		return fmt.Sprintf("%d of %d runs UNSTEADY", len(unsteady), len(p.Steps))
	case short == judged:
		return "too short to judge"
	case short > 0:
		return fmt.Sprintf("steady (%d of %d runs too short to judge)", short, len(p.Steps))
	}
	return "steady"
}

// pointUnsteady tells whether a run of a point had an unsteady window.
func pointUnsteady(p *Point) bool {
	for _, st := range p.Steps {
		if st.Run.Steadiness.Unsteady() {
			return true
		}
	}
	return false
}

// unsteadyText is what a finding says of the named points whose windows were not
// steady ("nvme: UNSTEADY (slope -38%/min); sata: 2 of 3 runs UNSTEADY"); "" when
// every window was steady or too short to judge.
func unsteadyText(names []string, points []*Point) string {
	var parts []string
	for i, p := range points {
		if pointUnsteady(p) {
			parts = append(parts, names[i]+": "+pointSteadiness(p))
		}
	}
	return strings.Join(parts, "; ")
}

// windowSeconds is how long a run's timed window ran as planned, or longer when it
// ran until steady.
func windowSeconds(run *driver.Result) float64 {
	if run.Config.UntilSteadySeconds > 0 {
		return run.End.Sub(run.Start).Seconds()
	}
	return run.Config.DurationSeconds
}

// steadinessSubtitle is what a run's throughput chart says of its window: its
// verdict, and how a window run until steady ended.
func steadinessSubtitle(run *driver.Result) string {
	v := run.Steadiness
	if v == nil {
		return ""
	}
	s := "; window " + v.Label()
	ran := map[string]string{driver.EndedSteady: "run until steady: ", driver.EndedAtMax: "run until steady: its longest, "}[run.UntilSteadyEnded]
	if ran != "" {
		s += ", " + ran + strconv.FormatFloat(windowSeconds(run), 'f', 0, 64) + " s (shaded: the last " + strconv.Itoa(v.Seconds) + " s, judged)"
	}
	return s
}
