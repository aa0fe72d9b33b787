package study

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/yamlfile/yamlfiletest"
)

// withMemTotal makes the machine look as large as bytes for one test.
func withMemTotal(t *testing.T, bytes int64) {
	t.Helper()
	old := memTotal
	memTotal = func() (int64, error) { return bytes, nil }
	t.Cleanup(func() { memTotal = old })
}

func mustParse(t *testing.T, text string) *Study {
	t.Helper()
	s, err := Parse("study.yaml", []byte(text))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}

// parseFails parses text, expecting an error at line that contains want, in the
// form yamlfiletest.CheckError checks: the file's own, or for a file that parses one
// of this machine's (CheckMachine), as study plan reports them.
func parseFails(t *testing.T, text string, line int, want string) {
	t.Helper()
	err := refusedAt(t, text, line, want)
	t.Log(err)
	yamlfiletest.CheckError(t, err, "study.yaml", line, want)
}

// refusedAt is Parse's error for text, or when it parses the refusal of CheckMachine
// at line that contains want (nil when there is none).
func refusedAt(t *testing.T, text string, line int, want string) error {
	t.Helper()
	s, err := Parse("study.yaml", []byte(text))
	if err != nil {
		return err
	}
	for _, r := range CheckMachine(s, t.TempDir()) {
		if r.Line == line && strings.Contains(r.Msg, want) {
			return r
		}
	}
	return nil
}

// minimal is the smallest valid study; the error cases below are it with one line
// changed, so their line numbers read against it:
//
//	1 name, 2 targets, 3 target name, 4 path, 5 workload, 6 warehouses,
//	7 experiments, 8 kind, 9 users
const minimal = `name: t
targets:
  - name: nvme
    path: /mnt/nvme
workload:
  warehouses: 2
experiments:
  - kind: user-sweep
    users: [1, 2]
`

// edit replaces the first occurrence of old in minimal.
func edit(old, new string) string {
	if !strings.Contains(minimal, old) {
		panic("minimal has no " + old)
	}
	return strings.Replace(minimal, old, new, 1)
}

func TestParseDefaults(t *testing.T) {
	s := mustParse(t, minimal)
	tg := s.Targets[0]
	if tg.Kind != "managed" || tg.Engine != "postgres" {
		t.Errorf("target kind %q engine %q, want managed postgres", tg.Kind, tg.Engine)
	}
	w := s.Workload
	if w.Mode != engine.Best || w.Restore != "each-step" || w.Warehouses != 2 || w.Inputs != "spec" || w.Schema != "spec" || w.MaxRetries != driver.DefaultRetries {
		t.Errorf("workload %+v, want the engine's best mode, each-step, 2 warehouses, spec inputs and schema, the driver's retries", w)
	}
	// The driver's settings are a study's as they are the command line's: retries
	// too, which a study could not set before they were declared once.
	if w := mustParse(t, edit("warehouses: 2", "warehouses: 2\n  retries: 0")).Workload; w.MaxRetries != 0 {
		t.Errorf("workload retries %d, want 0 as given", w.MaxRetries)
	}
	if w := mustParse(t, edit("warehouses: 2", "warehouses: 2\n  schema: hammerdb")).Workload; w.Schema != "hammerdb" {
		t.Errorf("workload schema %q, want hammerdb as given", w.Schema)
	}
	if w := mustParse(t, edit("warehouses: 2", "warehouses: 2\n  inputs: hammerdb")).Workload; w.Inputs != "hammerdb" {
		t.Errorf("workload inputs %q, want hammerdb as given", w.Inputs)
	}
	e := s.Experiments[0]
	if e.Name != "user-sweep" || e.Repeats != 1 || e.Ramp.Duration != 2*time.Minute || e.Duration.Duration != 5*time.Minute {
		t.Errorf("experiment name %q repeats %d ramp %v duration %v, want user-sweep 1 2m 5m", e.Name, e.Repeats, e.Ramp, e.Duration)
	}
	if s.Metrics.Interval.Duration != time.Second || s.Metrics.IOLatency != "auto" || s.Metrics.WaitRate != 10 {
		t.Errorf("metrics %+v, want 1s auto, wait rate 10", s.Metrics)
	}

	s = mustParse(t, minimal+`  - kind: storage-profiles
    profiles: [sql-data-8k]
  - kind: backup-restore
`)
	if e := s.Experiments[1]; e.Size.Bytes != 1<<30 || e.Runtime.Duration != 30*time.Second {
		t.Errorf("storage-profiles size %d runtime %v, want 1GB 30s", e.Size.Bytes, e.Runtime)
	}
	if e := s.Experiments[2]; e.Cycles != 3 || e.Method != "physical" {
		t.Errorf("backup-restore cycles %d method %q, want 3 physical", e.Cycles, e.Method)
	}
}

// Values given as zero stay zero (or are refused): a default only fills what the file
// leaves out.
func TestParseExplicitZero(t *testing.T) {
	s := mustParse(t, edit("    users: [1, 2]\n", "    users: [1, 2]\n    ramp: 0s\n"))
	if s.Experiments[0].Ramp.Duration != 0 {
		t.Errorf("ramp: 0s became %v", s.Experiments[0].Ramp)
	}
	// An empty value is as if left out.
	s = mustParse(t, edit("    users: [1, 2]\n", "    users: [1, 2]\n    ramp:\n"))
	if s.Experiments[0].Ramp.Duration != DefaultRamp {
		t.Errorf("empty ramp: became %v, want the default", s.Experiments[0].Ramp)
	}
}

