package study

import (
	"context"
	"fmt"
)

// CPUSweep is an experiment kind: a user sweep on a managed instance pinned to each
// CPU set.
const CPUSweep = "cpu-sweep"

type cpuSweep struct{ onManaged }

func (cpuSweep) name() string    { return CPUSweep }
func (cpuSweep) knobs() []string { return append(sweepKnobs[:len(sweepKnobs):len(sweepKnobs)], "cpus") }

func (cpuSweep) check(c *checker, _ *Study, i int, e *Experiment) {
	c.sweep(i, e)
	p := func(key string) string { return fmt.Sprintf("experiments[%d].%s", i, key) }
	if len(e.CPUs) == 0 {
		c.errf(p("cpus"), "%s has no cpu sets", "add cpus: e.g. [0-3, 0-1, 0]", label(e))
	}
	distinct(c, p("cpus"), "cpus", e.CPUs, func(set string) string { return set }, c.cpus)
}

func (cpuSweep) plan(steps []Step, s *Study, e *Experiment) []Step {
	return eachTarget(steps, s, e, func(steps []Step, t *Target) []Step {
		base, id := stepBase(e, t)
		for _, set := range e.CPUs {
			b := base
			b.CPUs = set
			steps = sweepSteps(steps, s, e, t, b, id+"/cpus="+set)
		}
		return steps
	})
}

func (cpuSweep) describe(st Step) string { return describeTPCC(st, "cpus "+st.CPUs) }

func (cpuSweep) run(ctx context.Context, r *runner, step Step, res *StepResult) error {
	return r.onTarget(ctx, step, res, r.tpcc)
}
