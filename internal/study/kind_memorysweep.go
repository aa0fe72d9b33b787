package study

import (
	"context"
	"fmt"

	"github.com/storbench/storbench/internal/bytesize"
)

// MemorySweep is an experiment kind: a user sweep on a managed instance of each
// memory size.
const MemorySweep = "memory-sweep"

type memorySweep struct{ onManaged }

func (memorySweep) name() string { return MemorySweep }
func (memorySweep) knobs() []string {
	return append(sweepKnobs[:len(sweepKnobs):len(sweepKnobs)], "memory")
}

func (memorySweep) check(c *checker, s *Study, i int, e *Experiment) {
	c.sweep(i, e)
	p := func(key string) string { return fmt.Sprintf("experiments[%d].%s", i, key) }
	if len(e.Memory) == 0 {
		c.errf(p("memory"), "%s has no memory values", "add memory: e.g. [8GB, 2GB]", label(e))
	}
	distinct(c, p("memory"), "memory", e.Memory, func(m Size) string { return bytesize.Format(m.Bytes) },
		func(ip string, m Size) { c.memory(ip, managedEngineNames(s, e), m.Bytes) })
}

func (memorySweep) plan(steps []Step, s *Study, e *Experiment) []Step {
	return eachTarget(steps, s, e, func(steps []Step, t *Target) []Step {
		base, id := stepBase(e, t)
		for _, m := range e.Memory {
			b := base
			b.Memory = m.Bytes
			steps = sweepSteps(steps, s, e, t, b, id+"/memory="+bytesize.Format(m.Bytes))
		}
		return steps
	})
}

func (memorySweep) describe(st Step) string {
	return describeTPCC(st, "memory "+bytesize.Format(st.Memory))
}

func (memorySweep) run(ctx context.Context, r *runner, step Step, res *StepResult) error {
	return r.onTarget(ctx, step, res, r.tpcc)
}
