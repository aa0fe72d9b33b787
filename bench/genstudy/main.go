// Command genstudy writes a complete synthetic study results store, as storbench
// study run would leave it, so bench/report.sh can time storbench report on a store
// of a real study's size without running one: 2 managed targets (nvme, sata, each
// with its data and WAL on their own disk) × one user sweep (users 1, 2, 4, 8, 16)
// repeated, every step with its per-second timeline and per-second system samples.
//
//	go run ./bench/genstudy -dir DIR [-steps 100] [-seconds 600] [-ramp 60] [-seed 1]
//
// The study file is checked with study.Parse and the steps are study.Plan's, so the
// store reads back as a real one. Numbers are synthetic but plausible (NOPM rising
// with users and saturating, TPM about 2.3 × NOPM, SATA below NVMe, checkpoints)
// and deterministic for a seed.
package main

import (
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/storbench/storbench/internal/blockdev"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/study"
	"github.com/storbench/storbench/internal/tpcc"
)

// users is the sweep's user counts: with the two targets, 10 steps per repeat.
var users = []int{1, 2, 4, 8, 16}

const (
	warehouses  = 100
	studyName   = "synthetic-nvme-vs-sata"
	cores       = 4
	hostMemory  = 64 << 30
	serverVer   = "postgres (PostgreSQL) 15.10"
	serverVerDB = "PostgreSQL 15.10 (Debian 15.10-0+deb12u1) on x86_64-pc-linux-gnu, compiled by gcc (Debian 12.2.0-14) 12.2.0, 64-bit"
	version     = "genstudy (synthetic)"
	// The sources strings a real run records (internal/metrics/monitor.go,
	// internal/engine/postgres).
	cpuSource      = "/proc/stat, all CPUs: user = user + nice, system = system + irq + softirq"
	memorySource   = "/proc/meminfo: used = MemTotal - MemAvailable, cache = Cached + Buffers"
	diskSource     = "/proc/diskstats per whole disk, iostat formulas: await = I/O time ÷ I/Os completed (an average per I/O, not a percentile); busy = time with at least one I/O in flight (not saturation for SSD/NVMe); MB = 10^6 bytes"
	latencySource  = "bpftrace on block:block_rq_issue → block:block_rq_complete, each request timed from issue to completion (matched by device and sector; flushes and discards included) in a histogram with buckets within 6.25%; a percentile is its bucket's upper edge"
	activitySource = "pg_stat_database (the benchmark database: commits, rollbacks, blocks, temp bytes), pg_stat_wal (whole server: WAL bytes), pg_stat_bgwriter checkpoints_timed + checkpoints_req (whole server; timed ones include those skipped when idle)"
)

// profile is a target's storage and how it behaves.
type profile struct {
	name           string
	data, wal      blockdev.Placement
	models         []string
	port           int
	cLoad          int
	nmax, k        float64 // NOPM = nmax · u / (u + k)
	cpuPerNOPM     float64 // % CPU busy per 1000 NOPM
	iowaitMax      float64 // % iowait at saturation
	readAwait      float64 // ms per read at low load
	writeAwait     float64 // ms per data write
	walAwait       float64 // ms per WAL write
	svcMs          float64 // device time per I/O, for busy %
	ckptDip        float64 // throughput lost right after a checkpoint starts
	latencySpreadQ float64 // lognormal sigma of response times
}

func placement(path, role, mount, fs, part, disk string, major, minor uint32) blockdev.Placement {
	return blockdev.Placement{Path: path, Role: role, Mount: mount, FSType: fs, Source: "/dev/" + part,
		Devices: []blockdev.BlockDevice{{Name: disk, Major: major, Minor: minor}}, Chain: part + " → " + disk}
}

