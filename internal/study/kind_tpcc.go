package study

// What the kinds that run TPC-C share: the user sweep, the ramp and the timed window,
// the repeats, and how their steps read in the plan.

import (
	"fmt"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/driver"
)

// sweepKnobs are the keys of a user sweep.
var sweepKnobs = []string{"users", "ramp", "duration", "repeats", "until_steady", "rate"}

// sweep checks a TPC-C experiment's users, window, repeats and rate (whose pacing
// against workload.keying openLoop checks).
func (c *checker) sweep(i int, e *Experiment) {
	p := func(key string) string { return fmt.Sprintf("experiments[%d].%s", i, key) }
	if len(e.Users.Values) == 0 {
		c.errf(p("users"), "%s has no users", "add users: e.g. [1, 2, 4, 8] or fibonacci: 89", label(e))
	}
	c.window(i, e)
	c.untilSteady(i, e)
	if !c.doc.Has(p("repeats")) {
		e.Repeats = DefaultRepeats
	} else if e.Repeats < 1 {
		c.errf(p("repeats"), "repeats %d is too few", "give 1 or more; 3 gives the report a spread", e.Repeats)
	}
	if err := driver.CheckRate(e.Rate); err != nil {
		c.refuse(p("rate"), err)
	}
}

// window fills in and checks a TPC-C experiment's ramp and timed window.
func (c *checker) window(i int, e *Experiment) {
	p := func(key string) string { return fmt.Sprintf("experiments[%d].%s", i, key) }
	if !c.doc.Has(p("ramp")) {
		e.Ramp = Duration{Duration: DefaultRamp}
	}
	if !c.doc.Has(p("duration")) {
		e.Duration = Duration{Duration: DefaultDuration}
	} else if err := driver.CheckDuration(e.Duration.Duration); err != nil {
		c.refuse(p("duration"), err)
	}
	if err := driver.CheckRamp(e.Ramp.Duration); err != nil {
		c.refuse(p("ramp"), err)
	}
}

// untilSteady checks an experiment's until_steady against its duration.
func (c *checker) untilSteady(i int, e *Experiment) {
	p := fmt.Sprintf("experiments[%d].until_steady", i)
	if !c.doc.Has(p) {
		return
	}
	if e.UntilSteady == nil || !c.doc.Has(p+".max") {
		c.errf(p, "%s has no max", "give the longest the timed window may run, e.g. until_steady: {max: 10m}", p)
		return
	}
	if err := driver.CheckUntilSteady(e.UntilSteady.Max.Duration, e.Duration.Duration); err != nil {
		c.refuse(p+".max", err, place{"until_steady", p + ".max"})
	}
}

// sweepSteps are one user sweep on a target, whole once per repeat.
func sweepSteps(steps []Step, s *Study, e *Experiment, t *Target, base Step, id string) []Step {
	for rep := 1; rep <= e.Repeats; rep++ {
		for _, users := range e.Users.Values {
			b := base
			b.ID = fmt.Sprintf("%s/users=%d/rep=%d", id, users, rep)
			b.Users, b.Repeat = users, rep
			b.Ramp, b.Duration, b.Rate = e.Ramp.Duration, e.Duration.Duration, e.Rate
			if e.UntilSteady != nil {
				b.UntilSteady = e.UntilSteady.Max.Duration
			}
			b.Estimate = b.Ramp + b.window() + stepRestore(s, t)
			steps = append(steps, b)
		}
	}
	return steps
}

// window is the longest a TPC-C step's timed window may run: its duration, or the
// max of a window run until steady.
func (st Step) window() time.Duration { return max(st.Duration, st.UntilSteady) }

// describeTPCC is a TPC-C step's line in the plan, after what its kind adds.
func describeTPCC(st Step, parts ...string) string {
	window := roughDuration(st.Duration)
	if st.UntilSteady > 0 {
		window += " until steady, at most " + roughDuration(st.UntilSteady)
	}
	parts = append(parts, fmt.Sprintf("users %d", st.Users), fmt.Sprintf("rep %d", st.Repeat))
	if st.Rate > 0 {
		parts = append(parts, "rate "+rateText(st.Rate))
	}
	parts = append(parts, "ramp "+roughDuration(st.Ramp), window)
	return strings.Join(parts, "  ")
}

// rateText is an offered rate as the plan and the log write it: "30000 TPM".
func rateText(tpm float64) string { return fmt.Sprintf("%.0f TPM", tpm) }
