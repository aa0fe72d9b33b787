package study

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// kind is one kind of experiment, each in a file of its own (kind_*.go) and listed
// in experimentKinds: the keys it reads, the targets it can run on, how its
// experiment is checked and planned, and how one of its steps runs.
type kind interface {
	name() string
	// knobs are the experiment keys the kind reads; a key of another kind is most
	// likely a misplaced line, and ignoring it would silently run something else.
	knobs() []string
	// runsOn says why the kind cannot run on target t, and the fix when it is not
	// "remove it from targets:" ("" when it can run there). An experiment that
	// names no targets runs on every target it can, unless the kind is a chooser.
	runsOn(t *Target) (why, fix string)
	// needs says what the targets it runs on are ("managed"), for a study without one.
	needs() string
	// check fills in the experiment's defaults and checks its settings, once its
	// targets are checked.
	check(c *checker, s *Study, i int, e *Experiment)
	// plan appends the experiment's steps.
	plan(steps []Step, s *Study, e *Experiment) []Step
	// describe says what one of its steps does, in the plan.
	describe(st Step) string
	// run runs one of its steps.
	run(ctx context.Context, r *runner, step Step, res *StepResult) error
}

// chooser is a kind that, when an experiment names no targets, runs on fewer targets
// than it can run on.
type chooser interface {
	byDefault(t *Target) bool
}

// preflighter is a kind that needs something of this machine, checked before a study
// with a step of that kind starts.
type preflighter interface {
	preflight() error
}

// planNoter is a kind that says in the plan's notes what its steps on target t
// measure that their figures alone do not ("" when nothing); results is the results
// store's directory.
type planNoter interface {
	planNote(t Target, results string) string
}

// experimentKinds are the kinds of experiment, in the order messages list them.
var experimentKinds = []kind{userSweep{}, memorySweep{}, cpuSweep{}, ioSweep{}, storageProfiles{}, backupRestore{}, replication{}, consolidation{}, capacity{}}

// kindNamed is the kind of that name; nil when there is none.
func kindNamed(name string) kind {
	if i := slices.IndexFunc(experimentKinds, func(k kind) bool { return k.name() == name }); i >= 0 {
		return experimentKinds[i]
	}
	return nil
}

func kindNames() []string {
	var out []string
	for _, k := range experimentKinds {
		out = append(out, k.name())
	}
	return out
}

// allKnobs are the keys of every kind, in a fixed order.
var allKnobs = func() []string {
	var all []string
	for _, kind := range experimentKinds {
		for _, k := range kind.knobs() {
			if !slices.Contains(all, k) {
				all = append(all, k)
			}
		}
	}
	return all
}()

func (c *checker) experiment(s *Study, i int, names map[string]int) {
	e := &s.Experiments[i]
	p := func(key string) string { return fmt.Sprintf("experiments[%d].%s", i, key) }
	if !c.doc.Has(p("kind")) {
		c.errf(p("kind"), "experiment %d has no kind", "add kind: one of %s", i+1, strings.Join(kindNames(), ", "))
		return
	}
	k := kindNamed(e.Kind)
	if k == nil {
		c.errf(p("kind"), "experiment kind %q is unknown", "use one of %s", e.Kind, strings.Join(kindNames(), ", "))
		return
	}

	// The kind names an experiment by default; a second one of the same kind needs a
	// name of its own, as step IDs hold it.
	if !c.doc.Has(p("name")) {
		e.Name = e.Kind
	}
	c.uniqueName(p("name"), "experiment", e.Name, names, "name each experiment, e.g. name: sweep-long")

	for _, key := range allKnobs {
		if c.doc.Has(p(key)) && !slices.Contains(k.knobs(), key) {
			c.errf(p(key), "%s does not apply to a %s experiment", "it takes %s; remove the line or move it to an experiment of the kind that uses it", key, e.Kind, strings.Join(k.knobs(), ", "))
		}
	}

	c.experimentTargets(s, i, k)
	k.check(c, s, i, e)
}