var profiles = map[string]*profile{
	"nvme": {
		name:   "nvme",
		data:   placement("/mnt/nvme/storbench", "data", "/mnt/nvme", "xfs", "nvme0n1p1", "nvme0n1", 259, 0),
		wal:    placement("/mnt/nvme-wal/storbench", "wal", "/mnt/nvme-wal", "xfs", "nvme1n1p1", "nvme1n1", 259, 2),
		models: []string{"nvme0n1: SAMSUNG MZQL23T8HCLS-00A07", "nvme1n1: SAMSUNG MZQL21T9HCJR-00A07"},
		port:   54321, cLoad: 157,
		nmax: 52000, k: 3.5, cpuPerNOPM: 2.0, iowaitMax: 3,
		readAwait: 0.09, writeAwait: 0.035, walAwait: 0.04, svcMs: 0.02, ckptDip: 0.06, latencySpreadQ: 0.5,
	},
	"sata": {
		name:   "sata",
		data:   placement("/mnt/sata/storbench", "data", "/mnt/sata", "ext4", "sda1", "sda", 8, 0),
		wal:    placement("/mnt/sata-wal/storbench", "wal", "/mnt/sata-wal", "ext4", "sdb1", "sdb", 8, 16),
		models: []string{"sda: KINGSTON SEDC500M1920G", "sdb: Micron_5200_MTFDDAK1T9TDD"},
		port:   54322, cLoad: 211,
		nmax: 24000, k: 2.5, cpuPerNOPM: 2.1, iowaitMax: 22,
		readAwait: 0.45, writeAwait: 1.6, walAwait: 0.35, svcMs: 0.18, ckptDip: 0.2, latencySpreadQ: 0.65,
	},
}

func studyYAML(seconds, ramp, repeats int) string {
	t := func(p *profile) string {
		return fmt.Sprintf("  - name: %s\n    path: %s\n    wal_path: %s\n    memory: 2GB\n    cpus: 0-%d\n",
			p.name, p.data.Path, p.wal.Path, cores-1)
	}
	us := ""
	for i, u := range users {
		if i > 0 {
			us += ", "
		}
		us += fmt.Sprint(u)
	}
	return `# Synthetic study written by bench/genstudy: the same database on NVMe and on SATA
# SSDs, data and WAL on their own disk each, one user sweep repeated for a spread.
name: ` + studyName + `
description: TPROC-C user sweep on NVMe and SATA (synthetic results for bench/report.sh)

targets:
` + t(profiles["nvme"]) + t(profiles["sata"]) + `
workload:
  warehouses: ` + fmt.Sprint(warehouses) + `
  mode: procedures
  restore: each-step

experiments:
  - name: sweep
    kind: user-sweep
    users: [` + us + `]
    ramp: ` + fmt.Sprintf("%ds", ramp) + `
    duration: ` + fmt.Sprintf("%ds", seconds) + `
    repeats: ` + fmt.Sprint(repeats) + `

metrics:
  interval: 1s
  io_latency: auto
`
}

