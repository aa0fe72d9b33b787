package study

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/cost"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/engine"
	_ "github.com/storbench/storbench/internal/engine/all" // the engines: a build's size (load.CheckSpace), their modes
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/infile"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance"
	_ "github.com/storbench/storbench/internal/instance/mariadb"  // the engines managed, whose floors (instance.CheckMemory) check a
	_ "github.com/storbench/storbench/internal/instance/postgres" // study's workload and memory
	"github.com/storbench/storbench/internal/load"
	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/yamlfile"
)

// Defaults of a study file. The run durations are HammerDB's own TPROC-C defaults
// (2 minutes of ramp-up, 5 minutes timed), which the papers kept or lengthened, so a
// study that leaves them out measures what a HammerDB user would expect.
const (
	DefaultKind         = "managed"
	DefaultEngine       = "postgres"
	DefaultRestore      = "each-step"
	DefaultRamp         = driver.DefaultRamp
	DefaultDuration     = driver.DefaultDuration
	DefaultRepeats      = 1
	DefaultCycles       = 3
	DefaultMethod       = "physical"
	DefaultFioSize      = fio.DefaultStudySize
	DefaultFioRuntime   = fio.DefaultRuntime
	DefaultInterval     = metrics.DefaultInterval
	DefaultIOLatency    = metrics.DefaultIOLatency
	DefaultWaitRate     = metrics.DefaultWaitRate
	DefaultMaxClockSkew = metrics.DefaultMaxClockSkew
)

// studyKind is a study file as read: a file a person writes.
var studyKind = infile.Kind{What: "study file", Limit: infile.HandWrittenLimit}

// Load reads and checks a study file; the study it returns has every default filled
// in, so the runner never has to guess.
func Load(path string) (*Study, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// ReadFile reads a study file's text: a regular file within its bound.
func ReadFile(path string) ([]byte, error) {
	data, err := studyKind.Read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: study file %s does not exist (check the path; examples/ has study files to start from)", input.ErrInvalid, path)
	}
	return data, err
}

// Parse checks a study file's text; name is how errors name the file.
func Parse(name string, data []byte) (*Study, error) {
	s := Study{Workload: Workload{Workload: driver.DefaultWorkload()}}
	doc, err := yamlfile.Decode(name, data, &s, studyFile)
	if err != nil {
		return nil, err
	}
	c := &checker{file: name, doc: doc}
	c.study(&s)
	if err := yamlfile.Earliest(c.errs); err != nil {
		return nil, err
	}
	s.file, s.line, s.machine = name, doc.Line, c.machine
	return &s, nil
}

// studyFile is how a study file's messages name its parts.
var studyFile = yamlfile.Options{
	Empty:       "a study needs name, targets, workload and experiments",
	OneDocument: "a study file holds one study; split it into two files",
	Example:     "the examples/ directory",
	Places: []yamlfile.Place{
		{Type: Study{}, Name: "the study"},
		{Type: Target{}, Name: "a target"},
		{Type: Replica{}, Name: "replica"},
		{Type: Workload{}, Name: "workload"},
		{Type: Experiment{}, Name: "an experiment"},
		{Type: SLO{}, Name: "slo"},
		{Type: Noisy{}, Name: "noisy"},
		{Type: UntilSteady{}, Name: "until_steady"},
		{Type: Metrics{}, Name: "metrics"},
		{Type: cost.Model{}, Name: "costs"},
		{Type: cost.Licence{}, Name: "a licence under costs"},
		{Type: cost.Configuration{}, Name: "a configuration under costs"},
		{Type: cost.Hardware{}, Name: "a hardware item under costs"},
	},
}

// checker validates a decoded study and fills in its defaults, keeping every problem
// with its line so the earliest one in the file is reported.
type checker struct {
	file string
	doc  yamlfile.Doc
	errs []*yamlfile.LineError
	// machine are the file's problems on this machine (its memory, its free space,
	// this user's process limit), for CheckMachine: a study written for another
	// machine still parses, and study plan shows what it would do.
	machine []*yamlfile.LineError
}

// errf records a problem at path: what and hint are one format, so args run on from
// what into hint.
func (c *checker) errf(path, what, hint string, args ...any) {
	c.errs = append(c.errs, &yamlfile.LineError{File: c.file, Line: c.doc.Line(path), Msg: fmt.Sprintf(what+" ("+hint+")", args...)})
}

