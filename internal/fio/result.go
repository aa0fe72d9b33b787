// Package fio characterises storage the way the papers do before any database runs:
// profiles (HCIBench, DiskSpd's SQL Server pattern, data and log file matrices,
// steady state, sequential) are tables turned into fio job text, run by the real fio,
// and read back from its json+ report and per-second logs.
package fio

import "time"

// Result is one profile run on one target: what `storbench fio --json` writes and
// `storbench fio compare` reads.
type Result struct {
	Profile     string    `json:"profile"`
	Description string    `json:"description"`
	Source      string    `json:"source"`
	Target      Target    `json:"target"`
	FioVersion  string    `json:"fio_version"`
	Started     time.Time `json:"started"`
	Points      []Point   `json:"points"`
	Notes       []string  `json:"notes,omitempty"`
}

// Target is where the test file lived.
type Target struct {
	Path    string   `json:"path"`
	FSType  string   `json:"fs_type"`
	Mount   string   `json:"mount"`
	Devices []string `json:"devices"` // whole disks, e.g. "nvme0n1"
	Models  []string `json:"models"`  // their /sys/block/*/device/model, where known
	Chain   string   `json:"chain"`
}

// Point is one job of a profile (one line of the papers' tables): fio runs the
// points one after another (stonewall), each with group reporting over its jobs.
type Point struct {
	Name       string `json:"name"`
	Pattern    string `json:"pattern"` // fio's rw: randrw, randread, read, write…
	BlockSize  int    `json:"block_size"`
	ReadPct    int    `json:"read_pct"`
	Jobs       int    `json:"jobs"`
	QueueDepth int    `json:"queue_depth"`
	Read       Side   `json:"read"`
	Write      Side   `json:"write"`
	// IOPS and MBps are read + write.
	IOPS float64 `json:"iops"`
	MBps float64 `json:"mb_s"` // 10^6 bytes per second
	// CPU is fio's own CPU use, % of one CPU summed over its jobs (fio's usr_cpu and
	// sys_cpu are per job).
	UserCPU   float64 `json:"usr_cpu_pct"`
	SystemCPU float64 `json:"sys_cpu_pct"`
	// RuntimeSeconds is how long fio ran this point.
	RuntimeSeconds float64 `json:"runtime_s"`
	// Steady is fio's steady-state verdict, for points that asked for one.
	Steady *Steady `json:"steady_state,omitempty"`
	// Series is the point's second-by-second figures from fio's logs; SeriesNote
	// says why it is empty when it is.
	Series     []Second `json:"series"`
	SeriesNote string   `json:"series_note,omitempty"`
	// JobText is the exact job file fio ran for this point.
	JobText string `json:"job_text"`
}

// Side is one direction's figures. Latencies are completion latencies (clat: from
// submission to completion, as fio defines them), from fio's own histogram.
type Side struct {
	IOs       int64   `json:"ios"`
	Bytes     int64   `json:"bytes"`
	IOPS      float64 `json:"iops"`
	MBps      float64 `json:"mb_s"`
	MeanLatMs float64 `json:"mean_lat_ms"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	P999Ms    float64 `json:"p99_9_ms"`
	MaxMs     float64 `json:"max_ms"`
}

// Steady is fio's steady-state detection outcome.
type Steady struct {
	Attained  bool    `json:"attained"`
	Criterion string  `json:"criterion"` // e.g. "iops_slope:0.3%"
	Duration  float64 `json:"duration_s"`
	// AttainedAfter is when the criterion was met (fio stops the point there).
	AttainedAfter float64 `json:"attained_after_s,omitempty"`
}

// Second is one second of a point, summed over its jobs.
type Second struct {
	T          int     `json:"t"` // second (t-1, t] of the point
	ReadIOPS   float64 `json:"read_iops"`
	WriteIOPS  float64 `json:"write_iops"`
	ReadMBps   float64 `json:"read_mb_s"`
	WriteMBps  float64 `json:"write_mb_s"`
	ReadLatMs  float64 `json:"read_lat_ms"`  // mean completion latency in that second
	WriteLatMs float64 `json:"write_lat_ms"` // mean completion latency in that second
}
