package live

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// families are every metric the endpoint serves, each declared once here with its
// help text (docs/live.md lists them; TestDocsListEveryMetric keeps it true).
type families struct {
	// names are the metrics' names, as declared.
	names []string
	info  *prometheus.GaugeVec

	// The driver's, each second (label target).
	tpm        *prometheus.GaugeVec // view: client, database
	nopm       *prometheus.GaugeVec // view: client
	errors     *prometheus.CounterVec
	users      *prometheus.GaugeVec
	timed      *prometheus.GaugeVec
	elapsed    *prometheus.GaugeVec
	latencies  *latencyCollector
	offeredTPM *prometheus.GaugeVec

	// The sampler's, each sample (label target).
	cpu           *prometheus.GaugeVec // state
	diskIOPS      *prometheus.GaugeVec // device, op
	diskBytes     *prometheus.GaugeVec // device, op
	diskAwait     *prometheus.GaugeVec // device, op
	diskBusy      *prometheus.GaugeVec // device
	dbTxns        *prometheus.GaugeVec // outcome
	dbWAL         *prometheus.GaugeVec
	dbFsyncs      *prometheus.GaugeVec
	dbDataWrites  *prometheus.GaugeVec
	dbHit         *prometheus.GaugeVec
	dbCheckpoints *prometheus.CounterVec
	waitShare     *prometheus.GaugeVec // server, role, class
	activeSess    *prometheus.GaugeVec // server, role
	bottleneck    *prometheus.GaugeVec // scope, verdict
	verdictMu     sync.Mutex
	verdicts      map[[2]string]string // the current verdict by target and scope

	// A study's.
	steps        *prometheus.GaugeVec // state: total, stored, failed
	step         *prometheus.GaugeVec // seq, id, kind, target
	stepsLeft    prometheus.Gauge
	etaSeconds   prometheus.Gauge
	studyRunning prometheus.Gauge
}

const ns = "storbench"

func newFamilies(reg prometheus.Registerer, version string) *families {
	var names []string
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: name, Help: help}, labels)
		reg.MustRegister(g)
		names = append(names, ns+"_"+name)
		return g
	}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: name, Help: help}, labels)
		reg.MustRegister(c)
		names = append(names, ns+"_"+name)
		return c
	}
	single := func(name, help string) prometheus.Gauge {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: name, Help: help})
		reg.MustRegister(g)
		names = append(names, ns+"_"+name)
		return g
	}
	f := &families{verdicts: map[[2]string]string{},
		info: gauge("info", "storbench's version (always 1).", "version"),

		tpm:        gauge("tpm", "Transactions a minute over the last second (view client: the driver's count of completed transactions) or the last sample (view database: the server's commits and rollbacks).", "target", "view"),
		nopm:       gauge("nopm", "New-Orders a minute completed over the last second (the driver's count).", "target", "view"),
		errors:     counter("errors_total", "Transactions that failed after their retries.", "target"),
		users:      gauge("users", "Virtual users of the run in progress.", "target"),
		timed:      gauge("run_timed", "1 while the run's timed window is measured, 0 during its ramp-up.", "target"),
		elapsed:    gauge("run_elapsed_seconds", "Seconds since the run's users started connecting.", "target"),
		offeredTPM: gauge("offered_tpm", "An open-loop run's arrivals a minute over the last second.", "target"),
		latencies:  newLatencyCollector(prometheus.BuildFQName(ns, "", "transaction_duration_seconds"), "Response times of the completed transactions, by type, as the driver measured them (client side), ramp-up included; buckets 0.5 ms to 10 s.", "target", "type"),

		cpu:           gauge("cpu_ratio", "Share of all CPUs' time in each state over the last sample (/proc/stat, or node_exporter for a remote host).", "target", "state"),
		diskIOPS:      gauge("disk_iops", "I/Os a second completed by a sampled disk over the last sample.", "target", "device", "op"),
		diskBytes:     gauge("disk_bytes_per_second", "Bytes a second transferred by a sampled disk over the last sample.", "target", "device", "op"),
		diskAwait:     gauge("disk_await_seconds", "Mean time per I/O of a sampled disk over the last sample (queue and service).", "target", "device", "op"),
		diskBusy:      gauge("disk_busy_ratio", "Share of the last sample a sampled disk had I/O in flight.", "target", "device"),
		dbTxns:        gauge("database_transactions_per_second", "The server's transactions a second over the last sample, by outcome (its own counters).", "target", "outcome"),
		dbWAL:         gauge("database_wal_bytes_per_second", "WAL (redo log) bytes a second the server wrote over the last sample (its own counters; the run's sources say which).", "target"),
		dbFsyncs:      gauge("database_wal_fsyncs_per_second", "WAL fsyncs a second over the last sample (its own counters, where it has them).", "target"),
		dbDataWrites:  gauge("database_data_write_bytes_per_second", "Data file bytes a second the server wrote over the last sample (its own counters).", "target"),
		dbHit:         gauge("database_buffer_hit_ratio", "Share of block reads served from the server's buffer cache over the last sample.", "target"),
		dbCheckpoints: counter("database_checkpoints_total", "Checkpoints the server performed while sampled.", "target"),
		waitShare:     gauge("wait_share", "Share of a role's active session time in each wait class over the last sample.", "target", "server", "role", "class"),
		activeSess:    gauge("active_sessions", "Mean active sessions of a role over the last sample.", "target", "server", "role"),
		bottleneck:    gauge("bottleneck", "What limited the database (1 for the current verdict): scope interval is the last sample's, scope run the finished run's.", "target", "scope", "verdict"),

		steps:        gauge("study_steps", "A study's steps: total, stored (done, this run or before) and failed.", "state"),
		step:         gauge("study_step", "The study's step in progress (1), by sequence number, ID, kind and target.", "seq", "id", "kind", "target"),
		stepsLeft:    single("study_steps_left", "Steps of the study not yet done."),
		etaSeconds:   single("study_eta_seconds", "Estimated seconds until the study ends (the plan's estimates of the steps left)."),
		studyRunning: single("study_running", "1 while a study runs."),
	}
	reg.MustRegister(f.latencies)
	f.names = append(names, f.latencies.name)
	f.info.WithLabelValues(version).Set(1)
	return f
}

// Names are the names of every metric the endpoint serves (a histogram's series
// in a scrape are its name with _bucket, _sum and _count; a counter's in the
// OpenMetrics format without _total).
func Names() []string { return newFamilies(prometheus.NewRegistry(), "").names }