func TestParseErrors(t *testing.T) {
	withMemTotal(t, 16<<30)
	cases := []struct {
		name string
		text string
		line int
		want string
	}{
		// Strict YAML.
		{"unknown top key", edit("workload:", "worklaod:\n  x: 1\nworkload:"), 5, `unknown key "worklaod" in the study (did you mean "workload"?)`},
		{"unknown target key", edit("    path: /mnt/nvme\n", "    path: /mnt/nvme\n    walpath: /mnt/wal\n"), 5, `unknown key "walpath" in a target (did you mean "wal_path"?)`},
		{"unknown key, no near match", edit("    users: [1, 2]\n", "    users: [1, 2]\n    zzzzzz: 1\n"), 10, "known keys: name, kind, targets"},
		{"unknown noisy key", edit("  - kind: user-sweep\n    users: [1, 2]\n", "  - kind: consolidation\n    noisy:\n      interval: 10s\n      intervall: 5s\n"), 11, `unknown key "intervall" in noisy (did you mean "interval"?)`},
		{"unknown replica key", edit("    path: /mnt/nvme\n", "    path: /mnt/nvme\n    replica:\n      path: /r\n      synchronous: true\n"), 7, `unknown key "synchronous" in replica`},
		{"wrong type", edit("warehouses: 2", "warehouses: lots"), 6, `warehouses: expected a whole number, got text "lots" (e.g. 10`},
		{"octal count", edit("warehouses: 2", "warehouses: 010"), 6, "warehouses: 010 is not a decimal number, YAML reads it as 8 (write it in decimal digits, without a leading zero)"},
		{"octal in a user list", edit("users: [1, 2]", "users: [1, 02]"), 9, "users: 02 is not a decimal number"},
		{"list expected", edit("users: [1, 2]", "users: [1, 2]\n    targets: nvme"), 10, "targets: expected a list, got text"},
		{"key twice", edit("  warehouses: 2\n", "  warehouses: 2\n  warehouses: 3\n"), 7, `"warehouses" given twice`},
		{"syntax", edit("    path: /mnt/nvme\n", "    path: /mnt/nvme\n   bad: [\n"), 5, "not valid YAML"},
		{"tab", edit("    path: /mnt/nvme\n", "\tpath: /mnt/nvme\n"), 4, "spaces, not tabs"},
		{"second document", minimal + "---\nname: u\n", 10, "a second YAML document"},
		{"syntax in a second document", minimal + "---\nname: [\n", 11, "not valid YAML"},
		{"mapping for a list", edit("targets:\n  - name: nvme\n    path: /mnt/nvme", "targets:\n  name: nvme\n  path: /mnt/nvme"), 3, `targets: expected a list, got a mapping (one item per line starting with "- "`},

		// Durations, sizes and users.
		{"duration without unit", edit("users: [1, 2]", "users: [1, 2]\n    ramp: 90"), 10, "duration 90 has no unit"},
		{"duration not a duration", edit("users: [1, 2]", "users: [1, 2]\n    duration: soon"), 10, `"soon" is not a duration`},
		{"negative ramp", edit("users: [1, 2]", "users: [1, 2]\n    ramp: -5s"), 10, "ramp -5s is negative"},
		{"negative duration", edit("users: [1, 2]", "users: [1, 2]\n    duration: -2s"), 10, "duration -2s is too short"},
		{"negative interval", "metrics:\n  interval: -1s\n" + minimal, 2, "interval -1s is too short"},
		{"size not a size", edit("path: /mnt/nvme", "path: /mnt/nvme\n    memory: big"), 5, `"big" is not a size`},
		{"users zero", edit("users: [1, 2]", "users: [0, 2]"), 9, "users 0 is too few"},
		{"users text", edit("users: [1, 2]", "users:\n      - 1\n      - many"), 11, `expected a user count, got text "many"`},
		{"users empty list", edit("users: [1, 2]", "users: []"), 9, "users is an empty list"},
		{"users unknown series", edit("users: [1, 2]", "users:\n      fib: 89"), 10, `unknown key "fib" in users`},
		{"users two series", edit("users: [1, 2]", "users:\n      fibonacci: 89\n      powers: 64"), 11, "both fibonacci and powers"},
		{"users no series", edit("users: [1, 2]", "users:\n      extra: [3]"), 10, "no fibonacci: N or powers: N"},
		{"users series zero", edit("users: [1, 2]", "users: {powers: 0}"), 9, "users 0 is too few"},
		{"users too many", edit("users: [1, 2]", "users: {fibonacci: 1000000}"), 9, "users 1000000 is more than 100000"},
		{"users above the driver's bound", edit("users: [1, 2]", "users: [1, 200000]"), 9, "users 200000 is more than 100000"},
		{"users extra zero", edit("users: [1, 2]", "users:\n      powers: 8\n      extra: [89, 0]"), 11, "users 0 is too few"},
		{"users extra mapping", edit("users: [1, 2]", "users:\n      powers: 8\n      extra: {a: 1}"), 11, "extra is a mapping"},
		{"users key twice", edit("users: [1, 2]", "users:\n      powers: 8\n      powers: 16"), 11, "powers given twice, first at line 10"},

		// The study.
		{"no name", strings.Replace(minimal, "name: t\n", "description: x\n", 1), 1, "the study has no name"},
		{"bad name", edit("name: t", "name: my study"), 1, `name "my study" is not a study name`},
		{"no targets", strings.Replace(minimal, "targets:\n  - name: nvme\n    path: /mnt/nvme\n", "targets: []\n", 1), 2, "the study has no targets"},
		{"syntax in a long list", edit("users: [1, 2]", "users:\n      - 1\n      - 2\n      - 3\n     - 4"), 13, "not valid YAML"},
		{"unclosed quote", edit("path: /mnt/nvme", "path: \"/mnt/nvme"), 4, "not valid YAML"},
		{"no experiments", strings.Replace(minimal, "  - kind: user-sweep\n    users: [1, 2]\n", "", 1), 7, "the study has no experiments"},
		{"empty file", "# nothing yet\n", 1, "the file is empty"},

		// Targets.
		{"target no name", edit("  - name: nvme\n    path", "  - path"), 3, "target 1 has no name"},
		{"target upper case", edit("name: nvme", "name: NVMe"), 3, `target name "NVMe" is not allowed`},
		{"target name twice", edit("    path: /mnt/nvme\n", "    path: /mnt/nvme\n  - name: nvme\n    path: /mnt/other\n"), 5, `target name "nvme" is used twice (the first is at line 3`},
		{"target kind", edit("path: /mnt/nvme", "path: /mnt/nvme\n    kind: cloud"), 5, `target kind "cloud" is unknown`},
		{"managed no path", edit("    path: /mnt/nvme\n", "    memory: 1GB\n"), 3, "managed target nvme has no path"},
		{"relative path", edit("path: /mnt/nvme", "path: mnt/nvme"), 4, `targets[0].path "mnt/nvme" is not an absolute path`},
		{"relative wal_path", edit("path: /mnt/nvme", "path: /mnt/nvme\n    wal_path: wal"), 5, `wal_path "wal" is not an absolute path`},
		{"path with a newline", edit("path: /mnt/nvme", `path: "/mnt/nv\nme"`), 4, `targets[0].path "/mnt/nv\nme" holds a control character`},
		{"wal_path with a tab", edit("path: /mnt/nvme", "path: /mnt/nvme\n    wal_path: \"/mnt/w\\tal\""), 5, `targets[0].wal_path "/mnt/w\tal" holds a control character`},
		{"engine not managed", edit("path: /mnt/nvme", "path: /mnt/nvme\n    engine: oracle"), 5, `engine "oracle" cannot be managed`},
		{"memory too small", edit("path: /mnt/nvme", "path: /mnt/nvme\n    memory: 32MB"), 5, "memory 32MB is too small"},
		{"memory above machine", edit("path: /mnt/nvme", "path: /mnt/nvme\n    memory: 32GB"), 5, "memory 32GB is more than this machine's 16GB"},
		{"cpus syntax", edit("path: /mnt/nvme", "path: /mnt/nvme\n    cpus: 0 - 3"), 5, `cpus "0 - 3" is not a CPU list`},
		{"cpus backwards", edit("path: /mnt/nvme", "path: /mnt/nvme\n    cpus: 0,3-1"), 5, "has the range 3-1 backwards"},
		{"replica no path", edit("path: /mnt/nvme", "path: /mnt/nvme\n    replica:\n      sync: true"), 5, "the replica of nvme has no path"},
		{"replica path relative", edit("path: /mnt/nvme", "path: /mnt/nvme\n    replica: {path: r}"), 5, `replica.path "r" is not an absolute path`},
		{"dsn on managed", edit("path: /mnt/nvme", "path: /mnt/nvme\n    dsn: postgres://u@h/db"), 5, "dsn is for external targets"},
		{"external no dsn", edit("path: /mnt/nvme", "kind: external"), 3, "external target nvme has no dsn"},
		{"external with path", edit("path: /mnt/nvme", "path: /mnt/nvme\n    kind: external\n    dsn: postgres://u@h/db"), 4, "path is for managed targets"},
		{"external dsn password", edit("path: /mnt/nvme", "kind: external\n    dsn: postgres://bench:secret@db1:5432/tpcc"), 5, "dsn of nvme holds a password (a study file is stored with the results: remove the password and name an environment variable that holds it with password_env)"},
		{"external dsn password param", edit("path: /mnt/nvme", "kind: external\n    dsn: postgres://bench@db1/tpcc?password=x"), 5, "holds a password"},
		{"external dsn not URL", edit("path: /mnt/nvme", "kind: external\n    dsn: host=db1 user=bench"), 5, "is not a URL"},
		{"password_env not a name", edit("path: /mnt/nvme", "kind: external\n    dsn: postgres://bench@db1/tpcc\n    password_env: s3cr=t"), 6, `password_env "s3cr=t" is not an environment variable name`},
		{"password_env without user", edit("path: /mnt/nvme", "kind: external\n    dsn: postgres://db1/tpcc\n    password_env: PGPASSWORD"), 5, "has no user for the password"},
		{"metrics_host not http", edit("path: /mnt/nvme", "kind: external\n    dsn: postgres://bench@db1/tpcc\n    metrics_host: db1:9100"), 6, "is not an http URL"},

		// Workload.
		{"no workload", strings.Replace(minimal, "workload:\n  warehouses: 2\n", "", 1), 1, "the workload has no warehouses"},
		{"no warehouses", edit("  warehouses: 2\n", "  mode: sql\n"), 5, "the workload has no warehouses"},
		{"warehouses zero", edit("warehouses: 2", "warehouses: 0"), 6, "warehouses 0 is too few"},
		{"warehouses beyond any storage", edit("warehouses: 2", "warehouses: 1e12"), 6, "warehouses 1000000000000 is more than 1000000"},
		{"mode", edit("warehouses: 2", "warehouses: 2\n  mode: tcl"), 7, `mode "tcl" is unknown`},
		{"inputs", edit("warehouses: 2", "warehouses: 2\n  inputs: tproc-c"), 7, `inputs "tproc-c" is unknown (use spec, the TPC-C spec's, or hammerdb, HammerDB 4.12's TPROC-C)`},
		{"schema", edit("warehouses: 2", "warehouses: 2\n  schema: tproc-c"), 7, `schema "tproc-c" is unknown (use spec, storbench's: stock keyed by warehouse then item`},
		{"restore", edit("warehouses: 2", "warehouses: 2\n  restore: sometimes"), 7, `restore "sometimes" is unknown`},

		// Experiments.
		{"no kind", edit("  - kind: user-sweep\n", "  - name: x\n"), 8, "experiment 1 has no kind"},
		{"unknown kind", edit("kind: user-sweep", "kind: tpch"), 8, `experiment kind "tpch" is unknown`},
		{"experiment name", edit("kind: user-sweep", "kind: user-sweep\n    name: Sweep 1"), 9, `experiment name "Sweep 1" is not allowed`},
		{"experiment name twice", minimal + "  - kind: user-sweep\n    users: [4]\n", 10, `experiment name "user-sweep" is used twice (the first is at line 8`},
		{"unknown target", edit("users: [1, 2]", "users: [1, 2]\n    targets: [nvme, sata]"), 10, `the user-sweep experiment names target "sata", which the study does not have (use one of the names under targets: nvme)`},
		{"target listed twice", edit("users: [1, 2]", "users: [1, 2]\n    targets:\n      - nvme\n      - nvme"), 12, "target nvme is listed twice"},
		{"sweep no users", edit("    users: [1, 2]\n", "    ramp: 1s\n"), 8, "the user-sweep experiment has no users (add users:"},
		{"null users", edit("users: [1, 2]", "users:"), 9, "has no users"},
		{"repeats zero", edit("users: [1, 2]", "users: [1, 2]\n    repeats: 0"), 10, "repeats 0 is too few"},
		{"duration too short", edit("users: [1, 2]", "users: [1, 2]\n    duration: 500ms"), 10, "duration 500ms is too short"},
		{"duration too long", edit("users: [1, 2]", "users: [1, 2]\n    duration: 200h"), 10, "duration 200h0m0s is longer than 168h0m0s"},
		{"ramp too long", edit("users: [1, 2]", "users: [1, 2]\n    ramp: 25h"), 10, "ramp 25h0m0s is longer than 24h0m0s"},
		{"until_steady without max", edit("users: [1, 2]", "users: [1, 2]\n    until_steady: {}"), 10, "experiments[0].until_steady has no max (give the longest the timed window may run, e.g. until_steady: {max: 10m})"},
		{"until_steady not a mapping", edit("users: [1, 2]", "users: [1, 2]\n    until_steady: 10m"), 10, "until_steady"},
		{"until_steady unknown key", edit("users: [1, 2]", "users: [1, 2]\n    until_steady:\n      maximum: 10m"), 11, `unknown key "maximum" in until_steady (known keys: max)`},
		{"until_steady max not above duration", edit("users: [1, 2]", "users: [1, 2]\n    duration: 5m\n    until_steady:\n      max: 5m"), 12, "experiments[0].until_steady.max 5m0s is not longer than the duration 5m0s (give the longest the timed window may run, above its duration: e.g. 10m)"},
		{"until_steady max zero", edit("users: [1, 2]", "users: [1, 2]\n    until_steady: {max: 0s}"), 10, "experiments[0].until_steady.max 0s is not longer than the duration 5m0s"},
		{"until_steady max too long", edit("users: [1, 2]", "users: [1, 2]\n    until_steady: {max: 200h}"), 10, "experiments[0].until_steady.max 200h0m0s is longer than 168h0m0s"},
		{"until_steady duration too short to judge", edit("users: [1, 2]", "users: [1, 2]\n    duration: 10s\n    until_steady: {max: 1m}"), 11, "experiments[0].until_steady.max needs a duration of at least 20 s, the shortest window judged steady or not, and the duration is 10s"},
		{"until_steady in a second experiment", minimal + "  - kind: memory-sweep\n    name: mem\n    users: [4]\n    memory: [1GB]\n    until_steady: {max: 1m}\n", 14, "experiments[1].until_steady.max 1m0s is not longer than the duration 5m0s"},
		{"until_steady on a consolidation", minimal + "  - kind: consolidation\n    instances: 2\n    users: 1\n    until_steady: {max: 10m}\n", 13, "until_steady does not apply to a consolidation experiment"},
		{"memory too small for mariadb", edit("path: /mnt/nvme", "path: /mnt/nvme\n    engine: mariadb\n    memory: 128MB"), 6, "memory 128MB is too small (a mariadb server needs at least 160MB)"},
		{"knob of another kind", edit("users: [1, 2]", "users: [1, 2]\n    profiles: [sql-data-8k]"), 10, "profiles does not apply to a user-sweep experiment"},
		{"memory-sweep no memory", edit("kind: user-sweep", "kind: memory-sweep"), 8, "the memory-sweep experiment has no memory values"},
		{"memory-sweep small", edit("kind: user-sweep", "kind: memory-sweep\n    memory: [1GB, 16MB]"), 9, "memory 16MB is too small"},
		{"memory-sweep above machine", edit("kind: user-sweep", "kind: memory-sweep\n    memory:\n      - 1GB\n      - 64GB"), 11, "memory 64GB is more than this machine's 16GB"},
		{"memory-sweep twice", edit("kind: user-sweep", "kind: memory-sweep\n    memory:\n      - 1GB\n      - 1024MB"), 11, "memory 1GB is listed twice (the first is at line 10)"},
		{"cpu-sweep no cpus", edit("kind: user-sweep", "kind: cpu-sweep"), 8, "the cpu-sweep experiment has no cpu sets"},
		{"cpu-sweep syntax", edit("kind: user-sweep", "kind: cpu-sweep\n    cpus:\n      - 0-3\n      - 0-"), 11, `cpus "0-" is not a CPU list`},
		{"cpu-sweep twice", edit("kind: user-sweep", "kind: cpu-sweep\n    cpus: [0-1, 0-1]"), 9, "cpus 0-1 is listed twice"},
		{"profiles none", edit("  - kind: user-sweep\n    users: [1, 2]\n", "  - kind: storage-profiles\n"), 8, "the storage-profiles experiment has no profiles"},
		{"profile unknown", edit("  - kind: user-sweep\n    users: [1, 2]\n", "  - kind: storage-profiles\n    profiles:\n      - sql-data-8k\n      - diskspd\n"), 11, `fio profile "diskspd" is unknown (use one of hcibench-4k-70r, sql-data-8k`},
		{"profile twice", edit("  - kind: user-sweep\n    users: [1, 2]\n", "  - kind: storage-profiles\n    profiles: [log-seq, log-seq]\n"), 9, "profile log-seq is listed twice"},
		{"fio size", edit("  - kind: user-sweep\n    users: [1, 2]\n", "  - kind: storage-profiles\n    profiles: [log-seq]\n    size: 4KB\n"), 10, "size is under 16MB, too small for a test file"},
		{"fio runtime", edit("  - kind: user-sweep\n    users: [1, 2]\n", "  - kind: storage-profiles\n    profiles: [log-seq]\n    runtime: 0s\n"), 10, "runtime 0s is too short"},
		{"cycles", edit("  - kind: user-sweep\n    users: [1, 2]\n", "  - kind: backup-restore\n    cycles: 0\n"), 9, "cycles 0 is too few"},
		{"method", edit("  - kind: user-sweep\n    users: [1, 2]\n", "  - kind: backup-restore\n    method: snapshot\n"), 9, `method "snapshot" is unknown`},
		{"replication without replica", edit("kind: user-sweep", "kind: replication"), 8, "the replication experiment has no target to run on (it runs on targets that are managed with a replica"},
		{"replication names target without replica", edit("kind: user-sweep", "kind: replication\n    targets: [nvme]"), 9, "replication cannot run on target nvme: it has no replica (give the target a replica:"},

		// Experiments that only managed targets can run.
		{"memory-sweep on external", externalOnly("  - kind: memory-sweep\n    memory: [1GB]\n    users: [1]\n    targets: [ext]\n"), 12, "memory-sweep cannot run on target ext: it is external"},
		{"cpu-sweep without managed targets", externalOnly("  - kind: cpu-sweep\n    cpus: [0]\n    users: [1]\n"), 9, "the cpu-sweep experiment has no target to run on (it runs on targets that are managed,"},
		{"storage-profiles without managed targets", externalOnly("  - kind: storage-profiles\n    profiles: [log-seq]\n"), 9, "the storage-profiles experiment has no target to run on"},
		{"storage-profiles on external", externalOnly("  - kind: storage-profiles\n    profiles: [log-seq]\n    targets: [ext]\n"), 11, "storage-profiles cannot run on target ext: it is external, so it has no path"},
		{"backup-restore without managed targets", externalOnly("  - kind: backup-restore\n"), 9, "the backup-restore experiment has no target to run on"},

		// Metrics.
		{"interval", minimal + "metrics:\n  interval: 50ms\n", 11, "interval 50ms is too short"},
		{"io_latency", minimal + "metrics:\n  io_latency: maybe\n", 11, `io_latency "maybe" is unknown`},
		{"wait_rate", minimal + "metrics:\n  wait_rate: 500\n", 11, "wait_rate 500 is out of range"},
		// Was silently turned into auto: "on" promises tracing or a failure.
		{"io_latency on beside host metrics", hosts("", "metrics:\n  io_latency: on\n"), 18, "io_latency on cannot trace target db1's disks"},
		{"on_failure", minimal + "on_failure: retry\n", 10, `on_failure "retry" is unknown`},

		// Across hosts.
		{"both metrics URLs", hosts("    metrics_host: http://db1:9100/metrics\n", ""), 7, "has both host_metrics and metrics_host"},
		{"ssh not user@host", hosts("    ssh: db1\n", ""), 7, `ssh "db1" is not user@host`},
		{"known_hosts without ssh", hosts("    known_hosts: /k\n", ""), 7, "known_hosts of db1 needs ssh"},
		{"relative ssh_key", hosts("    ssh: b@db1\n    ssh_key: id\n", ""), 8, `ssh_key "id" is not an absolute path`},
		{"device without host_metrics", strings.Replace(externalOnly("  - kind: user-sweep\n    users: [1]\n"), "    dsn:", "    metrics_devices: [sda]\n    dsn:", 1), 5, "metrics_devices of ext needs host_metrics"},
		{"device with /dev", hosts("    metrics_devices: [/dev/sda]\n", ""), 7, `metrics device "/dev/sda" is not a disk's name`},
		{"no host_metrics across hosts", strings.Replace(hosts("", ""), "    host_metrics: http://db2:9100/metrics\n", "", 1), 14, "target db2 has no host_metrics"},
		{"instances across hosts", hosts("", "    instances: 3\n"), 17, "instances is for a consolidation on one managed target"},
		{"backups on a host without ssh", hosts("", "    noisy: {instances: 1, interval: 10s, cycles: 1, run_on: host, path: /b}\n"), 17, "backups of db2 run on its host, which needs ssh"},
		{"backups on a host without path", hosts("    ssh: b@db2\n", "    noisy: {instances: 1, interval: 10s, cycles: 1, run_on: host}\n"), 18, "backups run on the host need a path there"},
		{"logical across hosts", hosts("", "    noisy: {instances: 1, interval: 10s, cycles: 1, method: logical}\n"), 17, `method "logical" across hosts is not supported`},
		// The engines come from their registries: the instance packages linked.
		{"noisy target of an engine not backed up across hosts", strings.Replace(hosts("", "    noisy: {instances: 1, interval: 10s, cycles: 1}\n"), "dsn: postgres://bench@db2", "dsn: mysql://bench@db2", 1), 17,
			"noisy target db2 is not postgres (storbench backs up only postgres servers across hosts: make the last targets postgres ones)"},
		{"engine not managed names the managed ones", edit("path: /mnt/nvme", "path: /mnt/nvme\n    engine: sqlite"), 5,
			`engine "sqlite" cannot be managed (storbench creates postgres and mariadb servers; for another engine use kind: external with a dsn)`},
		{"run_on on one storage", minimal + "  - kind: consolidation\n    instances: 2\n    users: 1\n    noisy: {instances: 1, interval: 10s, cycles: 1, run_on: host}\n", 13, "run_on is for consolidations across hosts"},
		{"metrics key", minimal + "metrics:\n  latency: on\n", 11, `unknown key "latency" in metrics`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { parseFails(t, c.text, c.line, c.want) })
	}
}

