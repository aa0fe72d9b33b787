package driver

// A run's settings, declared, defaulted and checked here once: the command line
// binds its flags to them (AddFlags), a study file decodes into them (Workload's YAML
// keys), and both get the same refusals, which name each setting by its key
// (input.Errorf) for the caller to name as its user wrote it.

import (
	"cmp"
	"errors"
	"math"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/steady"
	"github.com/storbench/storbench/internal/tpcc"
	"github.com/storbench/storbench/internal/yamlfile"
)

// Defaults of a run's settings. The window is HammerDB's own TPROC-C default (2
// minutes of ramp-up, 5 minutes timed), which the papers kept or lengthened, so a run
// that leaves it out measures what a HammerDB user would expect.
const (
	DefaultUsers    = 1
	DefaultRamp     = 2 * time.Minute
	DefaultDuration = 5 * time.Minute
	// DefaultRetries: a serialization failure or deadlock is retried as HammerDB
	// does, a few times before the transaction counts as an error.
	DefaultRetries    = 5
	DefaultClientCPUs = 1
	// DefaultInputs are the input rules of a run that names none: the spec's.
	DefaultInputs = tpcc.SpecInputs
)

// Bounds of a run's settings. Larger values are typos, not experiments, and each
// would otherwise fail late and badly: the users' sessions and goroutines are made up
// front, and a window of months ties up a machine that gives no result until its end.
const (
	// MaxUsers: one session each; more than any server accepts (PostgreSQL's
	// max_connections is a few hundred to a few thousand).
	MaxUsers = 100000
	// MaxRamp: a ramp-up takes minutes (HammerDB's default is 2m); a day covers
	// warming the cache of the largest memory (--ramp 2000m for 2m is the typo).
	MaxRamp = 24 * time.Hour
	// MinDuration: a timed window shorter than a second has no whole second of
	// throughput to report.
	MinDuration = time.Second
	// MaxDuration: the papers' longest steady-state runs last hours; a week covers
	// soak tests while catching a unit slip (--duration 5000h).
	MaxDuration = 7 * 24 * time.Hour
	// MaxRate bounds the offered rate (transactions per minute): a thousand times
	// what the largest published TPC-C results run per client machine; more is a
	// unit slip.
	MaxRate = 1e8
)

// Workload is how every run of a configuration drives the database: the settings a
// study's workload block gives all its steps (embedded there, so the file's keys are
// these), and the command line's flags of the same names.
type Workload struct {
	// Mode: engine.Best is the engine's best, resolved by Run (the result records
	// the mode it ran).
	Mode          engine.Mode `yaml:"mode"`
	AllWarehouses bool        `yaml:"all_warehouses"`
	Keying        bool        `yaml:"keying"` // keying and think times of 5.2.5 (or of Inputs' rules)
	// Inputs names the input rules (tpcc.ParseInputs): the spec's, or HammerDB's to
	// compare with its published figures.
	Inputs string `yaml:"inputs"`
	// Arrivals spreads an open-loop run's arrivals: ArrivalsPoisson or
	// ArrivalsUniform.
	Arrivals string `yaml:"arrivals"`
	// LatencyLimit (open-loop only; 0: none): an arrival already this late when a
	// user is free for it is skipped and counted, and a completed transaction whose
	// response time exceeds it counts as late, as pgbench --latency-limit.
	LatencyLimit yamlfile.Duration `yaml:"latency_limit"`
	MaxRetries   int               `yaml:"retries"` // per transaction, for serialization failures and deadlocks
}

// DefaultWorkload is the workload of a run that sets nothing.
func DefaultWorkload() Workload {
	return Workload{Inputs: DefaultInputs, Arrivals: ArrivalsPoisson, MaxRetries: DefaultRetries}
}