func main() {
	dir := flag.String("dir", "", "results store directory to write (created; an existing store is overwritten)")
	steps := flag.Int("steps", 100, "steps to store (the sweep is repeated enough times to hold them; 10 steps per repeat)")
	seconds := flag.Int("seconds", 600, "timed window of each step, seconds")
	ramp := flag.Int("ramp", 60, "ramp-up of each step, seconds")
	seed := flag.Uint64("seed", 1, "random seed (the same seed writes the same store)")
	flag.Parse()
	if *dir == "" || *steps < 1 || *seconds < 1 || *ramp < 0 {
		fmt.Fprintln(os.Stderr, "genstudy: -dir is required; -steps and -seconds must be 1 or more, -ramp 0 or more")
		os.Exit(2)
	}
	start := time.Now()
	n, bytes, err := generate(*dir, *steps, *seconds, *ramp, *seed)
	if err != nil {
		fmt.Fprintln(os.Stderr, "genstudy:", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %s: %d steps of %d s (+%d s ramp), %d bytes (%.1f MB) in %.1f s\n",
		*dir, n, *seconds, *ramp, bytes, float64(bytes)/1e6, time.Since(start).Seconds())
}

func generate(dir string, nSteps, seconds, ramp int, seed uint64) (int, int64, error) {
	perRepeat := len(users) * len(profiles)
	repeats := (nSteps + perRepeat - 1) / perRepeat
	yaml := studyYAML(seconds, ramp, repeats)
	s, err := study.Parse("study.yaml", []byte(yaml))
	if err != nil {
		return 0, 0, fmt.Errorf("the generated study file does not parse: %w", err)
	}
	plan := study.Plan(s)
	if len(plan) < nSteps {
		return 0, 0, fmt.Errorf("the plan has %d steps, fewer than %d", len(plan), nSteps)
	}

	if err := prepareDir(dir); err != nil {
		return 0, 0, err
	}
	var total atomic.Int64
	write := func(name string, data []byte) error {
		total.Add(int64(len(data)))
		return os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	writeJSON := func(name string, v any) error {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		return write(name, append(b, '\n'))
	}
	if err := write(".storbench-study", []byte(studyName+"\n")); err != nil {
		return 0, 0, err
	}
	if err := write("study.yaml", []byte(yaml)); err != nil {
		return 0, 0, err
	}
	if err := writeJSON("plan.json", plan); err != nil {
		return 0, 0, err
	}
	began := time.Date(2025, 6, 2, 20, 0, 0, 0, time.UTC)
	if err := writeJSON("environment.json", environment(s, began.Add(-3*time.Minute))); err != nil {
		return 0, 0, err
	}

	// The steps' times follow one another (restore, ramp, window, stop); the rest of
	// each step is drawn from its own generator, so steps are built in parallel.
	timing := rand.New(rand.NewPCG(seed, 0))
	cursor := began.Add(2 * study.BuildEstimate(warehouses)) // both targets built first
	jobs := make([]stepJob, nSteps)
	for i := range jobs {
		restore := 32 + 4*timing.Float64()
		connect := 0.3 + 0.3*timing.Float64()
		started := cursor
		window := started.Add(secs(restore + connect + float64(ramp)))
		end := window.Add(time.Duration(seconds) * time.Second)
		ended := end.Add(secs(1 + 0.5*timing.Float64()))
		jobs[i] = stepJob{step: plan[i], started: started, window: window, end: end, ended: ended, restore: restore}
		cursor = ended.Add(secs(0.2 + 0.2*timing.Float64()))
	}

	var wg sync.WaitGroup
	errs := make([]error, nSteps)
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			res := jobs[i].build(s, seed)
			errs[i] = writeJSON(filepath.Join("steps", fmt.Sprintf("%04d.json", res.Step.Seq)), res)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return 0, 0, err
		}
	}
	return nSteps, total.Load(), check(dir, nSteps, len(plan))
}

