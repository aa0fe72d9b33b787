package study

import (
	"context"
	"fmt"
)

// IOSweep is an experiment kind: a user sweep on a managed instance under each I/O
// limit, to ask what the database would do on slower storage.
const IOSweep = "io-sweep"

type ioSweep struct{ onManaged }

func (ioSweep) name() string { return IOSweep }
func (ioSweep) knobs() []string {
	return append(sweepKnobs[:len(sweepKnobs):len(sweepKnobs)], "io_limits")
}

func (ioSweep) check(c *checker, _ *Study, i int, e *Experiment) {
	c.sweep(i, e)
	p := fmt.Sprintf("experiments[%d].io_limits", i)
	if len(e.IOLimits) == 0 {
		c.errf(p, "%s has no I/O limits", "add io_limits: e.g. [aws-gp3, azure-p10, {riops: 500, wiops: 500}]", label(e))
	}
	distinct(c, p, "I/O limit", e.IOLimits, func(l IOLimit) string { return l.Label() }, func(string, IOLimit) {})
}

func (ioSweep) plan(steps []Step, s *Study, e *Experiment) []Step {
	return eachTarget(steps, s, e, func(steps []Step, t *Target) []Step {
		base, id := stepBase(e, t)
		for _, l := range e.IOLimits {
			b := base
			limit := l.IOLimit
			b.IOLimit = &limit
			steps = sweepSteps(steps, s, e, t, b, id+"/io="+l.Label())
		}
		return steps
	})
}

func (ioSweep) describe(st Step) string { return describeTPCC(st, "io "+st.IOLimit.String()) }

func (ioSweep) run(ctx context.Context, r *runner, step Step, res *StepResult) error {
	return r.onTarget(ctx, step, res, r.tpcc)
}