// AddFlags declares the workload's flags, with its defaults.
func (w *Workload) AddFlags(fs *pflag.FlagSet) {
	*w = DefaultWorkload()
	fs.StringVar((*string)(&w.Mode), "mode", string(engine.Best), "procedures (one stored-procedure call per transaction) or sql (client-side statements); default: the engine's best, procedures where it has them, sql otherwise (the result records the mode run)")
	fs.BoolVar(&w.AllWarehouses, "all-warehouses", false, "users cycle through all warehouses (HammerDB's \"use all warehouses\")")
	fs.BoolVar(&w.Keying, "keying", false, "keying and think times of the spec (5.2.5); off as in HammerDB")
	fs.StringVar(&w.Inputs, "inputs", w.Inputs, "where the transaction inputs come from: spec (TPC-C's) or hammerdb (HammerDB 4.12's: uniform customer and item ids, random home warehouses and Stock-Level districts, its think times; the result adds the NOPM HammerDB would show)")
	fs.StringVar(&w.Arrivals, "arrivals", w.Arrivals, "how --rate's arrivals are spread: poisson (random gaps) or uniform (equal gaps)")
	fs.DurationVar(&w.LatencyLimit.Duration, "latency-limit", 0, "with --rate: skip (and count) arrivals already this late when a user is free, and count completed transactions slower than this as late (0: none)")
	input.DecimalVar(fs, &w.MaxRetries, "retries", w.MaxRetries, "times a transaction is retried after a serialization failure or deadlock")
}

// Check checks each setting of the workload on its own, all of them: what a setting
// needs of a run's others (a latency limit needs a rate) is Config.Validate's.
func (w *Workload) Check() error {
	var errs []error
	if _, err := engine.ParseMode(string(w.Mode)); err != nil {
		errs = append(errs, err)
	}
	if _, err := tpcc.ParseInputs(w.Inputs); err != nil {
		errs = append(errs, err)
	}
	if w.Arrivals != ArrivalsPoisson && w.Arrivals != ArrivalsUniform {
		errs = append(errs, input.Errorf("arrivals", "{arrivals} %q is not an arrival process (give %s or %s)", w.Arrivals, ArrivalsPoisson, ArrivalsUniform))
	}
	switch limit := w.LatencyLimit.Duration; {
	case limit < 0:
		errs = append(errs, input.Errorf("latency_limit", "{latency_limit} %v is negative (give e.g. {latency_limit} 1s, or 0 for none)", limit))
	case limit > histMaxDuration:
		errs = append(errs, input.Errorf("latency_limit", "{latency_limit} %v is longer than the %v latencies are recorded up to (give e.g. {latency_limit} 1s)", limit, histMaxDuration))
	}
	if w.MaxRetries < 0 {
		errs = append(errs, input.Errorf("retries", "{retries} %d is negative (give 0, no retry, or more)", w.MaxRetries))
	}
	return errors.Join(errs...)
}

// AddFlags declares the flags of every setting of a run, with their defaults.
func (c *Config) AddFlags(fs *pflag.FlagSet) {
	c.Workload.AddFlags(fs)
	input.DecimalVar(fs, &c.Users, "users", DefaultUsers, "virtual users, each with its own connection")
	fs.DurationVar(&c.Ramp, "ramp", DefaultRamp, "ramp-up before the timed window (not counted)")
	fs.DurationVar(&c.Duration, "duration", DefaultDuration, "timed window")
	fs.DurationVar(&c.UntilSteady, "until-steady", 0, "run the timed window past --duration until its last --duration seconds are steady, at most this long in all (e.g. 10m; docs/steadiness.md); 0: --duration")
	fs.Float64Var(&c.Rate, "rate", 0, "open-loop load: transactions a minute (all five types) arriving whether or not the database keeps up, --users of them at once; response times run from when each was due (0: closed-loop users)")
	input.DecimalVar(fs, &c.Seed, "seed", 0, "random seed of the run's inputs (0: from the clock; recorded in the result)")
	input.DecimalVar(fs, &c.ClientCPUs, "client-cpus", DefaultClientCPUs, "CPUs the driver may use (GOMAXPROCS); more only costs more CPU per transaction on a box shared with the database, and the result warns when the driver nears this limit")
}