// A machine's memory is rarely whole MB: the refusal says it in GB as MemTotal
// (24684092 kB) rounded down, not as a count of KB.
func TestParseMemoryAboveMachineInGB(t *testing.T) {
	withMemTotal(t, 24684092<<10)
	parseFails(t, edit("path: /mnt/nvme", "path: /mnt/nvme\n    memory: 64GB"), 5,
		"memory 64GB is more than this machine's 23.54GB (a limit above the machine's memory is no limit; give at most 23.54GB)")
}

// Every mapping of a study file has a name in messages and its keys listed.
func TestParsePlacesComplete(t *testing.T) {
	named := map[reflect.Type]bool{}
	for _, p := range studyFile.Places {
		named[reflect.TypeOf(p.Type)] = true
	}
	var walk func(rt reflect.Type, inlined bool)
	walk = func(rt reflect.Type, inlined bool) {
		for rt.Kind() == reflect.Pointer || rt.Kind() == reflect.Slice {
			rt = rt.Elem()
		}
		if rt.Kind() != reflect.Struct || reflect.PointerTo(rt).Implements(reflect.TypeFor[yaml.Unmarshaler]()) {
			return // a scalar, or a value that reads itself (Duration, Users)
		}
		if !named[rt] && !inlined { // an inlined struct's keys are its holder's
			t.Errorf("%s is not in studyFile.Places", rt)
		}
		for i := range rt.NumField() {
			if f := rt.Field(i); f.IsExported() { // the decoder sets no other
				walk(f.Type, strings.HasSuffix(f.Tag.Get("yaml"), ",inline"))
			}
		}
	}
	walk(reflect.TypeOf(Study{}), false)
}

