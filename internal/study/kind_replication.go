package study

import "context"

// Replication is an experiment kind: a user sweep on a managed target standalone,
// then with its streaming standby.
const Replication = "replication"

type replication struct{}

func (replication) name() string    { return Replication }
func (replication) knobs() []string { return sweepKnobs }

func (replication) runsOn(t *Target) (string, string) {
	if !t.manages() {
		return "it is external, and storbench only controls the servers it manages", ""
	}
	if t.Replica == nil {
		return "it has no replica", "give the target a replica: with a path and sync: true, or remove it from targets:"
	}
	return "", ""
}

func (replication) needs() string { return "managed with a replica" }

func (replication) check(c *checker, _ *Study, i int, e *Experiment) { c.sweep(i, e) }

func (replication) plan(steps []Step, s *Study, e *Experiment) []Step {
	return eachTarget(steps, s, e, func(steps []Step, t *Target) []Step {
		base, id := stepBase(e, t)
		steps = sweepSteps(steps, s, e, t, base, id+"/standalone")
		b := base
		b.WithReplica = true
		return sweepSteps(steps, s, e, t, b, id+"/replica")
	})
}

func (replication) describe(st Step) string {
	if st.WithReplica {
		return describeTPCC(st, "with replica")
	}
	return describeTPCC(st, "standalone")
}

func (replication) run(ctx context.Context, r *runner, step Step, res *StepResult) error {
	return r.onTarget(ctx, step, res, r.tpcc)
}