// Validate checks the configuration before anything connects: each setting, then
// what one needs of another.
func (c *Config) Validate() error {
	if c.Arrivals == "" {
		c.Arrivals = ArrivalsPoisson
	}
	if c.Inputs == "" {
		c.Inputs = DefaultInputs
	}
	// The command line shows one refusal: the first.
	err := cmp.Or(CheckUsers(c.Users), CheckRamp(c.Ramp), CheckDuration(c.Duration), CheckRate(c.Rate), first(c.Workload.Check()))
	if err == nil && c.Rate > 0 && c.Keying {
		err = input.Errorf("rate", "{rate} and {keying} both pace the users: an open-loop run's arrivals replace keying and think times (give one of them)")
	}
	if err == nil && c.LatencyLimit.Duration > 0 && c.Rate == 0 {
		err = input.Errorf("latency_limit", "{latency_limit} skips transactions that are already late, which only an open-loop run has: give {rate} too, or leave it out")
	}
	if err == nil && c.UntilSteady != 0 {
		err = CheckUntilSteady(c.UntilSteady, c.Duration)
	}
	if err == nil {
		err = CheckClientCPUs(c.ClientCPUs)
	}
	if err != nil {
		return err
	}
	c.validated = true
	return nil
}

// first is the first of joined errors.
func first(err error) error {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		return joined.Unwrap()[0]
	}
	return err
}

// CheckUsers checks a user count. Errors read "problem (fix)".
func CheckUsers(users int) error {
	switch {
	case users < 1:
		return input.Errorf("users", "{users} %d is too few (give at least 1, one session each)", users)
	case users > MaxUsers:
		return input.Errorf("users", "{users} %d is more than %d (one session each, more than any server accepts: give fewer)", users, MaxUsers)
	}
	return nil
}

// CheckRamp checks a ramp-up.
func CheckRamp(ramp time.Duration) error {
	switch {
	case ramp < 0:
		return input.Errorf("ramp", "{ramp} %v is negative (give 0 or more, e.g. {ramp} 2m)", ramp)
	case ramp > MaxRamp:
		return input.Errorf("ramp", "{ramp} %v is longer than %v (a ramp-up takes minutes, HammerDB's default is 2m: e.g. {ramp} 2m)", ramp, MaxRamp)
	}
	return nil
}

// CheckDuration checks a timed window.
func CheckDuration(duration time.Duration) error {
	switch {
	case duration < MinDuration:
		return input.Errorf("duration", "{duration} %v is too short (measure for at least %v; the papers used 5m: e.g. {duration} 5m)", duration, MinDuration)
	case duration > MaxDuration:
		return input.Errorf("duration", "{duration} %v is longer than %v (a timed window takes minutes to hours, HammerDB's default is 5m: e.g. {duration} 5m)", duration, MaxDuration)
	}
	return nil
}

// CheckRate checks an offered rate (transactions a minute, 0: closed loop).
func CheckRate(rate float64) error {
	switch {
	case rate < 0 || math.IsNaN(rate):
		return input.Errorf("rate", "{rate} %g is negative (give transactions per minute, e.g. {rate} 30000, or 0 for closed-loop users)", rate)
	case rate > MaxRate:
		return input.Errorf("rate", "{rate} %g is more than %g transactions per minute (the rate is per minute, not per second: e.g. {rate} 30000)", rate, float64(MaxRate))
	}
	return nil
}

// CheckUntilSteady checks the longest a window run until steady may last against the
// planned duration.
func CheckUntilSteady(longest, duration time.Duration) error {
	switch {
	case longest <= duration:
		return input.Errorf("until_steady", "{until_steady} %v is not longer than the duration %v (give the longest the timed window may run, above its duration: e.g. %s)",
			longest, duration, example(max(2*duration, 10*time.Minute)))
	case longest > MaxDuration:
		return input.Errorf("until_steady", "{until_steady} %v is longer than %v (a window run until steady takes minutes to hours: e.g. 10m)", longest, MaxDuration)
	case duration < steady.MinSeconds*time.Second:
		return input.Errorf("until_steady", "{until_steady} needs a duration of at least %d s, the shortest window judged steady or not, and the duration is %v (lengthen the duration, or run without {until_steady})",
			steady.MinSeconds, duration)
	}
	return nil
}

// CheckClientCPUs checks how many CPUs the driver may use against those this process
// may run on (runtime.NumCPU counts the affinity mask, a cpuset's CPUs): GOMAXPROCS
// beyond them only adds threads, and 100000 of them exhaust the process's thread
// limit.
func CheckClientCPUs(n int) error {
	if n < 1 || n > runtime.NumCPU() {
		return input.Errorf("client_cpus", "{client_cpus} %d is out of range (give 1 to %d, the CPUs this process may use)", n, runtime.NumCPU())
	}
	return nil
}

// example writes a duration as one types it: 10m, 1h, 1h30m.
func example(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