// externalOnly is a study of one external target and the experiment given:
//
//	1 name, 2 targets, 3 name, 4 kind, 5 dsn, 6 workload, 7 warehouses,
//	8 experiments, 9 the experiment's first line
//
// hosts is a consolidation across two external targets, db1 with extra lines, and
// the experiment with more.
func hosts(db1, experiment string) string {
	return `name: t
targets:
  - name: db1
    kind: external
    dsn: postgres://bench@db1:5432/tpcc
    host_metrics: http://db1:9100/metrics
` + db1 + `  - name: db2
    kind: external
    dsn: postgres://bench@db2:5432/tpcc
    host_metrics: http://db2:9100/metrics
workload:
  warehouses: 2
experiments:
  - kind: consolidation
    targets: [db1, db2]
    users: 2
` + experiment
}

func externalOnly(experiment string) string {
	return `name: t
targets:
  - name: ext
    kind: external
    dsn: postgres://bench@db1:5432/tpcc
workload:
  warehouses: 2
experiments:
` + experiment
}

// The earliest problem in the file is the one reported, whichever check finds it.
func TestParseReportsEarliestError(t *testing.T) {
	text := edit("warehouses: 2", "warehouses: 0") // line 6
	text = strings.Replace(text, "name: nvme", "name: NVMe", 1)
	parseFails(t, text, 3, `target name "NVMe"`)

	// A decoding problem comes before any check, and the first one by line wins.
	text = edit("users: [1, 2]", "users: [1, 0]\n    bogus: 1")
	parseFails(t, strings.Replace(text, "name: t", "name: bad name", 1), 9, "users 0 is too few")
}