// refuse records at path the problem the setting's owning package found: its message
// names the setting and the fix, and the file's line says it is bad input. The
// settings it names (input.Errorf's keys) are named as the file spells them: a key of
// the block at path by itself, as the line points there; a workload key named from
// another block by its place, workload.keying; and the keys in places by theirs.
func (c *checker) refuse(path string, err error, places ...place) {
	c.errs = append(c.errs, &yamlfile.LineError{File: c.file, Line: c.doc.Line(path), Msg: refusalText(path, err, places...)})
}

// refusalText is err's text as refuse words it at path.
func refusalText(path string, err error, places ...place) string {
	block := path[:strings.LastIndexByte(path, '.')+1]
	name := func(key string) string {
		for _, p := range places {
			if p.key == key {
				return p.path
			}
		}
		if block != "workload." && slices.Contains(workloadKeys, key) {
			return "workload." + key
		}
		return key
	}
	// The file's line says it is bad input: the words say it no more, causes' neither.
	return strings.ReplaceAll(input.Render(err, name), input.ErrInvalid.Error()+": ", "")
}

// place is where a study file keeps a setting an owner names by key.
type place struct{ key, path string }

// refuseEach refuses, each at its setting's line in block, every setting err refuses.
func (c *checker) refuseEach(block string, err error) {
	for _, e := range input.Errors(err) {
		c.refuse(block+"."+e.Setting, e)
	}
}

// workloadKeys are the keys of a study's workload block.
var workloadKeys = yamlfile.Keys(reflect.TypeFor[Workload]())

// beyondMachine records at path what this machine cannot give, as refuse words it.
func (c *checker) beyondMachine(path string, err error) {
	c.machine = append(c.machine, &yamlfile.LineError{File: c.file, Line: c.doc.Line(path), Msg: refusalText(path, err)})
}

var (
	studyNameRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	shortNameRE  = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,39}$`)
	envNameRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	deviceNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	sshTargetRE  = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*@[A-Za-z0-9.:\[\]-]+$`)
	cpuListRE    = regexp.MustCompile(`^\d+(-\d+)?(,\d+(-\d+)?)*$`)
)

func (c *checker) study(s *Study) {
	switch {
	case !c.doc.Has("name"):
		c.errf("name", "the study has no name", "add e.g. name: nvme-vs-sata; it names the results")
	case !studyNameRE.MatchString(s.Name):
		c.errf("name", "name %q is not a study name", "use letters, digits, '.', '-' and '_', starting with a letter or digit, at most 64", s.Name)
	}

	if len(s.Targets) == 0 {
		c.errf("targets", "the study has no targets", "add targets: with at least one target, managed with a path or external with a dsn")
	}
	names := map[string]int{}
	for i := range s.Targets {
		c.target(i, &s.Targets[i], names)
	}

	c.workload(&s.Workload)
	c.modes(s)
	c.space(s)

	if len(s.Experiments) == 0 {
		c.errf("experiments", "the study has no experiments", "add experiments: with at least one, e.g. - kind: user-sweep")
	}
	expNames := map[string]int{}
	for i := range s.Experiments {
		c.experiment(s, i, expNames)
	}
	c.openLoop(s)

	c.metrics(s)
	c.costs(s.Costs)
	if !c.doc.Has("on_failure") {
		s.OnFailure = FailureStops
	} else if s.OnFailure != FailureStops && s.OnFailure != FailureContinues {
		c.errf("on_failure", "on_failure %q is unknown", "use stop, to end the study at a failed step, or continue, to go on with the next", s.OnFailure)
	}
}

// costs checks the cost model, if the study has one, and fills in its defaults; its
// problem is reported at its line like the study's own.
func (c *checker) costs(m *cost.Model) {
	if m == nil {
		return
	}
	var fe *cost.FieldError
	if err := m.Validate(); errors.As(err, &fe) {
		c.errs = append(c.errs, &yamlfile.LineError{File: c.file, Line: c.doc.Line("costs." + fe.Path), Msg: fe.Msg})
	}
}

