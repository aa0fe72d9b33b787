package study

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/dburl"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/interrupt"
	"github.com/storbench/storbench/internal/measure"
	"github.com/storbench/storbench/internal/metrics"
)

// Options are how a study runs.
type Options struct {
	Version string
	// Restart clears the stored steps instead of resuming after them.
	Restart bool
	// Log receives one line per event (target prepared, step started and done).
	Log io.Writer
	// Progress, when set, is told of a run step's every second.
	Progress func(Progress)
	// Watch, when set, sees the study as it runs (a live endpoint).
	Watch Watcher
	// afterStep is called after each stored step; tests interrupt a study there.
	afterStep func(Step)
}

// Watcher sees a study as it runs. Its methods run on the study's goroutine.
type Watcher interface {
	// Step is told when a step begins and when it ends.
	Step(StepState)
	// Point watches a TPC-C point of the step (each of a capacity search's probes
	// too); nil: none.
	Point(Step) measure.Watcher
}

// StepState is where a study stands when a step begins or ends.
type StepState struct {
	Step Step
	// Of is the study's number of steps; Stored how many of them are stored.
	Of, Stored int
	// Remaining estimates the time of the steps not yet done.
	Remaining time.Duration
	// Ended: the step is over; Failed: it failed (one interrupted did not).
	Ended, Failed bool
}

// Progress is the live state of a study during a run step.
type Progress struct {
	Step      Step
	Of        int
	Tick      driver.Tick
	Remaining time.Duration // estimate of the steps not yet done
}

// runner is one execution of a study.
type runner struct {
	study   *Study
	store   *Store
	opts    Options
	steps   []Step
	env     Environment
	targets map[string]*target
	// unprepared are the targets whose preparation failed, and why.
	unprepared map[string]error
}