// Marks of YAML's document syntax around the one study are fine.
func TestParseDocumentMarkers(t *testing.T) {
	for _, text := range []string{"---\n" + minimal, minimal + "---\n", minimal + "...\n"} {
		mustParse(t, text)
	}
}

func TestParseUsers(t *testing.T) {
	cases := []struct {
		users string
		want  []int
	}{
		{"[8, 1, 2, 2, 4]", []int{1, 2, 4, 8}},
		{"8", []int{8}},
		{"{fibonacci: 89}", []int{1, 2, 3, 5, 8, 13, 21, 34, 55, 89}},
		{"{fibonacci: 100}", []int{1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 100}},
		{"{fibonacci: 1}", []int{1}},
		{"{fibonacci: 2}", []int{1, 2}},
		{"{powers: 128, extra: [89]}", []int{1, 2, 4, 8, 16, 32, 64, 89, 128}},
		{"{powers: 100}", []int{1, 2, 4, 8, 16, 32, 64, 100}},
		{"{powers: 8, extra: [3, 4, 200]}", []int{1, 2, 3, 4, 8, 200}},
		{"{powers: 4, extra: 6}", []int{1, 2, 4, 6}},
		{"\n      fibonacci: 8\n      extra:\n        - 10\n        - 1", []int{1, 2, 3, 5, 8, 10}},
	}
	for _, c := range cases {
		s := mustParse(t, edit("users: [1, 2]", "users: "+c.users))
		if got := s.Experiments[0].Users.Values; !reflect.DeepEqual(got, c.want) {
			t.Errorf("users: %s = %v, want %v", c.users, got, c.want)
		}
	}
}

