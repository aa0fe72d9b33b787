// Package study runs what a storage lab runs: several targets, one schema, user
// sweeps repeated, memory and CPU variants, storage profiles, backup and restore
// cycles and replication, from one YAML file, into one results store.
package study

import (
	"github.com/storbench/storbench/internal/cost"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/yamlfile"
)

// Study is a study file.
type Study struct {
	Name        string       `yaml:"name"`
	Description string       `yaml:"description"`
	Targets     []Target     `yaml:"targets"`
	Workload    Workload     `yaml:"workload"`
	Experiments []Experiment `yaml:"experiments"`
	// Metrics: the sampling interval of every step (default 1s), and per-I/O latency
	// (auto, on, off).
	Metrics Metrics `yaml:"metrics"`
	// Costs is the study's cost model (optional): the configurations compared, their
	// hardware and licences, judged by the peaks of the series they name.
	Costs *cost.Model `yaml:"costs"`
	// OnFailure is what a failed step does to the study: stop it (the default), or
	// continue with the next step (a target that could not be prepared has its other
	// steps failed without trying again). Failed steps are stored apart and run again
	// when the study is resumed.
	OnFailure string `yaml:"on_failure"`
	// AllowUnappliedLimits lets a step run on a managed instance whose memory or
	// CPU limit could not be applied at run time (no cgroup controller, not root),
	// said in the notes of every such step; without it such a step fails, as it
	// would measure something else than the study says.
	AllowUnappliedLimits bool `yaml:"allow_unapplied_limits"`

	// file and line place a setting in the study file (Parse sets them), for the
	// checks made after it, on the machine (CheckMachine): "FILE:LINE: path: …";
	// machine are those Parse found already (memory, free space), for CheckMachine.
	file    string
	line    func(path string) int
	machine []*yamlfile.LineError
}

// What a failed step does to the study.
const (
	FailureStops     = "stop"
	FailureContinues = "continue"
)

// Target is a database on one storage: managed (storbench creates the server on
// Path) or external (a DSN).
type Target struct {
	Name string `yaml:"name"`
	// Kind is "managed" or "external".
	Kind string `yaml:"kind"`

	// Managed targets.
	Engine  string   `yaml:"engine"` // default postgres
	Path    string   `yaml:"path"`
	WALPath string   `yaml:"wal_path"`
	Memory  Size     `yaml:"memory"` // 0: engine defaults
	CPUs    string   `yaml:"cpus"`   // e.g. "0-1"
	Replica *Replica `yaml:"replica"`
	// IOLimit throttles the instance's data disk, as instance create --io-limit does.
	IOLimit IOLimit `yaml:"io_limit"`
	// BinDir is the server build to run, which chooses its version, as instance
	// create --bindir does ("": the engine's default build).
	BinDir string `yaml:"bindir"`

	// External targets: the DSN without its password, which comes from the named
	// environment variable (never written to results), and node_exporter's URL for
	// the host's metrics.
	DSN         string `yaml:"dsn"`
	PasswordEnv string `yaml:"password_env"`
	// HostMetrics is the URL of node_exporter on the database's host (MetricsHost
	// is its older name, still read).
	HostMetrics string `yaml:"host_metrics"`
	MetricsHost string `yaml:"metrics_host"`
	// MetricsDevices are the host's disks to sample, as its /proc/diskstats names
	// them; empty: the disk holding the data directory, found over SSH when SSH is
	// given, else every whole disk.
	MetricsDevices []string `yaml:"metrics_devices"`
	// Host names the machine the database runs on, for grouping the results
	// (default: the DSN's host).
	Host string `yaml:"host"`
	// SSH is user@host[:port] for the host-local actions (finding the data disk,
	// backups run on the host), with the private key in SSHKey (default: the agent,
	// then ~/.ssh/id_*) and the host's key in KnownHosts (default ~/.ssh/known_hosts),
	// which is always checked.
	SSH        string `yaml:"ssh"`
	SSHKey     string `yaml:"ssh_key"`
	KnownHosts string `yaml:"known_hosts"`
}

// Replica is a streaming standby of a managed target, on its own storage.
type Replica struct {
	Path string `yaml:"path"`
	Sync bool   `yaml:"sync"`
}

// Workload is the schema and how it is driven.
type Workload struct {
	// The driver's settings of every run (mode, all_warehouses, keying, inputs,
	// arrivals, latency_limit, retries): the keys, defaults and checks are the
	// driver's, as the command line's run flags are. Arrivals and LatencyLimit are
	// those of every open-loop step: an experiment's rate, and the probes of a
	// capacity search.
	driver.Workload `yaml:",inline"`
	Warehouses      int    `yaml:"warehouses"`
	Schema          string `yaml:"schema"` // spec (default) or hammerdb: load.Options.Schema
	// Restore is "each-step" (default: the base image is restored before every
	// measured step, so every step starts from the same data) or "never".
	Restore string `yaml:"restore"`
	Seed    uint64 `yaml:"seed"`
}