// experimentTargets checks the targets an experiment names, or, when it names none,
// that its kind applies to at least one.
func (c *checker) experimentTargets(s *Study, i int, k kind) {
	e := &s.Experiments[i]
	p := fmt.Sprintf("experiments[%d].targets", i)
	seen := map[string]int{}
	for j, name := range e.Targets {
		ip := fmt.Sprintf("%s[%d]", p, j)
		if first, dup := seen[name]; dup {
			c.errf(ip, "target %s is listed twice", "the first is at line %d", name, first)
			continue
		}
		seen[name] = c.doc.Line(ip)
		t := slices.IndexFunc(s.Targets, func(t Target) bool { return t.Name == name })
		if t < 0 {
			c.errf(ip, "%s names target %q, which the study does not have", "use one of the names under targets: %s", label(e), name, strings.Join(targetNames(s), ", "))
			continue
		}
		if why, fix := k.runsOn(&s.Targets[t]); why != "" {
			if fix == "" {
				fix = "remove it from targets:"
			}
			c.errf(ip, "%s cannot run on target %s: %s", fix, e.Kind, name, why)
		}
	}
	if len(e.Targets) == 0 && len(s.Targets) > 0 && len(experimentTargets(s, e)) == 0 {
		c.errf(fmt.Sprintf("experiments[%d].kind", i), "%s has no target to run on", "it runs on targets that are %s, and the study has none", label(e), k.needs())
	}
}

// experimentTargets are the targets an experiment runs on: those it names, in the
// order it names them, or else every target its kind runs on by default, in file
// order.
func experimentTargets(s *Study, e *Experiment) []*Target {
	var out []*Target
	if len(e.Targets) > 0 {
		for _, name := range e.Targets {
			if k := slices.IndexFunc(s.Targets, func(t Target) bool { return t.Name == name }); k >= 0 && !slices.Contains(out, &s.Targets[k]) {
				out = append(out, &s.Targets[k])
			}
		}
		return out
	}
	k := kindNamed(e.Kind)
	for i := range s.Targets {
		t := &s.Targets[i]
		if k == nil { // refused with the experiment
			out = append(out, t)
			continue
		}
		if why, _ := k.runsOn(t); why != "" {
			continue
		}
		if ch, ok := k.(chooser); ok && !ch.byDefault(t) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// eachTarget appends the steps of an experiment that runs target by target.
func eachTarget(steps []Step, s *Study, e *Experiment, add func([]Step, *Target) []Step) []Step {
	for _, t := range experimentTargets(s, e) {
		steps = add(steps, t)
	}
	return steps
}

// stepBase is what every step of an experiment on a target holds, and the start of
// its ID. IDs read like the step they name and hold only what the file says (names
// and values, never positions), so the results of different runs of a study line up
// by ID.
func stepBase(e *Experiment, t *Target) (Step, string) {
	return Step{Target: t.Name, Experiment: e.Name, Kind: e.Kind}, t.Name + "/" + e.Name
}

// onTarget runs a step on its target, prepared the first time a step needs it.
func (r *runner) onTarget(ctx context.Context, step Step, res *StepResult, run func(context.Context, *target, Step, *StepResult) error) error {
	t, err := r.target(ctx, step.Target)
	if err != nil {
		return err
	}
	return run(ctx, t, step, res)
}

// onAny is embedded by the kinds that run on every target.
type onAny struct{}

func (onAny) runsOn(*Target) (string, string) { return "", "" }
func (onAny) needs() string                   { return "managed" }

// onManaged is embedded by the kinds that run only on the servers storbench manages.
type onManaged struct{}

func (onManaged) runsOn(t *Target) (string, string) {
	if !t.manages() {
		return "it is external, and storbench only controls the servers it manages", ""
	}
	return "", ""
}
func (onManaged) needs() string { return "managed" }