func TestParseUsersSeries(t *testing.T) {
	if got := fibonacciUpTo(89); !reflect.DeepEqual(got, []int{1, 2, 3, 5, 8, 13, 21, 34, 55, 89}) {
		t.Errorf("fibonacciUpTo(89) = %v", got)
	}
	if got := powersUpTo(128); !reflect.DeepEqual(got, []int{1, 2, 4, 8, 16, 32, 64, 128}) {
		t.Errorf("powersUpTo(128) = %v", got)
	}
	if got := powersUpTo(driver.MaxUsers); len(got) != 18 || got[17] != driver.MaxUsers {
		t.Errorf("powersUpTo(MaxUsers) = %v", got)
	}
}

func TestParseDurationsAndSizes(t *testing.T) {
	for text, want := range map[string]time.Duration{"90s": 90 * time.Second, "5m": 5 * time.Minute, "1h30m": 90 * time.Minute, "0s": 0, "1500ms": 1500 * time.Millisecond} {
		s := mustParse(t, edit("users: [1, 2]", "users: [1, 2]\n    ramp: "+text))
		if got := s.Experiments[0].Ramp.Duration; got != want {
			t.Errorf("ramp: %s = %v, want %v", text, got, want)
		}
	}
	withMemTotal(t, 1<<40)
	for text, want := range map[string]int64{"2GB": 2 << 30, "512MB": 512 << 20, "1.5GB": 1536 << 20, "1TB": 1 << 40, "64MB": 64 << 20} {
		s := mustParse(t, edit("path: /mnt/nvme", "path: /mnt/nvme\n    memory: "+text))
		if got := s.Targets[0].Memory.Bytes; got != want {
			t.Errorf("memory: %s = %d, want %d", text, got, want)
		}
	}
}

