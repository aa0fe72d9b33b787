package study

import (
	"context"
	"fmt"
	"time"

	"github.com/storbench/storbench/internal/metrics"
)

// targetKind is what a target's kind decides: how its settings are checked and its
// plan lines read, and how it is prepared, readied for a step, sampled and released
// while the study runs. managedTarget and externalTarget are the two.
type targetKind interface {
	// manages tells whether storbench creates and controls the server: only such a
	// target can be resized, pinned, replicated, backed up or fio-tested, and its
	// storage must hold the data.
	manages() bool
	// check fills in the target's defaults and checks its settings (the directories
	// of all targets against each other: CheckMachine).
	check(c *checker, i int, t *Target)
	// engine is the name (or DSN scheme) of the target's engine; false when unknown.
	engine(t *Target) (string, bool)
	// restore is the time restoring the base image adds to each step.
	restore(s *Study) time.Duration
	// describe is the target's line in the plan, and buildNote what its build keeps.
	describe(t Target) string
	buildNote() string

	prepare(ctx context.Context, t *target) error
	ready(ctx context.Context, t *target, v variant, restore bool) error
	release(ctx context.Context, t *target, finished bool) error
	// environment adds to env what the target runs on.
	environment(ctx context.Context, t *target, env TargetEnv) TargetEnv
	// limits notes a step's instance limits in res, and refuses the step when one was
	// not applied unless allow.
	limits(t *target, allow bool, res *StepResult) error
	// sample points the step's sampler at the target's disks.
	sample(ctx context.Context, t *target, cfg *metrics.Config)
}

// targetKinds are the kinds of target, by their name in a study file.
var targetKinds = map[string]targetKind{DefaultKind: managedTarget{}, "external": externalTarget{}}

// kindOf is the target's kind; nil for a kind the checks refuse.
func (t *Target) kindOf() targetKind { return targetKinds[t.Kind] }

// manages tells whether storbench creates the target's server (false for a kind the
// checks refuse).
func (t *Target) manages() bool {
	k := t.kindOf()
	return k != nil && k.manages()
}

func (c *checker) target(i int, t *Target, names map[string]int) {
	p := func(key string) string { return fmt.Sprintf("targets[%d].%s", i, key) }
	if !c.doc.Has(p("name")) {
		c.errf(p("name"), "target %d has no name", "add e.g. name: nvme; step IDs and results use it", i+1)
	} else {
		c.uniqueName(p("name"), "target", t.Name, names, "give each target its own name")
	}

	if !c.doc.Has(p("kind")) {
		t.Kind = DefaultKind
	}
	k := t.kindOf()
	if k == nil {
		c.errf(p("kind"), "target kind %q is unknown", "use managed, a server storbench creates on path, or external, a server at dsn", t.Kind)
		return
	}
	k.check(c, i, t)
}

// foreignKeys refuses the keys of target i that another kind of target reads.
func (c *checker) foreignKeys(i int, keys []string, what, hint string) {
	for _, k := range keys {
		if path := fmt.Sprintf("targets[%d].%s", i, k); c.doc.Has(path) {
			c.errf(path, what, hint, k)
		}
	}
}
