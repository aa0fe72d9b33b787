package study

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/cost"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/engine"
	_ "github.com/storbench/storbench/internal/engine/mysql"    // the managed engines: their warehouses' size
	_ "github.com/storbench/storbench/internal/engine/postgres" // (load.CheckSpace) and their servers' memory
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance"
	_ "github.com/storbench/storbench/internal/instance/mariadb"  // floors (instance.CheckMemory) check a
	_ "github.com/storbench/storbench/internal/instance/postgres" // study's workload and memory
	"github.com/storbench/storbench/internal/load"
	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/yamlfile"
)

// Defaults of a study file. The run durations are HammerDB's own TPROC-C defaults
// (2 minutes of ramp-up, 5 minutes timed), which the papers kept or lengthened, so a
// study that leaves them out measures what a HammerDB user would expect.
const (
	DefaultKind       = "managed"
	DefaultEngine     = "postgres"
	DefaultRestore    = "each-step"
	DefaultRamp       = driver.DefaultRamp
	DefaultDuration   = driver.DefaultDuration
	DefaultRepeats    = 1
	DefaultCycles     = 3
	DefaultMethod     = "physical"
	DefaultFioSize    = fio.DefaultStudySize
	DefaultFioRuntime = fio.DefaultRuntime
	DefaultInterval   = metrics.DefaultInterval
	DefaultIOLatency  = metrics.DefaultIOLatency
	// DefaultMaxClockSkew: NTP keeps hosts within milliseconds; seconds mean a
	// host without time synchronisation.
	DefaultMaxClockSkew = metrics.DefaultMaxClockSkew
)

const minRunSeconds = time.Second

// memTotal reports the machine's memory; a variable so tests do not depend on the
// machine they run on.
var memTotal = readMemTotal

// managedEngines are the engines storbench can create a server of.
var managedEngines = []string{"postgres", "mariadb"}

// Load reads and checks a study file; the study it returns has every default filled
// in, so the runner never has to guess.
func Load(path string) (*Study, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: study file %s does not exist (check the path; examples/ has study files to start from)", input.ErrInvalid, path)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: study file: %v", input.ErrInvalid, err)
	}
	return Parse(path, data)
}

// Parse checks a study file's text; name is how errors name the file.
func Parse(name string, data []byte) (*Study, error) {
	var s Study
	doc, err := yamlfile.Decode(name, data, &s, studyFile)
	if err != nil {
		return nil, err
	}
	c := &checker{file: name, doc: doc}
	c.study(&s)
	if err := yamlfile.Earliest(c.errs); err != nil {
		return nil, err
	}
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
		{Type: Noisy{}, Name: "noisy"},
		{Type: Metrics{}, Name: "metrics"},
		{Type: cost.Model{}, Name: "costs"},
		{Type: cost.Licence{}, Name: "a licence under costs"},
		{Type: cost.Configuration{}, Name: "a configuration under costs"},
		{Type: cost.Hardware{}, Name: "a hardware item under costs"},
	},
}

// UnmarshalYAML reads 90s, 5m or 1h30m. A bare number is refused: seconds or minutes
// is exactly the ambiguity that ruins a night of runs.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return yamlfile.Invalid(n, "expected a duration, got "+yamlfile.Describe(n), "write e.g. 90s or 5m")
	}
	switch n.ShortTag() {
	case "!!int", "!!float":
		return yamlfile.Invalid(n, fmt.Sprintf("duration %s has no unit", n.Value), "write e.g. "+n.Value+"s or "+n.Value+"m")
	}
	v, err := time.ParseDuration(strings.TrimSpace(n.Value))
	if err != nil {
		return yamlfile.Invalid(n, fmt.Sprintf("%q is not a duration", yamlfile.Clip(n.Value)), "write e.g. 90s, 5m or 1h30m")
	}
	if v < 0 {
		return yamlfile.Invalid(n, fmt.Sprintf("duration %s is negative", n.Value), "durations are 0s or more")
	}
	d.Duration = v
	return nil
}

