package study

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/bytesize"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/measure"
	"github.com/storbench/storbench/internal/yamlfile"
)

// Consolidation is an experiment kind: several databases measured over one common
// window, some of them running a noisy workload; on one managed target's storage
// (instances made there), or across the hosts of the external targets it names.
const Consolidation = "consolidation"

type consolidation struct{ onAny }

// What a consolidation's noisy instances do in its baseline (the key baseline).
const (
	// BaselineIdle: made and started like the others but given no work, so the
	// baseline runs as many OLTP instances as the noisy run and the two differ by
	// the noise alone. baseline: true means this.
	BaselineIdle = "idle"
	// BaselineOLTP: TPC-C like the others, so the baseline has one OLTP instance
	// more per noisy one; on a machine whose CPUs the instances share, the noisy
	// run then gains the CPU those freed.
	BaselineOLTP = "oltp"
)

// Roles of a consolidation's instances: on TPC-C, running the noisy workload, or
// idle (a noisy instance in a BaselineIdle baseline).
const (
	RoleOLTP  = "oltp"
	RoleNoisy = "noisy"
	RoleIdle  = "idle"
)

func (consolidation) name() string { return Consolidation }
func (consolidation) knobs() []string {
	return []string{"users", "ramp", "duration", "instances", "instance_memory", "instance_cpus", "noisy", "baseline"}
}

// byDefault: a consolidation across hosts names its external targets; unnamed, it
// runs on each managed target's storage.
func (consolidation) byDefault(t *Target) bool { return t.manages() }

func (consolidation) check(c *checker, s *Study, i int, e *Experiment) {
	c.sweep(i, e)
	c.consolidation(s, i, e)
}

// plan: on one target, the baseline first, so the noisy run has something to be
// compared with; across hosts, one step drives every target at once.
func (k consolidation) plan(steps []Step, s *Study, e *Experiment) []Step {
	if across := externalTargets(s, e); len(across) > 0 {
		return acrossHostsSteps(steps, s, e, across)
	}
	return eachTarget(steps, s, e, func(steps []Step, t *Target) []Step { return consolidationSteps(steps, s, e, t) })
}

func consolidationSteps(steps []Step, s *Study, e *Experiment, t *Target) []Step {
	base, id := stepBase(e, t)
	variants := []bool{e.Noisy != nil}
	if e.Baseline != "" {
		variants = []bool{false, true}
	}
	for _, noisy := range variants {
		b := base
		b.ID = id + map[bool]string{false: "/baseline", true: "/noisy"}[noisy]
		if !noisy {
			b.Baseline = e.Baseline
		}
		b.Noisy, b.Users, b.Repeat, b.Ramp, b.Duration = noisy, e.Users.Values[0], 1, e.Ramp.Duration, e.Duration.Duration
		b.Estimate = b.Ramp + b.Duration + time.Duration(e.Instances)*restoreEstimate(s.Workload.Warehouses)
		steps = append(steps, b)
	}
	return steps
}

// consolidatedPath is the directory of instance k (from 0) of a consolidation on the
// managed target at path: beside it, on the same storage.
func consolidatedPath(path string, k int) string { return fmt.Sprintf("%s-c%d", path, k+1) }

// acrossHostsSteps are a consolidation's steps over external targets: one step
// drives them all at once, named after all of them (db1+db2+db3).
func acrossHostsSteps(steps []Step, s *Study, e *Experiment, targets []*Target) []Step {
	var names []string
	for _, t := range targets {
		names = append(names, t.Name)
	}
	first := len(steps)
	steps = consolidationSteps(steps, s, e, &Target{Name: strings.Join(names, "+")})
	for i := first; i < len(steps); i++ {
		steps[i].Targets = names
		// External databases are not restored: the window and the connecting.
		connect := measure.Together{Workers: len(names), Noisy: steps[i].noisyInstances(e), Users: steps[i].Users}.Allowance()
		steps[i].Estimate = steps[i].Ramp + steps[i].Duration + connect
	}
	return steps
}

func (consolidation) describe(st Step) string {
	switch {
	case st.Noisy:
		return describeTPCC(st, "with noise")
	case st.Baseline == BaselineIdle:
		return describeTPCC(st, "without noise, noisy instances idle")
	case st.Baseline == BaselineOLTP:
		return describeTPCC(st, "without noise, every instance on TPC-C")
	}
	return describeTPCC(st, "without noise") // a consolidation with no noisy workload at all
}

func (consolidation) run(ctx context.Context, r *runner, step Step, res *StepResult) error {
	if len(step.Targets) > 0 {
		return r.acrossHosts(ctx, step, res)
	}
	return r.onTarget(ctx, step, res, r.consolidation)
}