// Experiment is one kind of experiment with its knobs; it runs on every target unless
// Targets names some.
type Experiment struct {
	Name    string   `yaml:"name"`
	Kind    string   `yaml:"kind"` // user-sweep, memory-sweep, cpu-sweep, storage-profiles, backup-restore, replication, capacity
	Targets []string `yaml:"targets"`

	// The user sweep of user-sweep, memory-sweep, cpu-sweep and replication.
	Users    Users    `yaml:"users"`
	Ramp     Duration `yaml:"ramp"`
	Duration Duration `yaml:"duration"`
	Repeats  int      `yaml:"repeats"` // default 1
	// UntilSteady runs each timed window past its duration until it is steady,
	// up to its max (user-sweep, memory-, cpu- and io-sweep, replication).
	UntilSteady *UntilSteady `yaml:"until_steady"`
	// Rate (transactions a minute) makes the sweep's runs open-loop (driver.Config.Rate):
	// its users carry the rate; 0, the default: closed-loop users.
	Rate float64 `yaml:"rate"`

	// capacity: the highest rate that meets SLO, searched by doubling from StartRate
	// then bisecting to Precision, in at most MaxProbes probes of the window above,
	// each passing only with MinAchieved of the arrivals completed.
	SLO         *SLO    `yaml:"slo"`
	MinAchieved float64 `yaml:"min_achieved"`
	StartRate   float64 `yaml:"start_rate"`
	Precision   float64 `yaml:"precision"`
	MaxProbes   int     `yaml:"max_probes"`

	// memory-sweep: the instance's memory for each variant.
	Memory []Size `yaml:"memory"`
	// cpu-sweep: the instance's CPU set for each variant.
	CPUs []string `yaml:"cpus"`
	// io-sweep: the instance's I/O limit for each variant.
	IOLimits []IOLimit `yaml:"io_limits"`

	// storage-profiles: fio profiles on each target's data (and WAL) path.
	Profiles []string `yaml:"profiles"`
	Size     Size     `yaml:"size"`    // test file, default 1GB
	Runtime  Duration `yaml:"runtime"` // per point, default 30s

	// backup-restore: how many backup-then-restore cycles (default 3) and the method.
	Cycles int    `yaml:"cycles"`
	Method string `yaml:"method"` // physical (default) or logical

	// consolidation: Instances managed instances side by side on the target's storage,
	// each of InstanceMemory with its own copy of the base image, Users OLTP users on
	// each, and optionally a noisy workload on some; with Baseline (BaselineIdle or
	// BaselineOLTP, "" for none) the same runs first without the noise.
	Instances      int  `yaml:"instances"`
	InstanceMemory Size `yaml:"instance_memory"`
	// InstanceCPUs are CPU sets dealt to the instances in turn (e.g. [0, 1]: the
	// first on CPU 0, the second on CPU 1, the third on CPU 0…); empty: all CPUs.
	InstanceCPUs []string `yaml:"instance_cpus"`
	Noisy        *Noisy   `yaml:"noisy"`
	Baseline     string   `yaml:"baseline"`
}

// Noisy is the workload some consolidated instances run instead of TPC-C: a backup
// every Interval, Cycles times, from the start of the timed window.
type Noisy struct {
	Instances int      `yaml:"instances"` // the last ones
	Kind      string   `yaml:"kind"`      // backup
	Method    string   `yaml:"method"`    // physical (default) or logical
	Interval  Duration `yaml:"interval"`
	Cycles    int      `yaml:"cycles"`
	// Path is where the backups go: a directory on the same or another storage
	// (default: the results store's scratch directory; on the host, required).
	Path string `yaml:"path"`
	// RunOn is where the backups of external targets run: "controller" (this
	// machine, pg_basebackup streaming over the network) or "host" (over SSH, on
	// the database's own host, into Path there).
	RunOn string `yaml:"run_on"`
}

// UntilSteady is an experiment's until_steady: {max: 10m}: the longest a timed window
// run until steady may last (driver.Config.UntilSteady).
type UntilSteady struct {
	Max Duration `yaml:"max"`
}

// Metrics configures the sampler of every step.
type Metrics struct {
	Interval  Duration `yaml:"interval"`
	IOLatency string   `yaml:"io_latency"`
	// WaitRate is how many times a second the database's sessions are read for
	// their wait events (0: not read).
	WaitRate float64 `yaml:"wait_rate"`
	// MaxClockSkew is how far a host's clock (node_exporter's node_time_seconds) may
	// be from this machine's before the study refuses it: samples are placed by
	// this machine's clock, but a skewed host's own logs and timestamps would not
	// line up with them.
	MaxClockSkew Duration `yaml:"max_clock_skew"`
}

// Users is a user sweep: a list, or a series up to a maximum (Fibonacci 1, 2, 3, 5,
// …; powers of two 1, 2, 4, …) with extra values, sorted and without repeats.
type Users struct {
	Values []int
}

// Duration is a YAML duration such as 90s or 5m: yamlfile's, which the driver's
// workload settings are too.
type Duration = yamlfile.Duration

// Size is a YAML size such as 512MB or 2GB (powers of 1024).
type Size struct{ Bytes int64 }

// IOLimit is a YAML I/O limit: a preset's name (aws-gp3), the values as
// instance create --io-limit takes them, or a mapping {riops: 3000, wbps: 125MB}.
type IOLimit struct{ instance.IOLimit }