// UnmarshalYAML reads 512MB or 2GB (powers of 1024, as memory is sized).
func (s *Size) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return yamlfile.Invalid(n, "expected a size, got "+yamlfile.Describe(n), "write e.g. 2GB or 512MB")
	}
	v, err := instance.ParseSize(n.Value)
	if err != nil {
		return yamlfile.Invalid(n, fmt.Sprintf("%q is not a size", yamlfile.Clip(n.Value)), "write a number and a unit, e.g. 2GB or 512MB")
	}
	s.Bytes = v
	return nil
}

// UnmarshalYAML reads a list of user counts, a single count, or a series:
//
//	users: [1, 2, 4, 8]
//	users: {fibonacci: 89}             # 1, 2, 3, 5, 8, …, 89
//	users: {powers: 128, extra: [89]}  # 1, 2, 4, …, 128 and 89
//
// A series ends at its maximum even when that is not a member (fibonacci: 100 ends
// …, 55, 89, 100): whoever wrote 100 wants the sweep to reach 100 users.
func (u *Users) UnmarshalYAML(n *yaml.Node) error {
	var vals []int
	switch n.Kind {
	case yaml.ScalarNode:
		v, err := userCount(n)
		if err != nil {
			return err
		}
		vals = []int{v}
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			return yamlfile.Invalid(n, "users is an empty list", "give at least one user count, e.g. [1, 2, 4]")
		}
		for _, item := range n.Content {
			v, err := userCount(item)
			if err != nil {
				return err
			}
			vals = append(vals, v)
		}
	case yaml.MappingNode:
		var series, extra *yaml.Node
		var seriesKey string
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if first, dup := seen[k.Value]; dup {
				return yamlfile.Invalid(k, fmt.Sprintf("users: %s given twice, first at line %d", k.Value, first), "keep one")
			}
			seen[k.Value] = k.Line
			switch k.Value {
			case "fibonacci", "powers":
				if series != nil {
					return yamlfile.Invalid(k, fmt.Sprintf("users has both %s and %s", seriesKey, k.Value), "choose one series; add other counts with extra: [..]")
				}
				series, seriesKey = v, k.Value
			case "extra":
				extra = v
			default:
				return yamlfile.Invalid(k, fmt.Sprintf("unknown key %q in users", k.Value), "use fibonacci: N or powers: N, and optionally extra: [..]")
			}
		}
		if series == nil {
			return yamlfile.Invalid(n, "users has no fibonacci: N or powers: N", "add one, or write the counts as a list")
		}
		last, err := userCount(series)
		if err != nil {
			return err
		}
		if seriesKey == "fibonacci" {
			vals = fibonacciUpTo(last)
		} else {
			vals = powersUpTo(last)
		}
		if extra != nil {
			if extra.Kind == yaml.MappingNode {
				return yamlfile.Invalid(extra, "users: extra is a mapping", "write extra as a list, e.g. extra: [89]")
			}
			var more Users
			if err := more.UnmarshalYAML(extra); err != nil {
				return err
			}
			vals = append(vals, more.Values...)
		}
	default:
		return yamlfile.Invalid(n, "expected user counts, got "+yamlfile.Describe(n), "write a list, e.g. [1, 2, 4], or fibonacci: 89")
	}
	slices.Sort(vals)
	u.Values = slices.Compact(vals)
	return nil
}

func userCount(n *yaml.Node) (int, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		v := ""
		if n.Kind == yaml.ScalarNode {
			v = fmt.Sprintf(" %q", yamlfile.Clip(n.Value))
		}
		return 0, yamlfile.Invalid(n, fmt.Sprintf("expected a user count, got %s%s", yamlfile.Describe(n), v), "write a whole number of 1 or more")
	}
	var v int
	if err := n.Decode(&v); err != nil {
		return 0, yamlfile.Invalid(n, fmt.Sprintf("user count %s is out of range", n.Value), fmt.Sprintf("every count is 1 to %d", driver.MaxUsers))
	}
	if err := driver.CheckUsers("", v); err != nil {
		return 0, yamlfile.Refused(n, err)
	}
	return v, nil
}