// Run runs a study into the store in dir, resuming after the steps stored there. On
// an interruption the managed instances are stopped (a later run restarts them) and
// the steps done stay stored; at the end the study's instances are destroyed.
func Run(ctx context.Context, s *Study, file []byte, dir string, opts Options) error {
	// Refused input changes nothing: the checks come before the store is opened (and,
	// with Restart, cleared).
	steps := Plan(s)
	if err := preflight(s, steps, dir); err != nil {
		return err
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	store, err := OpenStore(dir, s, file, opts.Restart, opts.Log)
	if err != nil {
		return err
	}
	defer store.Unlock()
	r := &runner{study: s, store: store, opts: opts, steps: steps, env: machine(opts.Version), targets: map[string]*target{},
		unprepared: map[string]error{}}
	// Targets an earlier run prepared keep their record until prepared again.
	if old, err := store.Environment(); err == nil {
		r.env.Targets = old.Targets
	}
	if err := store.writeJSON("plan.json", r.steps); err != nil {
		return err
	}
	if err := store.writeJSON("environment.json", r.env); err != nil {
		return err
	}
	done, err := store.Done()
	if err != nil {
		return err
	}
	if n := len(done); n > 0 {
		fmt.Fprintf(opts.Log, "resuming: %d of %d steps already stored in %s\n", n, len(r.steps), dir)
	}
	err = r.runSteps(ctx, done)
	r.release(context.WithoutCancel(ctx), err == nil)
	return err
}

func (r *runner) runSteps(ctx context.Context, done map[string]bool) error {
	var failed []string
	stored := len(done)
	for i, step := range r.steps {
		if done[step.ID] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return r.interrupted(step, err)
		}
		fmt.Fprintf(r.opts.Log, "step %d/%d %s: about %s to go\n", step.Seq, len(r.steps), step.ID, r.remainingFrom(i).Round(time.Second))
		r.tellStep(StepState{Step: step, Of: len(r.steps), Stored: stored, Remaining: r.remainingFrom(i)})
		res := &StepResult{Step: step, Started: time.Now()}
		err := r.runStep(ctx, step, res)
		if err == nil {
			stored++
		}
		r.tellStep(StepState{Step: step, Of: len(r.steps), Stored: stored, Remaining: r.remainingFrom(i + 1), Ended: true, Failed: err != nil && ctx.Err() == nil})
		// A kind that restored more than once (a capacity search's probes) said so.
		if t := r.targets[step.Target]; t != nil && res.RestoreSeconds == 0 {
			res.RestoreSeconds = t.restoreSeconds
		}
		res.Ended = time.Now()
		if err != nil {
			if ctx.Err() != nil {
				if res.Run != nil {
					if serr := r.store.SaveInterrupted(res); serr != nil {
						fmt.Fprintf(r.opts.Log, "storing the interrupted step: %v\n", serr)
					}
				}
				return r.interrupted(step, ctx.Err())
			}
			err = fmt.Errorf("study step %d/%d %s: %w", step.Seq, len(r.steps), step.ID, err)
			// The step's record names settings as the study file does (users, not --users).
			res.Error = strings.ReplaceAll(input.Render(err, func(key string) string { return key }), "\n", "; ")
			if serr := r.store.SaveFailed(res); serr != nil {
				fmt.Fprintf(r.opts.Log, "storing the failed step: %v\n", serr)
			}
			if r.study.OnFailure != FailureContinues {
				return fmt.Errorf("%w (the steps before it are stored; run the study again to resume from it, or set on_failure: continue to go on past failed steps, or remove its instances with storbench study clean %s)", err, r.store.Dir)
			}
			fmt.Fprintf(r.opts.Log, "  FAILED, going on (on_failure: continue): %s\n", res.Error)
			failed = append(failed, step.ID)
			continue
		}
		if err := r.store.SaveStep(res); err != nil {
			return err
		}
		if r.opts.afterStep != nil {
			r.opts.afterStep(step)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("study %s: %d of %d steps failed (%s) and are stored apart, the others are stored in %s: see storbench results list %s, and run the study again to retry them or remove its instances with storbench study clean %s",
			r.study.Name, len(failed), len(r.steps), strings.Join(failed, ", "), r.store.Dir, r.store.Dir, r.store.Dir)
	}
	fmt.Fprintf(r.opts.Log, "study %s: all %d steps stored in %s\n", r.study.Name, len(r.steps), r.store.Dir)
	return nil
}

// tellStep tells Options.Watch where the study stands.
func (r *runner) tellStep(st StepState) {
	if r.opts.Watch != nil {
		r.opts.Watch.Step(st)
	}
}

// interrupted says what an interruption kept and how to go on, in one line (the
// cause, a cancelled context, says nothing the user does not know).
func (r *runner) interrupted(step Step, cause error) error {
	return interrupt.Error(fmt.Sprintf("study interrupted at step %d/%d (%s): the steps before it are stored in %s; run it again to resume, or remove its instances with storbench study clean %s",
		step.Seq, len(r.steps), step.ID, r.store.Dir, r.store.Dir), cause)
}

// remainingFrom is the estimated time of the steps from index i on, with the
// builds of the targets they need that are not prepared yet.
func (r *runner) remainingFrom(i int) time.Duration {
	var d time.Duration
	counted := map[string]bool{}
	for _, s := range r.steps[i:] {
		d += s.Estimate
		names := s.Targets
		if len(names) == 0 {
			names = []string{s.Target}
		}
		for _, name := range names {
			if _, prepared := r.targets[name]; !prepared && !counted[name] {
				counted[name] = true
				d += BuildEstimate(r.study.Workload.Warehouses)
			}
		}
	}
	return d
}

// runStep runs the step the way its kind does.
func (r *runner) runStep(ctx context.Context, step Step, res *StepResult) error {
	return kindNamed(step.Kind).run(ctx, r, step, res)
}

// tpcc runs one point of a user sweep, on the instance variant the step asks for,
// from the base image.
func (r *runner) tpcc(ctx context.Context, t *target, step Step, res *StepResult) error {
	if err := t.ready(ctx, variantOf(t, step), r.study.Workload.Restore != "never"); err != nil {
		return err
	}
	if err := r.limitsApplied(t, res); err != nil {
		return err
	}
	if step.WithReplica {
		if err := t.startReplica(ctx); err != nil {
			return err
		}
		res.Notes = append(res.Notes, fmt.Sprintf("with streaming standby %s on %s (synchronous: %v)", t.replica, t.spec.Replica.Path, t.spec.Replica.Sync))
		defer func() {
			if err := t.dropReplica(context.WithoutCancel(ctx)); err != nil {
				res.Notes = append(res.Notes, "removing the replica: "+err.Error())
			}
		}()
	}
	cfg := r.driverConfig(step)
	r.showProgress(step, &cfg, 0)
	out, err := r.measure(ctx, t, step, cfg, true)
	// Interrupted inside the window, the part that ran is kept (stored apart, and the
	// step is run again on resume).
	run := out.Run
	res.Run = run
	if err != nil {
		return err
	}
	// The run's writes are checked before the next step restores the base image
	// over them. 3.3.2.11 is left out: it holds only until the first Delivery.
	var failed []string
	for _, o := range out.Checks {
		c := CheckResult{ID: o.Check.ID, Name: o.Check.Name, Violations: o.Violations, Seconds: o.Elapsed.Seconds()}
		if o.Err != nil {
			c.Error = o.Err.Error()
		}
		if !o.Passed() {
			failed = append(failed, o.Check.ID)
		}
		res.Checks = append(res.Checks, c)
	}
	// Interrupted while checking, the step is not done: its checks did not run.
	if err := ctx.Err(); err != nil {
		res.Checks = nil
		return err
	}
	fmt.Fprintf(r.opts.Log, "  %s users %d rep %d: %s%s\n", step.Target, step.Users, step.Repeat, runLine(run), serverPart(run))
	if len(failed) > 0 {
		fmt.Fprintf(r.opts.Log, "  consistency conditions FAILED after this step: %s (storbench results show %s %d)\n",
			strings.Join(failed, ", "), r.store.Dir, step.Seq)
	}
	return nil
}

// driverConfig is a TPC-C step's driver settings: the study's workload, the step's
// users, window and rate (open-loop, with the workload's arrivals and latency
// limit), a seed of its own; the driver may use every CPU of this process.
func (r *runner) driverConfig(step Step) driver.Config {
	w := r.study.Workload
	cfg := driver.Config{Workload: w.Workload, Users: step.Users, Ramp: step.Ramp, Duration: step.Duration, UntilSteady: step.UntilSteady,
		Seed: w.Seed + uint64(step.Seq), ClientCPUs: runtime.GOMAXPROCS(0), Rate: step.Rate}
	if step.Rate == 0 {
		cfg.LatencyLimit = Duration{} // the limit is that of the open-loop steps
	}
	return cfg
}

// showProgress tells Options.Progress of a run's every second; after is the time
// the step has still to run once this run is over (a capacity search's later probes).
func (r *runner) showProgress(step Step, cfg *driver.Config, after time.Duration) {
	if r.opts.Progress == nil {
		return
	}
	remaining := r.remainingFrom(step.Seq) + after
	cfg.Progress = func(tick driver.Tick) {
		r.opts.Progress(Progress{Step: step, Of: len(r.steps), Tick: tick, Remaining: remaining + step.Ramp + step.window() - tick.Elapsed})
	}
}

// measure runs the driver on the target with its sampler (and, with check, the
// consistency conditions after it).
func (r *runner) measure(ctx context.Context, t *target, step Step, cfg driver.Config, check bool) (measure.Outcome, error) {
	var watch measure.Watcher
	if r.opts.Watch != nil {
		watch = r.opts.Watch.Point(step)
	}
	return measure.Run(ctx, measure.Point{DSN: t.dsn, Driver: cfg, Version: r.opts.Version, Check: check, Watch: watch,
		Prepare: func(ctx context.Context, db engine.Database, _ dburl.URL) (*metrics.Monitor, error) {
			return metrics.New(ctx, r.metricsConfig(ctx, t, db))
		}})
}

// limitsApplied notes the limits a managed instance runs with, and fails the step
// when one could not be applied, unless the study allows it: the step would then
// measure another machine than the study file says.
func (r *runner) limitsApplied(t *target, res *StepResult) error {
	return t.spec.kindOf().limits(t, r.study.AllowUnappliedLimits, res)
}

// metricsConfig samples the target's directories (managed) or its host's
// node_exporter (external, when given), and the database.
func (r *runner) metricsConfig(ctx context.Context, t *target, db engine.Database, extra ...metrics.Target) metrics.Config {
	m := r.study.Metrics
	cfg := metrics.Config{Interval: m.Interval.Duration, IOLatency: m.IOLatency, WaitRate: m.WaitRate, Targets: extra, MaxClockSkew: m.MaxClockSkew.Duration}
	if db != nil {
		cfg.Database = db
	}
	t.spec.kindOf().sample(ctx, t, &cfg)
	return cfg
}

// timed runs a backup or restore with the sampler on the target's disks and the
// backup's.
func (r *runner) timed(ctx context.Context, t *target, backup metrics.Target, do func() (instance.Transfer, error)) (*Transfer, error) {
	mon, err := metrics.New(ctx, r.metricsConfig(ctx, t, nil, backup))
	if err != nil {
		return nil, err
	}
	defer mon.Close()
	origin := time.Now()
	mon.Start(ctx, origin)
	tr, err := do()
	if err != nil {
		return nil, err
	}
	return &Transfer{Transfer: tr, System: mon.Stop(context.WithoutCancel(ctx), 0, time.Since(origin).Seconds())}, nil
}

// release stops the managed instances, and when the study is done destroys every
// instance of its registry, standbys first, including those of targets an earlier
// run prepared (the results and base images stay in the store).
func (r *runner) release(ctx context.Context, finished bool) {
	for _, t := range r.targets {
		if err := t.release(ctx, finished); err != nil {
			fmt.Fprintf(r.opts.Log, "target %s: %v\n", t.spec.Name, err)
		}
	}
	if !finished {
		return
	}
	if _, _, err := r.store.destroyInstances(ctx, false); err != nil {
		fmt.Fprintf(r.opts.Log, "study instances: %v\n", err)
	}
}

// destroyInstances destroys every instance of the store's registry, standbys first
// (instance.Registry.DestroyKept removes only what storbench created for each, and
// with force also one in use or whose directories are not there), and returns the
// names of those destroyed and, one line each, what was kept or left behind.
func (s *Store) destroyInstances(ctx context.Context, force bool) (destroyed, kept []string, err error) {
	reg := s.Registry()
	left, err := reg.List()
	if err != nil {
		return nil, nil, err
	}
	sort.Slice(left, func(i, j int) bool { return left[i].ReplicaOf != "" && left[j].ReplicaOf == "" })
	var errs []error
	for _, st := range left {
		k, err := reg.DestroyKept(ctx, st.Name, force)
		kept = append(kept, k...)
		if err != nil {
			errs = append(errs, err) // it names the instance
			continue
		}
		destroyed = append(destroyed, st.Name)
	}
	if len(errs) == 0 {
		errs = append(errs, s.unlinkRegistry())
	}
	return destroyed, kept, errors.Join(errs...)
}

// Clean stops and destroys the managed instances of the study stored in dir (after a
// failed or interrupted study, they hold its data on disk); the stored results and
// base images stay, and running the study again creates its instances anew. With
// force it destroys them even in use, and forgets one whose directories are not
// there (a disk not mounted), leaving its files. It returns the names of the
// instances destroyed and, one line each, what was kept or left behind.
func Clean(ctx context.Context, dir string, force bool) (destroyed, kept []string, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %v", input.ErrInvalid, dir, err)
	}
	store, err := ReadStore(abs)
	if err != nil {
		return nil, nil, err
	}
	if err := store.Lock(); err != nil {
		return nil, nil, err
	}
	defer store.Unlock()
	return store.destroyInstances(ctx, force)
}

