package study

import "context"

// UserSweep is an experiment kind: TPC-C at each user count, on any target.
const UserSweep = "user-sweep"

type userSweep struct{ onAny }

func (userSweep) name() string    { return UserSweep }
func (userSweep) knobs() []string { return sweepKnobs }

func (userSweep) check(c *checker, _ *Study, i int, e *Experiment) { c.sweep(i, e) }

func (userSweep) plan(steps []Step, s *Study, e *Experiment) []Step {
	return eachTarget(steps, s, e, func(steps []Step, t *Target) []Step {
		base, id := stepBase(e, t)
		return sweepSteps(steps, s, e, t, base, id)
	})
}

func (userSweep) describe(st Step) string { return describeTPCC(st) }

func (userSweep) run(ctx context.Context, r *runner, step Step, res *StepResult) error {
	return r.onTarget(ctx, step, res, r.tpcc)
}