// fibonacciUpTo is HammerDB autopilot's favourite sequence, 1, 2, 3, 5, 8, …, ending
// at last.
func fibonacciUpTo(last int) []int {
	var out []int
	for a, b := 1, 2; a <= last; a, b = b, a+b {
		out = append(out, a)
	}
	if out[len(out)-1] != last {
		out = append(out, last)
	}
	return out
}

// powersUpTo is 1, 2, 4, …, ending at last.
func powersUpTo(last int) []int {
	var out []int
	for v := 1; v <= last; v *= 2 {
		out = append(out, v)
	}
	if out[len(out)-1] != last {
		out = append(out, last)
	}
	return out
}

// readMemTotal reads MemTotal from /proc/meminfo.
func readMemTotal() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("meminfo: MemTotal %q", fields[1])
			}
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("meminfo has no MemTotal")
}

// checker validates a decoded study and fills in its defaults, keeping every problem
// with its line so the earliest one in the file is reported.
type checker struct {
	file string
	doc  yamlfile.Doc
	errs []*yamlfile.LineError
}

// errf records a problem at path: what and hint are one format, so args run on from
// what into hint.
func (c *checker) errf(path, what, hint string, args ...any) {
	c.errs = append(c.errs, &yamlfile.LineError{File: c.file, Line: c.doc.Line(path), Msg: fmt.Sprintf(what+" ("+hint+")", args...)})
}

// refuse records at path the problem the setting's owning package found (its
// message names the setting and the fix).
func (c *checker) refuse(path string, err error) {
	c.errs = append(c.errs, &yamlfile.LineError{File: c.file, Line: c.doc.Line(path), Msg: err.Error()})
}