// consolidation checks a consolidation: on one managed target's storage (instances
// made there), or across the hosts of the external targets it names (each target one
// of the databases); then the users, the window and the noisy workload.
func (c *checker) consolidation(s *Study, i int, e *Experiment) {
	p := func(key string) string { return fmt.Sprintf("experiments[%d].%s", i, key) }
	across := externalTargets(s, e)
	if len(across) > 0 {
		c.acrossHosts(i, e, across)
	} else {
		c.sameStorage(i, e, managedEngineNames(s, e))
	}
	if len(e.Users.Values) != 1 {
		c.errf(p("users"), "%s needs one users value: the OLTP users of each instance", "e.g. users: 4", label(e))
	}
	c.window(i, e)
	switch strings.ToLower(e.Baseline) {
	case "", "false":
		e.Baseline = ""
	case "true", BaselineIdle:
		e.Baseline = BaselineIdle
	case BaselineOLTP:
		e.Baseline = BaselineOLTP
	default:
		c.errf(p("baseline"), "baseline %q is unknown", "use idle or true, the noisy instances started and doing nothing; oltp, every instance on TPC-C; or false, no baseline", yamlfile.Clip(e.Baseline))
		e.Baseline = ""
	}
	if e.Noisy == nil {
		if e.Baseline != "" {
			c.errf(p("baseline"), "baseline compares with a noisy workload", "add noisy: or remove baseline")
		}
		return
	}
	c.noisy(i, e)
	if len(across) > 0 {
		c.noisyAcrossHosts(i, e, across)
	} else if e.Noisy.RunOn != "" {
		c.errf(p("noisy.run_on"), "run_on is for consolidations across hosts", "a consolidation on one managed target backs up on this machine: remove run_on")
	}
}

// sameStorage checks the instances of a consolidation on one managed target: every
// instance's memory in the machine's, every connection a process.
func (c *checker) sameStorage(i int, e *Experiment, engines []string) {
	p := func(key string) string { return fmt.Sprintf("experiments[%d].%s", i, key) }
	if e.Instances < 2 {
		c.errf(p("instances"), "%s needs at least 2 instances", "e.g. instances: 4", label(e))
	}
	if !c.doc.Has(p("instance_memory")) {
		e.InstanceMemory = Size{512 << 20}
	} else {
		c.memory(p("instance_memory"), engines, e.InstanceMemory.Bytes)
	}
	for j, set := range e.InstanceCPUs {
		c.cpus(fmt.Sprintf("%s[%d]", p("instance_cpus"), j), set)
	}
	if total, err := memTotal(); err == nil && total > 0 && int64(e.Instances)*e.InstanceMemory.Bytes > total*8/10 {
		c.beyondMachine(p("instances"), fmt.Errorf("%d instances of %s need %s, more than 80%% of this machine's %s (give fewer instances or less instance_memory)",
			e.Instances, bytesize.Format(e.InstanceMemory.Bytes), bytesize.Format(int64(e.Instances)*e.InstanceMemory.Bytes), bytesize.Format(total)))
	}
	if procs, ok := maxProcesses(); ok && len(e.Users.Values) == 1 && int64(e.Instances*driver.ServerConnections(e.Users.Values[0])) > procs {
		c.beyondMachine(p("instances"), fmt.Errorf("%d instances of %d users need about %d processes, this user may run %d (give fewer instances or users, or raise ulimit -u)",
			e.Instances, e.Users.Values[0], e.Instances*driver.ServerConnections(e.Users.Values[0]), procs))
	}
}

// externalTargets are the external targets a consolidation names: it then runs
// across their hosts, each target one of the consolidated databases.
func externalTargets(s *Study, e *Experiment) []*Target {
	var out []*Target
	for _, t := range experimentTargets(s, e) {
		if k := t.kindOf(); k != nil && !k.manages() {
			out = append(out, t)
		}
	}
	return out
}

// acrossHosts checks a consolidation over external targets, each on its own host.
func (c *checker) acrossHosts(i int, e *Experiment, targets []*Target) {
	p := func(key string) string { return fmt.Sprintf("experiments[%d].%s", i, key) }
	if len(targets) != len(e.Targets) {
		c.errf(p("targets"), "%s mixes external and managed targets", "consolidate either on one managed target's storage or across external targets' hosts, in two experiments", label(e))
	}
	if len(targets) < 2 {
		c.errf(p("targets"), "%s across hosts needs at least 2 external targets", "name them in targets:, e.g. targets: [db1, db2, db3]", label(e))
	}
	for _, k := range []string{"instances", "instance_memory", "instance_cpus"} {
		if c.doc.Has(p(k)) {
			c.errf(p(k), "%s is for a consolidation on one managed target", "across hosts each external target is one of the databases: remove %s", k, k)
		}
	}
	for _, t := range targets {
		if t.MetricsHost == "" {
			c.errf(p("targets"), "target %s has no host_metrics", "across hosts each host's CPU and disks come from its node_exporter: add host_metrics: http://HOST:9100/metrics to %s", t.Name, t.Name)
		}
	}
	e.Instances = len(targets)
}