// memory refuses a variant that cannot be what it claims: too small to run, or more
// than the machine has, which the cgroup would allow and the page cache would fake.
func (c *checker) memory(path string, engines []string, b int64) {
	for _, name := range engines {
		if err := instance.CheckMemory(name, b); err != nil {
			c.refuse(path, err)
			return
		}
	}
	if total, err := memTotal(); err == nil {
		if err := instance.CheckMachineMemory(b, total); err != nil {
			c.beyondMachine(path, err)
		}
	}
}

func (c *checker) cpus(path, list string) {
	if !cpuListRE.MatchString(list) {
		c.errf(path, "cpus %q is not a CPU list", "write CPU numbers and ranges without spaces, e.g. 0-3 or 0,2", list)
		return
	}
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, _ := strconv.Atoi(lo)
		if b, _ := strconv.Atoi(hi); isRange && b < a {
			c.errf(path, "cpus %q has the range %s backwards", "write the lower CPU first, e.g. %d-%d", list, part, b, a)
			return
		}
	}
}

// modes refuses an explicit workload.mode a target's engine cannot run, before the
// study starts rather than at each of its steps.
func (c *checker) modes(s *Study) {
	if !c.doc.Has("workload.mode") {
		return
	}
	for _, t := range s.Targets {
		k := t.kindOf()
		if k == nil {
			continue // refused with the target
		}
		scheme, ok := k.engine(&t)
		if !ok {
			continue // refused with the target
		}
		if err := engine.CheckMode(scheme, engine.Mode(s.Workload.Mode)); err != nil {
			c.refuse("workload.mode", fmt.Errorf("target %s: %w", t.Name, err))
		}
	}
}

func (c *checker) workload(w *Workload) {
	switch {
	case !c.doc.Has("workload.warehouses"):
		c.errf("workload.warehouses", "the workload has no warehouses", "add warehouses: N under workload:, the schema size, about 100MB each")
	default:
		if err := load.CheckWarehouses(w.Warehouses); err != nil {
			c.refuse("workload.warehouses", err)
		}
	}
	// Without workload.mode each run takes its engine's best (engine.Best, resolved by
	// the driver as for storbench run).
	c.refuseEach("workload", w.Workload.Check())
	if !c.doc.Has("workload.schema") {
		w.Schema = load.DefaultSchema
	} else if err := load.CheckSchema(w.Schema); err != nil {
		c.refuse("workload.schema", err)
	}
	if !c.doc.Has("workload.restore") {
		w.Restore = DefaultRestore
	} else if w.Restore != "each-step" && w.Restore != "never" {
		c.errf("workload.restore", "restore %q is unknown", "use each-step, every step from the base image, or never", w.Restore)
	}
}

// openLoop checks the workload's open-loop settings, once the experiments that offer
// a rate (rate, a capacity search's start_rate) are checked: a rate paces the users,
// so it cannot go with keying and think times, and a latency limit needs a rate.
func (c *checker) openLoop(s *Study) {
	w := &s.Workload
	var rate float64
	for i, e := range s.Experiments {
		rate = max(rate, e.Rate, e.StartRate)
		if e.Rate > 0 && w.Keying {
			c.errf(fmt.Sprintf("experiments[%d].rate", i), "rate and workload.keying both pace the users", "an open-loop run's arrivals replace keying and think times: remove rate, or set keying: false")
		}
	}
	if limit := w.LatencyLimit.Duration; limit > 0 && rate == 0 {
		c.errf("workload.latency_limit", "latency_limit %v skips transactions already that late, which only open-loop steps have, and no experiment offers a rate", "give an experiment rate:, run a capacity search, or remove latency_limit", limit)
	}
}