// target prepares a step's target the first time a step needs it: its instance
// (managed) or its connection (external), its database built once, and the record of
// its environment.
func (r *runner) target(ctx context.Context, name string) (*target, error) {
	if t, ok := r.targets[name]; ok {
		return t, nil
	}
	var spec Target
	for _, s := range r.study.Targets {
		if s.Name == name {
			spec = s
		}
	}
	if err, ok := r.unprepared[name]; ok {
		return nil, fmt.Errorf("target %s could not be prepared for an earlier step: %w", name, err)
	}
	t := &target{spec: spec, reg: r.store.Registry(), store: r.store, workload: r.study.Workload,
		version: r.opts.Version, log: r.opts.Log, maxUsers: maxUsers(r.steps)}
	if err := t.prepare(ctx); err != nil {
		// A server started before the failure (a build that filled its disk) is
		// stopped, not left running for the rest of the study.
		if t.dsn != "" {
			if rerr := t.release(context.WithoutCancel(ctx), false); rerr != nil {
				fmt.Fprintf(r.opts.Log, "target %s: stopping its instance: %v\n", name, rerr)
			}
		}
		// Preparing again (creating, building) would fail the same way, for as long.
		if ctx.Err() == nil {
			r.unprepared[name] = err
		}
		return nil, fmt.Errorf("target %s: %w", name, err)
	}
	r.targets[name] = t
	r.env.Targets = slices.DeleteFunc(r.env.Targets, func(e TargetEnv) bool { return e.Name == name })
	r.env.Targets = append(r.env.Targets, t.describe(ctx))
	return t, r.store.writeJSON("environment.json", r.env)
}

// preflight finds what would fail hours into a study before anything runs: what
// the machine cannot give (CheckMachine), what a kind of step needs (fio for storage
// profiles), an external target's password variable unset.
func preflight(s *Study, steps []Step, results string) error {
	if err := Refused(s, CheckMachine(s, results)); err != nil {
		return err
	}
	checked := map[string]bool{}
	for _, st := range steps {
		if p, ok := kindNamed(st.Kind).(preflighter); ok && !checked[st.Kind] {
			if err := p.preflight(); err != nil {
				return err
			}
			checked[st.Kind] = true
		}
	}
	for _, t := range s.Targets {
		if t.PasswordEnv != "" {
			if _, ok := os.LookupEnv(t.PasswordEnv); !ok {
				return fmt.Errorf("%w: target %s: environment variable %s (password_env) is not set", input.ErrInvalid, t.Name, t.PasswordEnv)
			}
		}
	}
	return nil
}

func maxUsers(steps []Step) int {
	n := 1
	for _, s := range steps {
		n = max(n, s.Users)
	}
	return n
}