// Anchors and merge keys are YAML's way to share settings; a merged value counts as
// given, so no default overwrites it.
func TestParseMergeKeys(t *testing.T) {
	s := mustParse(t, `name: t
targets:
  - name: nvme
    path: /mnt/nvme
workload:
  warehouses: 2
experiments:
  - &sweep
    kind: user-sweep
    users: {fibonacci: 8}
    ramp: 0s
    repeats: 2
  - <<: *sweep
    name: again
`)
	e := s.Experiments[1]
	if e.Ramp.Duration != 0 || e.Repeats != 2 || len(e.Users.Values) != 5 {
		t.Errorf("merged experiment ramp %v repeats %d users %v, want 0s, 2, 1..8", e.Ramp, e.Repeats, e.Users.Values)
	}
}

func TestLoadTestdata(t *testing.T) {
	cases := []struct {
		file string
		line int
		want string
	}{
		{"unknown-key.yaml", 14, `unknown key "repeat" in an experiment (did you mean "repeats"?)`},
		{"password-in-dsn.yaml", 8, "holds a password"},
		{"storage-profiles-no-target.yaml", 15, `the storage-profiles experiment "fio" has no target to run on`},
	}
	for _, c := range cases {
		path := filepath.Join("testdata", c.file)
		_, err := Load(path)
		if err == nil {
			t.Errorf("%s: loaded without error", path)
			continue
		}
		yamlfiletest.CheckError(t, err, path, c.line, c.want)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Load of a missing file: %v", err)
	}
}

// The machine's size only matters when it is known.
func TestParseMemoryWithoutMeminfo(t *testing.T) {
	old := memTotal
	memTotal = func() (int64, error) { return 0, errors.New("no meminfo") }
	defer func() { memTotal = old }()
	mustParse(t, edit("path: /mnt/nvme", "path: /mnt/nvme\n    memory: 64TB"))
}

func TestExamplesLoad(t *testing.T) {
	withMemTotal(t, 1<<40)
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"backup-restore.yaml", "big-schema-stress.yaml", "capacity.yaml", "hdd-vs-ssd-vcores.yaml", "local-vs-remote-sync-replica.yaml",
		"memory-variants.yaml", "nvme-vs-sata-user-sweep.yaml"}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
		s, err := Load(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		steps := Plan(s)
		if len(steps) == 0 {
			t.Errorf("%s: no steps", f)
		}
		var total time.Duration
		for _, st := range steps {
			total += st.Estimate
			// An example's timed windows are long enough for the report to name a
			// winner: the README's first study must not end "indicative only".
			if st.Duration > 0 && st.Duration < driver.CounterWindow {
				t.Errorf("%s: step %s measures %s, under driver.CounterWindow (%s)", filepath.Base(f), st.ID, st.Duration, driver.CounterWindow)
			}
		}
		t.Logf("%s: %d steps, ~%s", filepath.Base(f), len(steps), roughDuration(total))
	}
	for _, w := range want {
		if !strings.Contains(strings.Join(names, " "), w) {
			t.Errorf("examples/%s is missing", w)
		}
	}
}

// A consolidation experiment must fit the machine and make sense, with the line of
// what does not.
func TestParseConsolidation(t *testing.T) {
	withMemTotal(t, 4<<30)
	consol := func(knobs string) string {
		return edit("  - kind: user-sweep\n    users: [1, 2]\n", "  - kind: consolidation\n"+knobs)
	}
	ok := "    instances: 3\n    instance_memory: 256MB\n    users: 2\n    noisy:\n      instances: 1\n      interval: 10s\n      cycles: 2\n"
	s, err := Parse("s.yaml", []byte(consol(ok+"    baseline: true\n")))
	if err != nil {
		t.Fatal(err)
	}
	if e := s.Experiments[0]; e.Noisy.Kind != "backup" || e.Noisy.Method != "physical" || len(Plan(s)) != 2 || !Plan(s)[1].Noisy {
		t.Errorf("defaults or plan: %+v %+v", e.Noisy, Plan(s))
	}
	// baseline: true is the idle baseline; the plan says what the noisy instances do.
	for value, want := range map[string]string{"true": "noisy instances idle", "idle": "noisy instances idle", "oltp": "every instance on TPC-C"} {
		s := mustParse(t, consol(ok+"    baseline: "+value+"\n"))
		var plan strings.Builder
		if err := WritePlan(&plan, s, Plan(s), "results"); err != nil || !strings.Contains(plan.String(), "without noise, "+want) {
			t.Errorf("baseline: %s: plan (%v)\n%s\nwant %q", value, err, plan.String(), want)
		}
	}
	if plan := Plan(mustParse(t, consol(ok+"    baseline: false\n"))); len(plan) != 1 || !plan[0].Noisy {
		t.Errorf("baseline: false: plan %+v, want the noisy run alone", plan)
	}
	for _, c := range []struct {
		knobs string
		line  int
		want  string
	}{
		{strings.Replace(ok, "instances: 3", "instances: 20", 1), 9, "20 instances of 256MB need 5GB, more than 80% of this machine's 4GB"},
		{strings.Replace(ok, "      instances: 1", "      instances: 3", 1), 13, "noisy instances 3 out of 3"},
		{strings.Replace(ok, "users: 2", "users: [2, 4]", 1), 11, "needs one users value"},
		{strings.Replace(ok, "interval: 10s", "interval: 0s", 1), 14, "interval 0s is too short"},
		{"    instances: 2\n    users: 1\n    baseline: true\n", 11, "baseline compares with a noisy workload"},
		{ok + "    baseline: sometimes\n", 16, `baseline "sometimes" is unknown (use idle or true, the noisy instances started and doing nothing; oltp, every instance on TPC-C; or false, no baseline)`},
	} {
		err := refusedAt(t, consol(c.knobs), c.line, c.want)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("study.yaml:%d:", c.line)) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want line %d and %q", c.knobs, err, c.line, c.want)
		}
	}
}