// space refuses a workload a managed target's storage surely cannot hold, before
// any instance is made there (the free space of an external server's is unknown
// here: its build checks it, or MaxWarehouses bounds it).
func (c *checker) space(s *Study) {
	if load.CheckWarehouses(s.Workload.Warehouses) != nil {
		return
	}
	// A consolidation puts a copy of the database per instance beside its target.
	copies := map[*Target]int{}
	for i := range s.Experiments {
		e := &s.Experiments[i]
		for _, t := range experimentTargets(s, e) {
			copies[t] = max(copies[t], e.Instances)
		}
	}
	for i := range s.Targets {
		t := &s.Targets[i]
		// A target an earlier run of the study prepared (a resume) holds its data
		// already: its free space no longer tells whether the data fits.
		if !t.manages() || !filepath.IsAbs(t.Path) || instance.Claimed(t.Path) {
			continue
		}
		// The target's own instance: its data in path, its log in wal_path.
		f := engine.RegisteredFootprint(t.Engine)
		err := load.CheckSpace(f, 1, s.Workload.Warehouses, t.Path, t.WALPath)
		// A consolidation's instances are made beside path (PATH-c1, …) without a
		// wal_path: each one's log is on their data's filesystem.
		if n := copies[t]; err == nil && n > 1 {
			if err = load.CheckSpace(f, n, s.Workload.Warehouses, consolidatedPath(t.Path, 0), ""); err != nil {
				err = fmt.Errorf("a consolidation of %d instances, a copy of the database each: %w", n, err)
			}
		}
		if err != nil {
			c.beyondMachine("workload.warehouses", fmt.Errorf("target %s: %w", t.Name, err))
			return
		}
	}
}

// uniqueName checks a target's or experiment's name: step IDs and results hold it, so
// it must be short, plain and used once.
func (c *checker) uniqueName(path, what, name string, names map[string]int, hint string) {
	if !shortNameRE.MatchString(name) {
		c.errf(path, "%s name %q is not allowed", "use lower-case letters, digits, '-' and '_', starting with a letter, at most 40", what, name)
		return
	}
	if first, dup := names[name]; dup {
		c.errf(path, "%s name %q is used twice", "the first is at line %d; "+hint, what, name, first)
		return
	}
	names[name] = c.doc.Line(path)
}

// distinct checks each item of the list at path once: a repeat is reported with the
// line of its first (a copy-paste slip, or a variant run twice); the others go to check.
func distinct[T any](c *checker, path, what string, items []T, show func(T) string, check func(ip string, item T)) {
	seen := map[string]int{}
	for j, item := range items {
		ip := fmt.Sprintf("%s[%d]", path, j)
		key := show(item)
		if first, dup := seen[key]; dup {
			c.errf(ip, "%s %s is listed twice", "the first is at line %d", what, key, first)
			continue
		}
		seen[key] = c.doc.Line(ip)
		check(ip, item)
	}
}

// label names an experiment in messages: by its kind, and its name when it has one
// of its own.
func label(e *Experiment) string {
	if e.Name == "" || e.Name == e.Kind {
		return "the " + e.Kind + " experiment"
	}
	return fmt.Sprintf("the %s experiment %q", e.Kind, e.Name)
}

func targetNames(s *Study) []string {
	var out []string
	for _, t := range s.Targets {
		out = append(out, t.Name)
	}
	return out
}

func (c *checker) metrics(s *Study) {
	m := &s.Metrics
	if !c.doc.Has("metrics.interval") {
		m.Interval = Duration{Duration: DefaultInterval}
	} else if err := metrics.CheckInterval(m.Interval.Duration); err != nil {
		c.refuse("metrics.interval", err)
	}
	if !c.doc.Has("metrics.max_clock_skew") {
		m.MaxClockSkew = Duration{Duration: DefaultMaxClockSkew}
	} else if err := metrics.CheckMaxClockSkew(m.MaxClockSkew.Duration); err != nil {
		c.refuse("metrics.max_clock_skew", err)
	}
	if !c.doc.Has("metrics.wait_rate") {
		m.WaitRate = DefaultWaitRate
	} else if err := metrics.CheckWaitRate(m.WaitRate); err != nil {
		c.refuse("metrics.wait_rate", err)
	}
	if !c.doc.Has("metrics.io_latency") {
		m.IOLatency = DefaultIOLatency
	} else if err := metrics.CheckIOLatency(m.IOLatency); err != nil {
		c.refuse("metrics.io_latency", err)
	} else if m.IOLatency == "on" {
		// Tracing sees this machine's block layer only: "on" (trace or fail) cannot
		// hold for a target whose disks are sampled on its own host.
		for _, t := range s.Targets {
			if t.MetricsHost != "" {
				c.errf("metrics.io_latency", "io_latency on cannot trace target %s's disks", "they are sampled on its host through node_exporter, and tracing sees this machine's only: use auto, which traces the targets on this machine", t.Name)
				break
			}
		}
	}
}