// noisyAcrossHosts checks the backups of a consolidation across hosts: physical,
// of an engine storbench backs up so, from this machine or over SSH on the host.
func (c *checker) noisyAcrossHosts(i int, e *Experiment, targets []*Target) {
	n := e.Noisy
	np := func(key string) string { return fmt.Sprintf("experiments[%d].noisy.%s", i, key) }
	if n.Method != "physical" {
		c.errf(np("method"), "method %q across hosts is not supported", "use physical: pg_basebackup of the external server", n.Method)
	}
	noisy := targets[max(0, len(targets)-n.Instances):]
	switch n.RunOn {
	case "":
		n.RunOn = "controller"
	case "controller":
	case "host":
		if n.Path == "" {
			c.errf(np("path"), "backups run on the host need a path there", "add path: a directory on each noisy host, e.g. /var/backups")
		}
		for _, t := range noisy {
			if t.SSH == "" {
				c.errf(np("run_on"), "backups of %s run on its host, which needs ssh", "add ssh: user@host to target %s, or use run_on: controller", t.Name, t.Name)
			}
		}
	default:
		c.errf(np("run_on"), "run_on %q is unknown", "use controller, pg_basebackup from this machine, or host, over SSH on the database's host", n.RunOn)
	}
	engines := strings.Join(instance.ExternalBackupEngines(), " or ")
	for _, t := range noisy {
		if scheme, ok := t.kindOf().engine(t); ok && !slices.ContainsFunc(instance.ExternalBackupEngines(), func(name string) bool { return engine.SameEngine(scheme, name) }) {
			c.errf(np("instances"), "noisy target %s is not %s", "storbench backs up only %s servers across hosts: make the last targets %s ones", t.Name, engines, engines, engines)
		}
	}
}

// noisy checks the noisy workload of a consolidation of e.Instances databases.
func (c *checker) noisy(i int, e *Experiment) {
	n := e.Noisy
	np := func(key string) string { return fmt.Sprintf("experiments[%d].noisy.%s", i, key) }
	if n.Instances < 1 || n.Instances >= e.Instances {
		c.errf(np("instances"), "noisy instances %d out of %d", "give 1 to %d: the others run TPC-C", n.Instances, e.Instances, e.Instances-1)
	}
	if n.Kind == "" {
		n.Kind = "backup"
	} else if n.Kind != "backup" {
		c.errf(np("kind"), "noisy kind %q is unknown", "use backup", n.Kind)
	}
	if n.Method == "" {
		n.Method = DefaultMethod
	} else if n.Method != "physical" && n.Method != "logical" {
		c.errf(np("method"), "method %q is unknown", "use physical or logical", n.Method)
	}
	if n.Interval.Duration < time.Second {
		c.errf(np("interval"), "interval %s is too short", "give the time between backup starts, e.g. 100s", n.Interval)
	}
	if n.Cycles < 1 {
		c.errf(np("cycles"), "cycles %d is too few", "give 1 or more backups", n.Cycles)
	}
	if n.Path != "" && !filepath.IsAbs(n.Path) {
		c.errf(np("path"), "backup path %q is not absolute", "give the directory the backups go to, e.g. /mnt/backup", n.Path)
	}
}

// noisyInstances is how many of a consolidation step's instances run no TPC-C: the
// noisy ones, with the noise and in an idle baseline; none in an OLTP baseline.
func (st Step) noisyInstances(e *Experiment) int {
	if e.Noisy == nil || (!st.Noisy && st.Baseline != BaselineIdle) {
		return 0
	}
	return e.Noisy.Instances
}

// roleOf is the role of instance i of a consolidation step run by all.
func (st Step) roleOf(all measure.Together, i int) string {
	switch {
	case !all.IsNoisy(i):
		return RoleOLTP
	case st.Noisy:
		return RoleNoisy
	}
	return RoleIdle
}

// noise is the noisy instances' work in a consolidation step: none (nil) in an
// idle baseline, where they only run.
func (st Step) noise(work func(i int) error) func(i int) error {
	if !st.Noisy {
		return nil
	}
	return work
}