// prepareDir makes dir an empty store: a new or empty directory, or a store this
// command wrote before (its steps are replaced).
func prepareDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case os.IsNotExist(err):
	case err != nil:
		return err
	case len(entries) > 0:
		if _, err := os.Stat(filepath.Join(dir, ".storbench-study")); err != nil {
			return fmt.Errorf("%s is not empty and not a results store: give a new directory", dir)
		}
		if err := os.RemoveAll(filepath.Join(dir, "steps")); err != nil {
			return err
		}
	}
	for _, sub := range []string{"steps", "base", "instances", "scratch"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// check reads the store back as storbench does.
func check(dir string, nSteps, nPlan int) error {
	st, err := study.ReadStore(dir)
	if err != nil {
		return err
	}
	plan, err := st.Plan()
	if err != nil {
		return fmt.Errorf("reading back plan.json: %w", err)
	}
	steps, err := st.Steps()
	if err != nil {
		return fmt.Errorf("reading back the steps: %w", err)
	}
	if _, err := st.Environment(); err != nil {
		return fmt.Errorf("reading back environment.json: %w", err)
	}
	if len(plan) != nPlan || len(steps) != nSteps {
		return fmt.Errorf("read back %d planned and %d stored steps, wrote %d and %d", len(plan), len(steps), nPlan, nSteps)
	}
	return nil
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func environment(s *study.Study, recorded time.Time) study.Environment {
	env := study.Environment{Recorded: recorded, StorbenchVersion: version, GoVersion: runtime.Version(),
		Host: "bench-01", CPUModel: "AMD EPYC 7313P 16-Core Processor", Cores: 32, MemoryBytes: hostMemory,
		Kernel: "Linux 6.8.0-52-generic"}
	for _, t := range s.Targets {
		p := profiles[t.Name]
		env.Targets = append(env.Targets, study.TargetEnv{Name: t.Name, Kind: t.Kind,
			Placements: []blockdev.Placement{p.data, p.wal}, Models: p.models, ServerVersion: serverVer,
			Settings: map[string]string{"max_connections": "26", "fsync": "on", "synchronous_commit": "on",
				"full_page_writes": "on", "shared_buffers": fmt.Sprintf("%dMB", t.Memory.Bytes/4>>20),
				"effective_cache_size": fmt.Sprintf("%dMB", t.Memory.Bytes*3/4>>20)},
			Limits: limits(t)})
	}
	return env
}

func limits(t study.Target) []string {
	return []string{fmt.Sprintf("memory.max=%d", t.Memory.Bytes), "memory.swap.max=0", "cpuset.cpus=" + t.CPUs,
		"cpuset.cpus.effective=" + t.CPUs}
}

type stepJob struct {
	step                        study.Step
	started, window, end, ended time.Time
	restore                     float64
}

// Transaction mix of a run without keying and thinking time (the deck's shares) and
// each type's response time relative to the mix's mean.
var (
	mix      = [tpcc.NumTransactions]float64{0.45, 0.43, 0.04, 0.04, 0.04}
	relative = [tpcc.NumTransactions]float64{1.0, 0.55, 0.35, 2.6, 1.4}
)

// build makes one step's result.
func (j *stepJob) build(s *study.Study, seed uint64) *study.StepResult {
	st := j.step
	p := profiles[st.Target]
	rng := rand.New(rand.NewPCG(seed, uint64(st.Seq)))
	norm := rng.NormFloat64
	u := float64(st.Users)
	seconds := int(st.Duration / time.Second)
	ramp := int(st.Ramp / time.Second)

	// The step's level: the target's curve, a repeat-to-repeat spread of ~2%.
	nopm := p.nmax * u / (u + p.k) * (1 + 0.02*norm())
	// Checkpoints every 5 minutes (checkpoint_timeout), the first at a random phase.
	ckpt0 := -ramp + rng.IntN(300)
	sinceCkpt := func(t int) float64 {
		if t < ckpt0 {
			return math.Inf(1)
		}
		return float64((t - ckpt0) % 300)
	}
	// level is the throughput factor of second t: users connecting and a cold cache
	// in the ramp-up, checkpoints' full-page writes after each checkpoint starts.
	level := func(t int) float64 {
		f := 1.0
		if t <= 0 {
			into := float64(t + ramp)
			f = min(1, 0.25+0.75*into/max(1, float64(ramp)*0.4))
		}
		if d := sinceCkpt(t); !math.IsInf(d, 1) {
			f *= 1 - p.ckptDip*math.Exp(-d/12)
		}
		return f
	}

	res := &driver.Result{Start: j.window, End: j.end}
	res.Config = driver.RunConfig{Engine: "postgres", DSN: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/tpcc?sslmode=disable", p.port),
		Mode: string(s.Workload.Mode), Users: st.Users, RampSeconds: float64(ramp), DurationSeconds: float64(seconds),
		AllWarehouses: s.Workload.AllWarehouses, Keying: s.Workload.Keying, Warehouses: warehouses,
		Seed: s.Workload.Seed + uint64(st.Seq), CLoad: p.cLoad, CRun: (p.cLoad + 65 + rng.IntN(50)) % 256,
		MaxRetries: driver.DefaultRetries, ClientCPUs: cores, Version: version, ServerVersion: serverVerDB}

	// The client's timeline: integer counts per second, as rates per minute.
	var newOrders, all int64
	levels := make(map[int]float64, ramp+seconds)
	for t := -ramp + 1; t <= seconds; t++ {
		f := level(t) * (1 + 0.045*norm())
		levels[t] = max(f, 0.05)
		no := int64(math.Round(nopm / 60 * levels[t]))
		tx := int64(math.Round(float64(no) / mix[tpcc.NewOrder] * (1 + 0.015*norm())))
		sec := driver.Second{T: t, Phase: driver.PhaseTimed, TPM: float64(tx * 60), NOPM: float64(no * 60)}
		if t <= 0 {
			sec.Phase = driver.PhaseRamp
		} else {
			newOrders += no
			all += tx
		}
		res.Timeline = append(res.Timeline, sec)
	}
	minutes := float64(seconds) / 60
	res.NOPMClient = float64(newOrders) / minutes
	res.TPMClient = float64(all) / minutes
	res.NOPMDB = res.NOPMClient * 0.99 * (1 + 0.002*norm())
	res.TPMDB = res.TPMClient * 1.035 * (1 + 0.003*norm())
	res.Sources = map[string]string{
		"tpm_db":      "pg_stat_database xact_commit + xact_rollback of this database, delta over the timed window",
		"nopm_db":     "sum(district.d_next_o_id), delta over the timed window (committed New-Orders only)",
		"tpm_client":  "transactions of all five types completed inside the timed window, counted by storbench",
		"nopm_client": "New-Orders completed inside the timed window, counted by storbench (the 1% rolled back included, as the spec counts them)",
		"latency":     "client-measured response time per transaction, HdrHistogram 3 significant digits",
	}

	// Per-type counts and response times: users ÷ throughput is the mean (no think
	// time), shared out by each type's weight.
	counts := [tpcc.NumTransactions]int64{tpcc.NewOrder: newOrders}
	rest := all - newOrders
	for t := tpcc.Payment; t < tpcc.NumTransactions; t++ {
		counts[t] = int64(float64(rest) * mix[t] / (1 - mix[tpcc.NewOrder]) * (1 + 0.004*norm()))
	}
	meanWeight := 0.0
	for t := range tpcc.NumTransactions {
		meanWeight += mix[t] * relative[t]
	}
	meanMs := u / (res.TPMClient / 60) * 1000
	for t := range tpcc.NumTransactions {
		s := res.Transactions.Of(t)
		*s = txnStats(rng, counts[t], meanMs*relative[t]/meanWeight, p.latencySpreadQ)
		s.P90LimitMs = tpcc.Paces[t].P90Limit * 1000
		if t == tpcc.NewOrder {
			s.Rollbacks = binomial(rng, counts[t], 0.01)
		}
		if t == tpcc.NewOrder || t == tpcc.Payment || t == tpcc.Delivery {
			s.Retries = int64(float64(counts[t]) * 2e-6 * u * u * rng.Float64())
		}
	}
	no, pay, ost := counts[tpcc.NewOrder], counts[tpcc.Payment], counts[tpcc.OrderStatus]
	lines := no*10 + int64(math.Sqrt(float64(no)*10)*norm())
	res.Audit = tpcc.Audit(tpcc.InputStats{NewOrders: no, Rollbacks: res.Transactions.NewOrder.Rollbacks,
		OrderLines: lines, RemoteLines: binomial(rng, lines, 0.01), Payments: pay,
		RemotePayments: binomial(rng, pay, 0.15), PaymentsByName: binomial(rng, pay, 0.6),
		OrderStatuses: ost, OrderStatusesByName: binomial(rng, ost, 0.6)}, warehouses)
	res.ErrorsByKind = map[string]int64{}
	cpuSecs := float64(all) * (38 + 4*rng.Float64()) / 1e6
	res.ClientCPU = driver.ClientCPU{UserSeconds: cpuSecs * 0.7, SystemSeconds: cpuSecs * 0.3,
		PerTransactionMicros: cpuSecs * 1e6 / float64(all), Utilization: cpuSecs / (float64(seconds) * cores)}
	res.System = system(rng, p, st, j.window, ramp, seconds, nopm, levels, sinceCkpt)

	return &study.StepResult{Step: st, Started: j.started, Ended: j.ended, RestoreSeconds: j.restore, Run: res,
		Notes: []string{"instance limits: " + strings.Join(limits(s.Targets[slices.IndexFunc(s.Targets,
			func(t study.Target) bool { return t.Name == st.Target })]), "; ")}}
}

// binomial draws a count of n trials with probability p (normal approximation).
func binomial(rng *rand.Rand, n int64, p float64) int64 {
	v := float64(n)*p + math.Sqrt(float64(n)*p*(1-p))*rng.NormFloat64()
	return max(0, min(n, int64(math.Round(v))))
}

// txnStats records count response times (lognormal around meanMs with a tail of
// stalls) in the driver's histogram and reads the figures as the driver does.
func txnStats(rng *rand.Rand, count int64, meanMs, sigma float64) driver.TxnStats {
	s := driver.TxnStats{Count: count}
	if count == 0 {
		return s
	}
	h := hdrhistogram.New(1, int64(5*time.Minute/time.Microsecond), 3)
	draws := min(count, 6000)
	for i := range draws {
		w := count / draws
		if i < count%draws {
			w++
		}
		v := meanMs * math.Exp(sigma*rng.NormFloat64()-sigma*sigma/2)
		if rng.Float64() < 0.004 {
			v *= 3 + 7*rng.Float64()
		}
		_ = h.RecordValues(max(1, int64(v*1000)), w)
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	s.MeanMs = h.Mean() / 1000
	s.P50Ms, s.P90Ms, s.P95Ms = ms(h.ValueAtQuantile(50)), ms(h.ValueAtQuantile(90)), ms(h.ValueAtQuantile(95))
	s.P99Ms, s.MaxMs = ms(h.ValueAtQuantile(99)), ms(h.Max())
	if enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
		s.Histogram = base64.StdEncoding.EncodeToString(enc)
	}
	return s
}

// system makes the step's metrics report: one sample per second from the first
// second of the ramp-up to one past the window, and the window's summary.
func system(rng *rand.Rand, p *profile, st study.Step, origin time.Time, ramp, seconds int, nopm float64,
	levels map[int]float64, sinceCkpt func(int) float64) *metrics.Report {
	norm := rng.NormFloat64
	u := float64(st.Users)
	rep := &metrics.Report{Source: "this host's /proc and /sys", IntervalSeconds: 1,
		Placements: []blockdev.Placement{p.data, p.wal},
		Sources: map[string]string{"cpu": cpuSource, "memory": memorySource, "disks": diskSource,
			"io_latency": latencySource, "database": activitySource}}
	cache := 18.0 * (1 << 30)
	for t := -ramp + 1; t <= seconds+1; t++ {
		f, ok := levels[t]
		if !ok {
			f = 0.02 // the users have stopped
		}
		tps := nopm / mix[tpcc.NewOrder] / 60 * f
		into := float64(t + ramp)
		cold := math.Exp(-into / 25) // the base image was just restored
		dCkpt := sinceCkpt(t)
		inCkpt := !math.IsInf(dCkpt, 1) && dCkpt < 270 // checkpoint_completion_target 0.9
		fpw := 1.0
		if !math.IsInf(dCkpt, 1) {
			fpw += 1.6 * math.Exp(-dCkpt/45)
		}

		smp := metrics.Sample{T: float64(t), Time: origin.Add(secs(float64(t) + 0.0004*rng.Float64())),
			Seconds: 1 + 0.0003*norm()}

		load := u / (u + p.k)
		busy := min(96, 4+p.cpuPerNOPM*nopm*f/1000*(1+0.04*norm()))
		iowait := max(0, p.iowaitMax*load*(1+1.5*cold)*(1+0.15*norm()))
		user := busy * 0.72
		system := busy - user
		steal := max(0, 0.05*norm())
		idle := max(0, 100-busy-iowait-steal)
		sum := user + system + idle + iowait + steal
		smp.CPU = &metrics.CPU{User: 100 * user / sum, System: 100 * system / sum, Idle: 100 * idle / sum,
			IOWait: 100 * iowait / sum, Steal: 100 * steal / sum}

		cache += (2 + 6*cold) * 1e6 * (1 + 0.2*norm())
		dirty := 60e6 + 400e6*f*load*math.Abs(math.Sin(float64(t)/40)) + 20e6*norm()
		smp.Memory = &metrics.Memory{Total: hostMemory, Used: uint64(7.2*(1<<30) + 3e8*load + 5e6*norm()),
			Cache: uint64(cache), Dirty: uint64(max(1e6, dirty)), Writeback: uint64(max(0, 8e6*f*(1+norm())))}

		// Data disk: cache misses (more while cold), background and checkpoint writes.
		readIOPS := tps * (0.9 + 6*cold) * (1 + 0.08*norm())
		writeIOPS := tps * 0.35 * (1 + 0.15*norm())
		if inCkpt {
			writeIOPS *= 2.2
		}
		queue := (readIOPS + writeIOPS) * p.svcMs / 1000
		rAwait := p.readAwait * (1 + 0.8*queue) * (1 + 0.1*norm())
		wAwait := p.writeAwait * (1 + 0.5*queue) * (1 + 0.12*norm())
		data := disk(p.data, smp.Seconds, readIOPS, writeIOPS, 8192*(1+0.3*rng.Float64()), 14000*(1+0.4*rng.Float64()), rAwait, wAwait, p.svcMs)
		// WAL disk: group-committed flushes, WAL volume swelled by full-page writes.
		walMBps := tps * 5200 * fpw * (1 + 0.05*norm()) / 1e6
		walIOPS := tps * 0.8 / (1 + 0.08*u) * (1 + 0.05*norm())
		wal := disk(p.wal, smp.Seconds, 0.6*rng.Float64(), walIOPS, 4096, walMBps*1e6/max(walIOPS, 1), 0, p.walAwait*(1+0.02*u)*(1+0.1*norm()), p.svcMs)
		smp.Disks = []metrics.Disk{data, wal}
		smp.Latency = []metrics.Latency{latency(rng, data), latency(rng, wal)}

		commits := tps * 1.035 * 0.995
		read := readIOPS * 1.9
		hit := tps * 52 * (1 + 0.05*norm())
		db := &metrics.Database{CommitsPerSec: commits, RollbacksPerSec: tps * mix[tpcc.NewOrder] * 0.01 * (1 + 0.3*norm()),
			BlocksReadPerS: read, BlocksHitPerS: hit, BufferHitPct: 100 * hit / (hit + read), WALMBps: walMBps * 0.995}
		if !math.IsInf(dCkpt, 1) && int(dCkpt) == 270 {
			db.Checkpoints = 1
		}
		smp.Database = db
		rep.Samples = append(rep.Samples, smp)
	}
	rep.Summary = summarize(rep.Samples, 0, float64(seconds))
	return rep
}

// disk is a device's figures over an interval of seconds, from whole I/O counts as
// /proc/diskstats gives them.
func disk(p blockdev.Placement, seconds, readIOPS, writeIOPS, readSize, writeSize, rAwait, wAwait, svcMs float64) metrics.Disk {
	readIOPS, writeIOPS = math.Round(max(0, readIOPS)*seconds)/seconds, math.Round(max(0, writeIOPS)*seconds)/seconds
	rAwait, wAwait = max(0.01, rAwait), max(0.01, wAwait)
	if readIOPS == 0 {
		rAwait = 0
	}
	return metrics.Disk{Device: p.Devices[0].Name, Roles: []string{p.Role}, ReadIOPS: readIOPS, WriteIOPS: writeIOPS,
		ReadMBps: readIOPS * readSize / 1e6, WriteMBps: writeIOPS * writeSize / 1e6, ReadAwaitMs: rAwait, WriteAwaitMs: wAwait,
		AvgQueue: (readIOPS*rAwait + writeIOPS*wAwait) / 1000, BusyPct: min(100, (readIOPS+writeIOPS)*svcMs/10)}
}

// latency is a device's per-I/O latency, at the bucket edges bpftrace's histogram
// would report (within 1/16).
func latency(rng *rand.Rand, d metrics.Disk) metrics.Latency {
	ios := int64(math.Round(d.ReadIOPS + d.WriteIOPS)) // over about 1 s
	mean := d.WriteAwaitMs
	if d.ReadIOPS+d.WriteIOPS > 0 {
		mean = (d.ReadIOPS*d.ReadAwaitMs + d.WriteIOPS*d.WriteAwaitMs) / (d.ReadIOPS + d.WriteIOPS)
	}
	edge := func(ms float64) float64 {
		us := max(1, ms*1000)
		e := math.Exp2(math.Floor(math.Log2(us)))
		step := e / 16
		return math.Ceil(us/step) * step / 1000
	}
	return metrics.Latency{Device: d.Device, IOs: ios, P50Ms: edge(mean * 0.7),
		P99Ms: edge(mean * (3.5 + rng.Float64())), P999Ms: edge(mean * (8 + 6*rng.Float64()))}
}

// summarize sums the samples of (from, to] as metrics.Summarize does, from the
// figures (the synthetic samples have no raw counters).
func summarize(samples []metrics.Sample, from, to float64) metrics.Summary {
	sum := metrics.Summary{FromT: from, ToT: to}
	var cpu metrics.CPU
	var mem [5]float64
	type acc struct {
		d                          metrics.Disk
		rIOs, wIOs, rMs, wMs, secs float64
	}
	disks := map[string]*acc{}
	var order []string
	type lat struct {
		ios          int64
		p50, p99, p9 []float64
	}
	lats := map[string]*lat{}
	var db metrics.Database
	var dbSecs, hits, reads float64
	for i := range samples {
		s := &samples[i]
		if mid := s.T - s.Seconds/2; mid <= from || mid > to {
			continue
		}
		sum.Samples++
		c := s.CPU
		cpu.User, cpu.System, cpu.Idle, cpu.IOWait, cpu.Steal = cpu.User+c.User, cpu.System+c.System, cpu.Idle+c.Idle, cpu.IOWait+c.IOWait, cpu.Steal+c.Steal
		m := s.Memory
		for j, v := range []uint64{m.Total, m.Used, m.Cache, m.Dirty, m.Writeback} {
			mem[j] += float64(v)
		}
		for _, d := range s.Disks {
			a := disks[d.Device]
			if a == nil {
				a = &acc{d: metrics.Disk{Device: d.Device, Roles: d.Roles}}
				disks[d.Device] = a
				order = append(order, d.Device)
			}
			a.rIOs += d.ReadIOPS * s.Seconds
			a.wIOs += d.WriteIOPS * s.Seconds
			a.rMs += d.ReadIOPS * s.Seconds * d.ReadAwaitMs
			a.wMs += d.WriteIOPS * s.Seconds * d.WriteAwaitMs
			a.d.ReadMBps += d.ReadMBps * s.Seconds
			a.d.WriteMBps += d.WriteMBps * s.Seconds
			a.d.AvgQueue += d.AvgQueue * s.Seconds
			a.d.BusyPct += d.BusyPct * s.Seconds
			a.secs += s.Seconds
		}
		for _, l := range s.Latency {
			a := lats[l.Device]
			if a == nil {
				a = &lat{}
				lats[l.Device] = a
			}
			a.ios += l.IOs
			a.p50, a.p99, a.p9 = append(a.p50, l.P50Ms), append(a.p99, l.P99Ms), append(a.p9, l.P999Ms)
		}
		d := s.Database
		db.CommitsPerSec += d.CommitsPerSec * s.Seconds
		db.RollbacksPerSec += d.RollbacksPerSec * s.Seconds
		db.BlocksReadPerS += d.BlocksReadPerS * s.Seconds
		db.BlocksHitPerS += d.BlocksHitPerS * s.Seconds
		db.WALMBps += d.WALMBps * s.Seconds
		db.Checkpoints += d.Checkpoints
		hits += d.BlocksHitPerS * s.Seconds
		reads += d.BlocksReadPerS * s.Seconds
		dbSecs += s.Seconds
	}
	if sum.Samples == 0 {
		return sum
	}
	n := float64(sum.Samples)
	sum.CPU = &metrics.CPU{User: cpu.User / n, System: cpu.System / n, Idle: cpu.Idle / n, IOWait: cpu.IOWait / n, Steal: cpu.Steal / n}
	sum.Memory = &metrics.Memory{Total: uint64(mem[0] / n), Used: uint64(mem[1] / n), Cache: uint64(mem[2] / n),
		Dirty: uint64(mem[3] / n), Writeback: uint64(mem[4] / n)}
	for _, name := range order {
		a := disks[name]
		d := a.d
		d.ReadIOPS, d.WriteIOPS = a.rIOs/a.secs, a.wIOs/a.secs
		d.ReadMBps, d.WriteMBps, d.AvgQueue, d.BusyPct = d.ReadMBps/a.secs, d.WriteMBps/a.secs, d.AvgQueue/a.secs, d.BusyPct/a.secs
		if a.rIOs > 0 {
			d.ReadAwaitMs = a.rMs / a.rIOs
		}
		if a.wIOs > 0 {
			d.WriteAwaitMs = a.wMs / a.wIOs
		}
		sum.Disks = append(sum.Disks, d)
		l := lats[name]
		slices.Sort(l.p50)
		slices.Sort(l.p99)
		slices.Sort(l.p9)
		q := func(v []float64, f float64) float64 { return v[min(len(v)-1, int(f*float64(len(v))))] }
		sum.Latency = append(sum.Latency, metrics.Latency{Device: name, IOs: l.ios, P50Ms: q(l.p50, 0.5),
			P99Ms: q(l.p99, 0.9), P999Ms: q(l.p9, 0.99)})
	}
	db.CommitsPerSec /= dbSecs
	db.RollbacksPerSec /= dbSecs
	db.BlocksReadPerS /= dbSecs
	db.BlocksHitPerS /= dbSecs
	db.WALMBps /= dbSecs
	db.BufferHitPct = 100 * hits / (hits + reads)
	sum.Database = &db
	return sum
}