var (
	studyNameRE     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	shortNameRE     = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,39}$`)
	envNameRE       = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	deviceNameRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	sshTargetRE     = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*@[A-Za-z0-9.:\[\]-]+$`)
	cpuListRE       = regexp.MustCompile(`^\d+(-\d+)?(,\d+(-\d+)?)*$`)
	experimentKinds = []string{UserSweep, MemorySweep, CPUSweep, StorageProfiles, BackupRestore, Replication, Consolidation}
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
	paths := map[string]string{}
	for i := range s.Targets {
		c.target(i, &s.Targets[i], names, paths)
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

	c.metrics(&s.Metrics)
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

func (c *checker) target(i int, t *Target, names map[string]int, paths map[string]string) {
	p := func(key string) string { return fmt.Sprintf("targets[%d].%s", i, key) }
	if !c.doc.Has(p("name")) {
		c.errf(p("name"), "target %d has no name", "add e.g. name: nvme; step IDs and results use it", i+1)
	} else {
		c.uniqueName(p("name"), "target", t.Name, names, "give each target its own name")
	}

	if !c.doc.Has(p("kind")) {
		t.Kind = DefaultKind
	}
	managedOnly := []string{"engine", "path", "wal_path", "memory", "cpus", "replica"}
	externalOnly := []string{"dsn", "password_env", "host_metrics", "metrics_host", "metrics_devices", "host", "ssh", "ssh_key", "known_hosts"}
	switch t.Kind {
	case "managed":
		for _, k := range externalOnly {
			if c.doc.Has(p(k)) {
				c.errf(p(k), "%s is for external targets", "a managed target's server is created on its path; use kind: external to connect to a server", k)
			}
		}
		c.managed(i, t, paths)
	case "external":
		for _, k := range managedOnly {
			if c.doc.Has(p(k)) {
				c.errf(p(k), "%s is for managed targets", "storbench does not control an external server; its engine is the dsn's scheme", k)
			}
		}
		c.external(i, t)
	default:
		c.errf(p("kind"), "target kind %q is unknown", "use managed, a server storbench creates on path, or external, a server at dsn", t.Kind)
	}
}

func (c *checker) managed(i int, t *Target, paths map[string]string) {
	p := func(key string) string { return fmt.Sprintf("targets[%d].%s", i, key) }
	if !c.doc.Has(p("engine")) {
		t.Engine = DefaultEngine
	} else if !slices.Contains(managedEngines, t.Engine) {
		c.errf(p("engine"), "engine %q cannot be managed", "storbench creates %s servers; for another engine use kind: external with a dsn", t.Engine, strings.Join(managedEngines, " and "))
	}

	ownPath := func(key, dir string) {
		if !filepath.IsAbs(dir) {
			c.errf(p(key), "%s %q is not an absolute path", "write the full directory, e.g. /mnt/nvme/storbench", key, dir)
			return
		}
		clean := filepath.Clean(dir)
		if other, dup := paths[clean]; dup {
			c.errf(p(key), "%s %s is also %s", "every server and WAL directory needs a directory of its own", key, dir, other)
			return
		}
		paths[clean] = fmt.Sprintf("target %s's %s", t.Name, key)
	}
	if t.Path == "" {
		c.errf(p("path"), "managed target %s has no path", "add path: the directory on the storage under test, e.g. /mnt/nvme/storbench", t.Name)
	} else {
		ownPath("path", t.Path)
	}
	if t.WALPath != "" {
		ownPath("wal_path", t.WALPath)
	}
	if t.Replica != nil {
		if t.Replica.Path == "" {
			c.errf(p("replica"), "the replica of %s has no path", "add path: under replica, the standby's directory on its own storage", t.Name)
		} else {
			ownPath("replica.path", t.Replica.Path)
		}
	}
	if c.doc.Has(p("memory")) {
		c.memory(p("memory"), []string{t.Engine}, t.Memory.Bytes)
	}
	if c.doc.Has(p("cpus")) {
		c.cpus(p("cpus"), t.CPUs)
	}
}

// managedEngineNames are the engines of the managed targets an experiment runs on:
// each must run in the memory the experiment gives.
func managedEngineNames(s *Study, e *Experiment) []string {
	var out []string
	for _, t := range experimentTargets(s, e) {
		if t.Kind == "managed" && !slices.Contains(out, t.Engine) {
			out = append(out, t.Engine)
		}
	}
	return out
}

// memory refuses a variant that cannot be what it claims: too small to run, or more
// than the machine has, which the cgroup would allow and the page cache would fake.
func (c *checker) memory(path string, engines []string, b int64) {
	for _, name := range engines {
		if err := instance.CheckMemory("", name, b); err != nil {
			c.refuse(path, err)
			return
		}
	}
	total, err := memTotal()
	if err == nil && total > 0 && b > total {
		c.errf(path, "memory %s is more than this machine's %s", "a limit above the machine's memory is no limit; give at most %s", instance.FormatSize(b), instance.FormatSize(total), instance.FormatSize(total))
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

func (c *checker) external(i int, t *Target) {
	p := func(key string) string { return fmt.Sprintf("targets[%d].%s", i, key) }
	if t.DSN == "" {
		c.errf(p("dsn"), "external target %s has no dsn", "add dsn: e.g. postgres://bench@db1:5432/tpcc", t.Name)
	} else if u, err := url.Parse(t.DSN); err != nil || u.Scheme == "" || (u.Host == "" && u.Path == "") {
		c.errf(p("dsn"), "dsn of %s is not a URL", "write e.g. postgres://bench@db1:5432/tpcc or sqlite:///path/to/tpcc.db", t.Name)
	} else if _, has := u.User.Password(); has || u.Query().Has("password") {
		c.errf(p("dsn"), "dsn of %s holds a password", "a study file is stored with the results: remove the password and name an environment variable that holds it with password_env", t.Name)
	}
	if t.PasswordEnv != "" {
		if !envNameRE.MatchString(t.PasswordEnv) {
			c.errf(p("password_env"), "password_env %q is not an environment variable name", "give the variable's name, e.g. PGPASSWORD, not its value", t.PasswordEnv)
		} else if u, err := url.Parse(t.DSN); t.DSN != "" && err == nil && u.User == nil {
			// The password goes with the DSN's user name; without one it would be dropped.
			c.errf(p("dsn"), "dsn of %s has no user for the password in %s", "write the user before the host, e.g. postgres://bench@db1:5432/tpcc", t.Name, t.PasswordEnv)
		}
	}
	metricsKey := "metrics_host"
	switch {
	case t.HostMetrics != "" && t.MetricsHost != "":
		c.errf(p("metrics_host"), "target %s has both host_metrics and metrics_host", "they are one setting (metrics_host is its older name): keep host_metrics", t.Name)
	case t.HostMetrics != "":
		t.MetricsHost, metricsKey = t.HostMetrics, "host_metrics"
	}
	if t.MetricsHost != "" {
		if u, err := url.Parse(t.MetricsHost); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			c.errf(p(metricsKey), "%s %q is not an http URL", "give node_exporter's URL, e.g. http://db1:9100/metrics", metricsKey, t.MetricsHost)
		}
	}
	for j, d := range t.MetricsDevices {
		if !deviceNameRE.MatchString(d) {
			c.errf(fmt.Sprintf("%s[%d]", p("metrics_devices"), j), "metrics device %q is not a disk's name", "name it as /proc/diskstats does, e.g. nvme0n1 or sda, without /dev/", d)
		}
	}
	if len(t.MetricsDevices) > 0 && t.MetricsHost == "" {
		c.errf(p("metrics_devices"), "metrics_devices of %s needs host_metrics", "the devices are sampled from the host's node_exporter: add host_metrics: http://HOST:9100/metrics", t.Name)
	}
	if t.SSH != "" && !sshTargetRE.MatchString(t.SSH) {
		c.errf(p("ssh"), "ssh %q is not user@host", "write e.g. ssh: bench@db1 or bench@db1:2222", t.SSH)
	}
	for _, k := range []struct{ key, path string }{{"ssh_key", t.SSHKey}, {"known_hosts", t.KnownHosts}} {
		if k.path == "" {
			continue
		}
		if t.SSH == "" {
			c.errf(p(k.key), "%s of %s needs ssh", "add ssh: user@host, or remove %s", k.key, t.Name, k.key)
		} else if !filepath.IsAbs(k.path) {
			c.errf(p(k.key), "%s %q is not an absolute path", "write the full path, e.g. /home/bench/.ssh/known_hosts", k.key, k.path)
		}
	}
	if t.Host == "" && t.DSN != "" {
		if u, err := url.Parse(t.DSN); err == nil {
			t.Host = u.Hostname()
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
		scheme := t.Engine
		if t.Kind == "external" {
			u, err := url.Parse(t.DSN)
			if err != nil {
				continue // refused with the target
			}
			scheme = u.Scheme
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
		if err := load.CheckWarehouses("", w.Warehouses); err != nil {
			c.refuse("workload.warehouses", err)
		}
	}
	// Without workload.mode each run takes its engine's best (engine.Best, resolved by
	// the driver as for storbench run).
	if c.doc.Has("workload.mode") && w.Mode != "procedures" && w.Mode != "sql" {
		c.errf("workload.mode", "mode %q is unknown", "use procedures, stored procedures as HammerDB does, or sql, statements sent by the client", w.Mode)
	}
	if !c.doc.Has("workload.inputs") {
		w.Inputs = driver.DefaultInputs
	} else if err := driver.CheckInputs("", w.Inputs); err != nil {
		c.refuse("workload.inputs", err)
	}
	if !c.doc.Has("workload.schema") {
		w.Schema = load.DefaultSchema
	} else if err := load.CheckSchema("", w.Schema); err != nil {
		c.refuse("workload.schema", err)
	}
	if !c.doc.Has("workload.restore") {
		w.Restore = DefaultRestore
	} else if w.Restore != "each-step" && w.Restore != "never" {
		c.errf("workload.restore", "restore %q is unknown", "use each-step, every step from the base image, or never", w.Restore)
	}
}

// space refuses a workload a managed target's storage surely cannot hold, before
// any instance is made there (the free space of an external server's is unknown
// here: its build checks it, or MaxWarehouses bounds it).
func (c *checker) space(s *Study) {
	if load.CheckWarehouses("", s.Workload.Warehouses) != nil {
		return
	}
	// A consolidation puts a copy of the database per instance on its target.
	copies := map[*Target]int{}
	for i := range s.Experiments {
		e := &s.Experiments[i]
		for _, t := range experimentTargets(s, e) {
			copies[t] = max(copies[t], 1, e.Instances)
		}
	}
	for i := range s.Targets {
		t := &s.Targets[i]
		// A target an earlier run of the study prepared (a resume) holds its data
		// already: its free space no longer tells whether the data fits.
		if t.Kind != "managed" || !filepath.IsAbs(t.Path) || instance.Claimed(t.Path) {
			continue
		}
		n := max(copies[t], 1)
		if err := load.CheckSpace(t.Engine, n*s.Workload.Warehouses, t.Path); err != nil {
			if n > 1 {
				err = fmt.Errorf("a consolidation of %d instances, a copy of the database each: %w", n, err)
			}
			c.refuse("workload.warehouses", fmt.Errorf("target %s: %w", t.Name, err))
			return
		}
	}
}

// kindKnobs are the keys each experiment kind reads; a key of another kind is most
// likely a misplaced line, and ignoring it would silently run something else.
var kindKnobs = map[string][]string{
	UserSweep:       {"users", "ramp", "duration", "repeats"},
	MemorySweep:     {"users", "ramp", "duration", "repeats", "memory"},
	CPUSweep:        {"users", "ramp", "duration", "repeats", "cpus"},
	Replication:     {"users", "ramp", "duration", "repeats"},
	StorageProfiles: {"profiles", "size", "runtime"},
	BackupRestore:   {"cycles", "method"},
	Consolidation:   {"users", "ramp", "duration", "instances", "instance_memory", "instance_cpus", "noisy", "baseline"},
}

// allKnobs are the keys of every kind, in a fixed order: the union of kindKnobs.
var allKnobs = func() []string {
	var all []string
	for _, kind := range experimentKinds {
		for _, k := range kindKnobs[kind] {
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
		c.errf(p("kind"), "experiment %d has no kind", "add kind: one of %s", i+1, strings.Join(experimentKinds, ", "))
		return
	}
	knobs, known := kindKnobs[e.Kind]
	if !known {
		c.errf(p("kind"), "experiment kind %q is unknown", "use one of %s", e.Kind, strings.Join(experimentKinds, ", "))
		return
	}

	// The kind names an experiment by default; a second one of the same kind needs a
	// name of its own, as step IDs hold it.
	if !c.doc.Has(p("name")) {
		e.Name = e.Kind
	}
	c.uniqueName(p("name"), "experiment", e.Name, names, "name each experiment, e.g. name: sweep-long")

	for _, k := range allKnobs {
		if c.doc.Has(p(k)) && !slices.Contains(knobs, k) {
			c.errf(p(k), "%s does not apply to a %s experiment", "it takes %s; remove the line or move it to an experiment of the kind that uses it", k, e.Kind, strings.Join(knobs, ", "))
		}
	}

	c.experimentTargets(s, i)

	if slices.Contains(knobs, "users") {
		c.sweep(i, e)
	}
	switch e.Kind {
	case MemorySweep:
		if len(e.Memory) == 0 {
			c.errf(p("memory"), "%s has no memory values", "add memory: e.g. [8GB, 2GB]", label(e))
		}
		distinct(c, p("memory"), "memory", e.Memory, func(m Size) string { return instance.FormatSize(m.Bytes) },
			func(ip string, m Size) { c.memory(ip, managedEngineNames(s, e), m.Bytes) })
	case CPUSweep:
		if len(e.CPUs) == 0 {
			c.errf(p("cpus"), "%s has no cpu sets", "add cpus: e.g. [0-3, 0-1, 0]", label(e))
		}
		distinct(c, p("cpus"), "cpus", e.CPUs, func(set string) string { return set }, c.cpus)
	case StorageProfiles:
		if len(e.Profiles) == 0 {
			c.errf(p("profiles"), "%s has no profiles", "add profiles: e.g. [sql-data-8k]; storbench fio --list names them", label(e))
		}
		distinct(c, p("profiles"), "profile", e.Profiles, func(name string) string { return name }, func(ip, name string) {
			if _, err := fio.Lookup([]string{name}, false); err != nil {
				c.errf(ip, "fio profile %q is unknown", "use one of %s", name, strings.Join(profileNames(), ", "))
			}
		})
		if !c.doc.Has(p("size")) {
			e.Size = Size{DefaultFioSize}
		} else if e.Size.Bytes < fio.MinSize {
			c.errf(p("size"), "size %s is too small for a test file", "give at least 16MB; larger than the device's cache measures the device", instance.FormatSize(e.Size.Bytes))
		}
		if !c.doc.Has(p("runtime")) {
			e.Runtime = Duration{DefaultFioRuntime}
		} else if e.Runtime.Duration < minRunSeconds {
			c.errf(p("runtime"), "runtime %s is too short", "give at least 1s per point", e.Runtime)
		}
	case Consolidation:
		c.consolidation(s, i, e)
	case BackupRestore:
		if !c.doc.Has(p("cycles")) {
			e.Cycles = DefaultCycles
		} else if e.Cycles < 1 {
			c.errf(p("cycles"), "cycles %d is too few", "give 1 or more backup-then-restore cycles", e.Cycles)
		}
		if !c.doc.Has(p("method")) {
			e.Method = DefaultMethod
		} else if e.Method != "physical" && e.Method != "logical" {
			c.errf(p("method"), "method %q is unknown", "use physical, a copy of the server's files, or logical, a dump", e.Method)
		}
	}
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
	if e.Noisy == nil {
		if e.Baseline {
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

// window fills in and checks a TPC-C experiment's ramp and timed window.
func (c *checker) window(i int, e *Experiment) {
	p := func(key string) string { return fmt.Sprintf("experiments[%d].%s", i, key) }
	if !c.doc.Has(p("ramp")) {
		e.Ramp = Duration{DefaultRamp}
	}
	if !c.doc.Has(p("duration")) {
		e.Duration = Duration{DefaultDuration}
	} else if e.Duration.Duration < minRunSeconds {
		c.errf(p("duration"), "duration %s is too short", "measure for at least 1s; the papers used 5m", e.Duration)
	} else if err := driver.CheckDuration("", e.Duration.Duration); err != nil {
		c.refuse(p("duration"), err)
	}
	if err := driver.CheckRamp("", e.Ramp.Duration); err != nil {
		c.refuse(p("ramp"), err)
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
		c.errf(p("instances"), "%d instances of %s need %s, more than 80%% of this machine's %s", "give fewer instances or less instance_memory",
			e.Instances, instance.FormatSize(e.InstanceMemory.Bytes), instance.FormatSize(int64(e.Instances)*e.InstanceMemory.Bytes), instance.FormatSize(total))
	}
	if procs, ok := maxProcesses(); ok && len(e.Users.Values) == 1 && int64(e.Instances*driver.ServerConnections(e.Users.Values[0])) > procs {
		c.errf(p("instances"), "%d instances of %d users need about %d processes, this user may run %d", "give fewer instances or users, or raise ulimit -u",
			e.Instances, e.Users.Values[0], e.Instances*driver.ServerConnections(e.Users.Values[0]), procs)
	}
}

// externalTargets are the external targets a consolidation names: it then runs
// across their hosts, each target one of the consolidated databases.
func externalTargets(s *Study, e *Experiment) []*Target {
	var out []*Target
	for _, t := range experimentTargets(s, e) {
		if t.Kind == "external" {
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
// of PostgreSQL, from this machine or over SSH on the host.
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
	for _, t := range noisy {
		if u, err := url.Parse(t.DSN); err == nil && u.Scheme != "postgres" && u.Scheme != "postgresql" {
			c.errf(np("instances"), "noisy target %s is not PostgreSQL", "physical backups across hosts are pg_basebackup's: make the last targets PostgreSQL ones", t.Name)
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

func (c *checker) sweep(i int, e *Experiment) {
	p := func(key string) string { return fmt.Sprintf("experiments[%d].%s", i, key) }
	if len(e.Users.Values) == 0 {
		c.errf(p("users"), "%s has no users", "add users: e.g. [1, 2, 4, 8] or fibonacci: 89", label(e))
	}
	c.window(i, e)
	if !c.doc.Has(p("repeats")) {
		e.Repeats = DefaultRepeats
	} else if e.Repeats < 1 {
		c.errf(p("repeats"), "repeats %d is too few", "give 1 or more; 3 gives the report a spread", e.Repeats)
	}
}

// experimentTargets checks the targets an experiment names, or, when it names none,
// that its kind applies to at least one.
func (c *checker) experimentTargets(s *Study, i int) {
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
		k := slices.IndexFunc(s.Targets, func(t Target) bool { return t.Name == name })
		if k < 0 {
			c.errf(ip, "%s names target %q, which the study does not have", "use one of the names under targets: %s", label(e), name, strings.Join(targetNames(s), ", "))
			continue
		}
		if why := notApplicable(e.Kind, &s.Targets[k]); why != "" {
			fix := "remove it from targets:"
			if e.Kind == Replication && s.Targets[k].Kind == "managed" {
				fix = "give the target a replica: with a path and sync: true, or remove it from targets:"
			}
			c.errf(ip, "%s cannot run on target %s: %s", fix, e.Kind, name, why)
		}
	}
	if len(e.Targets) == 0 && len(s.Targets) > 0 && len(experimentTargets(s, e)) == 0 {
		what := "managed"
		if e.Kind == Replication {
			what = "managed with a replica"
		}
		c.errf(fmt.Sprintf("experiments[%d].kind", i), "%s has no target to run on", "it runs on targets that are %s, and the study has none", label(e), what)
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

// notApplicable says why an experiment kind cannot run on a target ("" when it can):
// storbench can only resize, pin, replicate, back up or fio-test the servers and
// directories it manages.
func notApplicable(kind string, t *Target) string {
	managed := t.Kind == "" || t.Kind == "managed"
	switch kind {
	case MemorySweep, CPUSweep, BackupRestore:
		if !managed {
			return "it is external, and storbench only controls the servers it manages"
		}
	case StorageProfiles:
		if !managed {
			return "it is external, so it has no path here to test"
		}
	case Replication:
		if !managed {
			return "it is external, and storbench only controls the servers it manages"
		}
		if t.Replica == nil {
			return "it has no replica"
		}
	}
	return ""
}

// experimentTargets are the targets an experiment runs on: those it names, in the
// order it names them, or else every target its kind applies to, in file order.
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
	for k := range s.Targets {
		// A consolidation across hosts names its external targets; unnamed, it
		// runs on each managed target's storage.
		if notApplicable(e.Kind, &s.Targets[k]) == "" && (e.Kind != Consolidation || s.Targets[k].Kind != "external") {
			out = append(out, &s.Targets[k])
		}
	}
	return out
}

func targetNames(s *Study) []string {
	var out []string
	for _, t := range s.Targets {
		out = append(out, t.Name)
	}
	return out
}

func profileNames() []string {
	var out []string
	for _, p := range fio.Profiles {
		out = append(out, p.Name)
	}
	return out
}

func (c *checker) metrics(m *Metrics) {
	if !c.doc.Has("metrics.interval") {
		m.Interval = Duration{DefaultInterval}
	} else if err := metrics.CheckInterval("interval", m.Interval.Duration); err != nil {
		c.refuse("metrics.interval", err)
	}
	if !c.doc.Has("metrics.max_clock_skew") {
		m.MaxClockSkew = Duration{DefaultMaxClockSkew}
	} else if m.MaxClockSkew.Duration <= 0 {
		c.errf("metrics.max_clock_skew", "max_clock_skew %s is not positive", "give how far a host's clock may be from this machine's, e.g. 2s", m.MaxClockSkew)
	}
	if !c.doc.Has("metrics.io_latency") {
		m.IOLatency = DefaultIOLatency
	} else if err := metrics.CheckIOLatency("io_latency", m.IOLatency); err != nil {
		c.refuse("metrics.io_latency", err)
	}
}

// maxProcesses is this user's process limit (ulimit -u); false when unlimited.
func maxProcesses() (int64, bool) {
	var l unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NPROC, &l) != nil || l.Cur == unix.RLIM_INFINITY {
		return 0, false
	}
	return int64(l.Cur), true
}