// A costs: block is the cost model of internal/cost, checked with the study and its
// problems reported at their lines in the study file.
func TestParseCosts(t *testing.T) {
	paper, err := os.ReadFile("../../examples/costs/hdd-vs-ssd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	indented := "costs:\n" + regexp.MustCompile(`(?m)^(.)`).ReplaceAllString(string(paper), "  $1")
	s := mustParse(t, minimal+indented)
	if s.Costs == nil || s.Costs.Currency != "USD" || len(s.Costs.Configurations) != 3 || s.Costs.Configurations[0].Instances != 1 {
		t.Fatalf("costs %+v, want the paper's three configurations with defaults filled in", s.Costs)
	}
	if tb := s.Costs.Evaluate(nil); tb.Costs[0].Total != 3407530 || tb.Costs[2].Total != 5612138 {
		t.Errorf("totals %v and %v cents, want 3407530 and 5612138", tb.Costs[0].Total, tb.Costs[2].Total)
	}
	if s := mustParse(t, minimal); s.Costs != nil {
		t.Errorf("a study without costs: has %+v", s.Costs)
	}

	// Lines 10 on: costs, currency, licences, name, per, pack_cores, pack_price,
	// configurations, name, server_cores, hardware, item.
	costs := `costs:
  currency: EUR
  licences:
    - name: os
      per: server
      pack_cores: 16
      pack_price: 6155
  configurations:
    - name: a
      server_cores: 20
      hardware:
        - {item: server, price: 100}
`
	if s := mustParse(t, minimal+costs); s.Costs.Baseline != "a" || s.Costs.Configurations[0].Licences[0] != "os" {
		t.Errorf("costs defaults: %+v", s.Costs)
	}
	with := func(old, new string) string { return minimal + strings.Replace(costs, old, new, 1) }
	for _, c := range []struct {
		name string
		text string
		line int
		want string
	}{
		{"unknown key", with("      server_cores: 20\n", "      server_cores: 20\n      cores: 4\n"), 20, `unknown key "cores" in a configuration under costs (known keys: name, series`},
		{"misspelt key", with("pack_price: 6155", "pack_prise: 6155"), 16, `unknown key "pack_prise" in a licence under costs (did you mean "pack_price"?)`},
		{"unknown top key", with("  currency: EUR", "  currancy: EUR"), 11, `unknown key "currancy" in costs (did you mean "currency"?)`},
		{"price as text", with("price: 100}", `price: "$100"}`), 21, `price: expected a number, got text "$100"`},
		{"unknown licence", costs2(with, "      licences: [os, sql]\n"), 22, `configuration "a" takes licence "sql", which the model does not have`},
		{"duplicate configuration", minimal + costs + "    - name: a\n      server_cores: 8\n", 22, `configuration name "a" is used twice`},
		{"missing baseline", with("  currency: EUR\n", "  currency: EUR\n  baseline: hdd\n"), 12, `baseline "hdd" is not a configuration`},
		{"negative price", with("price: 100}", "price: -1}"), 21, `price -1 of "server" in configuration "a" is negative`},
		{"empty costs", minimal + "costs: {}\n", 10, "the cost model has no configurations"},
	} {
		t.Run(c.name, func(t *testing.T) { parseFails(t, c.text, c.line, c.want) })
	}
}

// costs2 appends lines to the costs block's configuration.
func costs2(with func(old, new string) string, lines string) string {
	return with("        - {item: server, price: 100}\n", "        - {item: server, price: 100}\n"+lines)
}

// TestParseIOLimits: a managed target's io_limit and an io-sweep's io_limits are read
// by the instance package's parser (a preset, its values, or a mapping), and each
// limit is a variant of its own, named by its preset or its values in the step IDs.
func TestParseIOLimits(t *testing.T) {
	s := mustParse(t, edit("path: /mnt/nvme", "path: /mnt/nvme\n    io_limit: {riops: 3000, wbps: 125MB}")+`  - kind: io-sweep
    users: 1
    io_limits: [aws-gp3, "riops=500,wiops=500", {riops: 1000}]
`)
	if got, want := s.Targets[0].IOLimit.IOLimit, (instance.IOLimit{ReadIOPS: 3000, WriteBPS: 125 << 20}); got != want {
		t.Errorf("target io_limit = %+v, want %+v", got, want)
	}
	var ids []string
	for _, st := range Plan(s) {
		if st.Kind == IOSweep {
			ids = append(ids, st.ID+" "+st.IOLimit.Values())
		}
	}
	want := []string{
		"nvme/io-sweep/io=aws-gp3/users=1/rep=1 riops=3000,wiops=3000,rbps=125MB,wbps=125MB",
		"nvme/io-sweep/io=riops=500,wiops=500/users=1/rep=1 riops=500,wiops=500",
		"nvme/io-sweep/io=riops=1000/users=1/rep=1 riops=1000",
	}
	if !slices.Equal(ids, want) {
		t.Errorf("io-sweep steps:\n%s\nwant\n%s", strings.Join(ids, "\n"), strings.Join(want, "\n"))
	}

	sweep := minimal + "  - kind: io-sweep\n    users: 1\n    io_limits: "
	parseFails(t, sweep+"[]\n", 12, "the io-sweep experiment has no I/O limits (add io_limits:")
	parseFails(t, sweep+"[aws-gp3, AWS-GP3]\n", 12, "I/O limit aws-gp3 is listed twice")
	parseFails(t, sweep+"[aws-gp9]\n", 12, `io_limit "aws-gp9": "aws-gp9" is not key=value nor a preset (aws-gp3, `)
	parseFails(t, sweep+"[{riops: 0}]\n", 12, `io_limit "riops=0": riops must be positive`)
	parseFails(t, sweep+"[{iops: 5}]\n", 12, `io_limit "iops=5": unknown key "iops"`)
	parseFails(t, strings.Replace(minimal, "    path: /mnt/nvme", "    kind: external\n    dsn: postgres://db1/tpcc\n    io_limit: aws-gp3", 1), 6,
		"io_limit is for managed targets (storbench throttles only the servers it runs")
}
