package driver

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/storbench/storbench/internal/bottleneck"
	"github.com/storbench/storbench/internal/instance/cgroup"
	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/steady"
	"github.com/storbench/storbench/internal/tpcc"
)

// Result is a run's outcome: what the JSON file holds and the text summary shows.
// Every throughput figure says where it comes from: the database's own counters
// (HammerDB's view) or the client's count of completed transactions.
type Result struct {
	Config RunConfig `json:"config"`
	// Start and End bound the timed window.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Database view (HammerDB-compatible): counter deltas over the window, per minute.
	TPMDB  float64 `json:"tpm_db"`
	NOPMDB float64 `json:"nopm_db"`
	// Client view: transactions completed inside the window, per minute.
	TPMClient  float64 `json:"tpm_client"`
	NOPMClient float64 `json:"nopm_client"`
	// HammerDBNOPM is, under input rules whose tool commits the unused-item
	// New-Orders (hammerdb), the NOPM that tool would have shown: nopm_db plus the
	// New-Orders rolled back. Sources says how it was made.
	HammerDBNOPM float64 `json:"hammerdb_nopm,omitempty"`
	// Sources names where each figure comes from.
	Sources      map[string]string `json:"sources"`
	Transactions Transactions      `json:"transactions"`
	Audit        []tpcc.AuditRow   `json:"audit"`
	ErrorsByKind map[string]int64  `json:"errors_by_kind"`
	ClientCPU    ClientCPU         `json:"client_cpu"`
	Timeline     []Second          `json:"timeline"`
	// Interrupted: the window was cut short at End; every rate is over the part that ran.
	Interrupted bool `json:"interrupted,omitempty"`
	// OutageSeconds counts the seconds of the window in which no transaction completed
	// (a server down, a stall); the timeline shows when, with the errors per second.
	OutageSeconds int `json:"outage_s,omitempty"`
	// DatabaseUnavailable: the server did not answer at the window's end, so the
	// database view (tpm_db, nopm_db) holds the client's counts; Sources says why.
	DatabaseUnavailable bool `json:"db_unavailable,omitempty"`
	// Rate is an open-loop run's arrivals and what became of them (nil: closed loop).
	Rate *RateResult `json:"rate,omitempty"`
	// System is what the metrics sampler measured on the same timeline.
	System *metrics.Report `json:"system,omitempty"`
	// Bottleneck is what limited the window, judged from System and ClientCPU.
	Bottleneck *bottleneck.Verdict `json:"bottleneck,omitempty"`
	Notes      []string            `json:"notes,omitempty"`

	// Steadiness judges the window's last planned-duration seconds (all of it,
	// unless it ran until steady) from the timeline (Judge).
	Steadiness *steady.Verdict `json:"steadiness,omitempty"`
	// UntilSteadyEnded says how a window run until steady ended: EndedSteady or
	// EndedAtMax ("" when not run until steady, or interrupted); Start and End say
	// how long it ran.
	UntilSteadyEnded string `json:"until_steady_ended,omitempty"`
}

// CounterWindow is the shortest timed window whose database TPM is measured rather
// than indicative: a database publishes its transaction counts late (a PostgreSQL
// backend flushes its pg_stat_database counts at most once a second, later under
// load), so over a window of seconds that lag is tens of per cent of the figure, and
// so is the noise of the few transactions counted. NOPM (database) is read from the
// data (sum of d_next_o_id), not from a counter. The report names no winner over a
// shorter window, and every view of a run marks its database TPM then.
const CounterWindow = 30 * time.Second

// ShortWindowMark is what the terminal views of a run append to a database TPM that
// TPMDBIndicative.
var ShortWindowMark = fmt.Sprintf("(window under %.0f s: database TPM indicative)", CounterWindow.Seconds())

// clientStandIn is, per database figure, the client figure that stands in for it
// when the database kept no counter or could not be read: Sources then say so
// ("…, as tpm_client").
var clientStandIn = map[string]string{"tpm_db": "tpm_client", "nopm_db": "nopm_client"}

// NotMeasured begins the source of a figure that was not measured (a result read
// from another tool's report that has none): its value is 0 and means nothing, and
// views show none.
const NotMeasured = "not measured"

// Measured tells whether a figure ("tpm_client", "timeline_nopm") was measured.
func (r *Result) Measured(figure string) bool {
	return !strings.HasPrefix(r.Sources[figure], NotMeasured)
}

// FromClient tells whether a database figure ("tpm_db", "nopm_db") is the client's
// count standing in.
func (r *Result) FromClient(figure string) bool {
	return strings.HasSuffix(r.Sources[figure], "as "+clientStandIn[figure])
}

// TPMDBIndicative tells whether the database TPM is a database counter read over a
// timed window under CounterWindow: it can then be tens of per cent off (even below
// NOPM), and is marked wherever it is shown.
func (r *Result) TPMDBIndicative() bool {
	return !r.FromClient("tpm_db") && r.End.Sub(r.Start) < CounterWindow
}

// RunConfig is the run's configuration as recorded (no password).
type RunConfig struct {
	Engine          string  `json:"engine"`
	DSN             string  `json:"dsn"`
	Mode            string  `json:"mode"`
	Users           int     `json:"users"`
	RampSeconds     float64 `json:"ramp_s"`
	DurationSeconds float64 `json:"duration_s"`
	AllWarehouses   bool    `json:"all_warehouses"`
	Keying          bool    `json:"keying"`
	// Rate (transactions a minute), Arrivals and LatencyLimitMs are an open-loop
	// run's (Config.Rate); absent for closed-loop users.
	Rate           float64 `json:"rate_tpm,omitempty"`
	Arrivals       string  `json:"arrivals,omitempty"`
	LatencyLimitMs float64 `json:"latency_limit_ms,omitempty"`
	Inputs         string  `json:"inputs"` // input rules: spec or hammerdb
	Warehouses     int     `json:"warehouses"`
	Schema         string  `json:"schema"`   // the build's (engine.BuildInfo.Schema); "" not built by storbench
	BuiltBy        string  `json:"built_by"` // engine.BuildInfo.BuiltBy; "" a tool storbench does not know
	Seed           uint64  `json:"seed"`
	CLoad          int     `json:"c_load"` // -1: unknown
	CRun           int     `json:"c_run"`
	MaxRetries     int     `json:"max_retries"`
	ClientCPUs     int     `json:"client_cpus"`
	Version        string  `json:"storbench_version"`
	ServerVersion  string  `json:"server_version"`

	// UntilSteadySeconds is Config.UntilSteady: the longest the window could run
	// (0: it ran its duration).
	UntilSteadySeconds float64 `json:"until_steady_s,omitempty"`
}

// Server is the product and release of the server the run was on, from its own
// version string, as a server says it over SQL or its binary on the command line:
// "PostgreSQL 15.18 (Debian …) on x86_64…" and "postgres (PostgreSQL) 13.23" are
// PostgreSQL 15.18 and 13.23, "MariaDB 10.11.6-MariaDB-0+deb12u1" and "mariadbd  Ver
// 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu" MariaDB; "" when none was recorded.
func (c RunConfig) Server() (product, release string) {
	f := strings.Fields(c.ServerVersion)
	i := slices.IndexFunc(f, func(w string) bool { return w[0] >= '0' && w[0] <= '9' })
	if i < 0 {
		return c.ServerVersion, ""
	}
	release, suffix, _ := strings.Cut(strings.TrimSuffix(f[i], ","), "-")
	switch {
	case i > 0 && strings.HasPrefix(f[i-1], "(") && strings.HasSuffix(f[i-1], ")"):
		product = strings.Trim(f[i-1], "()") // a binary's "postgres (PostgreSQL) 13.23"
	case i > 0 && f[i-1] == "Ver":
		product, _, _ = strings.Cut(suffix, "-") // "mariadbd Ver 10.11.19-MariaDB-…"
		if product == "" {
			product = f[0]
		}
	default:
		product = strings.Join(f[:i], " ")
	}
	return product, release
}

// Tool is what measured the run: "HammerDB" for a run read from HammerDB's job report
// (its Version says "HammerDB vX"), storbench otherwise.
func (c RunConfig) Tool() string {
	if strings.HasPrefix(c.Version, "HammerDB ") {
		return "HammerDB"
	}
	return "storbench"
}

// Transactions holds per-type statistics in the spec's order.
type Transactions struct {
	NewOrder    TxnStats `json:"new_order"`
	Payment     TxnStats `json:"payment"`
	OrderStatus TxnStats `json:"order_status"`
	Delivery    TxnStats `json:"delivery"`
	StockLevel  TxnStats `json:"stock_level"`
}

// Of returns the statistics of one type.
func (t *Transactions) Of(x tpcc.Transaction) *TxnStats {
	return [...]*TxnStats{&t.NewOrder, &t.Payment, &t.OrderStatus, &t.Delivery, &t.StockLevel}[x]
}

// TxnStats are one transaction type's counts and latencies (client-measured response
// times of completed transactions, retries included, keying and think times not).
type TxnStats struct {
	Count     int64 `json:"count"`     // completed, rollbacks included
	Rollbacks int64 `json:"rollbacks"` // New-Order's expected 1% (2.4.2.3)
	Retries   int64 `json:"retries"`   // serialization failures and deadlocks retried
	Errors    int64 `json:"errors"`    // failed after retries
	// Skipped counts Delivery's districts with nothing to deliver (2.7.4.2).
	Skipped    int64   `json:"skipped,omitempty"`
	P90LimitMs float64 `json:"p90_limit_ms"` // 5.2.5.4
	// Latencies are the response times: their summary and their HdrHistogram (µs)
	// in its V2 compressed encoding, base64, so repeated runs can be merged exactly
	// later.
	Latencies
	// Service are an open-loop run's latencies from when a user began each
	// transaction (the fields above run from when it was due); nil closed-loop.
	Service *Latencies `json:"service,omitempty"`
}

// Latencies are a distribution of latencies: its summary and its histogram.
type Latencies struct {
	MeanMs    float64 `json:"mean_ms"`
	P50Ms     float64 `json:"p50_ms"`
	P90Ms     float64 `json:"p90_ms"`
	P95Ms     float64 `json:"p95_ms"`
	P99Ms     float64 `json:"p99_ms"`
	MaxMs     float64 `json:"max_ms"`
	Histogram string  `json:"histogram"`
}

// RateResult is what became of an open-loop run's arrivals in the timed window.
type RateResult struct {
	// OfferedTPM is the rate asked for; ArrivedTPM the arrivals the schedule drew
	// in the window, per minute (Poisson arrivals vary around the rate); AchievedTPM
	// the transactions completed in it (tpm_client).
	OfferedTPM  float64 `json:"offered_tpm"`
	ArrivedTPM  float64 `json:"arrived_tpm"`
	AchievedTPM float64 `json:"achieved_tpm"`
	Arrivals    string  `json:"arrivals"`
	Arrived     int64   `json:"arrived"`
	// Skipped arrivals of the window were already later than the latency limit when
	// a user was free; Late transactions completed in it with a response time over
	// the limit; Backlog arrivals of the window no user had begun at its end.
	Skipped        int64   `json:"skipped"`
	SkippedShare   float64 `json:"skipped_share"`
	Late           int64   `json:"late"`
	LatencyLimitMs float64 `json:"latency_limit_ms,omitempty"`
	Backlog        int64   `json:"backlog"`
	// Lag is how late the users began the window's transactions (schedule lag).
	Lag Latencies `json:"schedule_lag"`
	// UsersBusy is the share of the users' time in the window spent in
	// transactions: near 1 every user was busy, and the rate needed more of them.
	UsersBusy float64 `json:"users_busy"`
}

// ClientCPU is the CPU time this process spent over the timed window.
type ClientCPU struct {
	UserSeconds   float64 `json:"user_s"`
	SystemSeconds float64 `json:"system_s"`
	// PerTransactionMicros is (user + system) ÷ transactions completed in the window.
	PerTransactionMicros float64 `json:"us_per_txn"`
	// Utilization is (user + system) ÷ (window × client CPUs): near 1 the driver itself
	// limited the throughput.
	Utilization float64 `json:"utilization"`
	// WaitSeconds is the time the driver's threads were runnable but waiting for a
	// CPU (taken by other processes, or its cgroup's quota spent); absent where
	// /proc/self/task/*/schedstat cannot be read.
	WaitSeconds *float64 `json:"cpu_wait_s,omitempty"`
	// Demand is (user + system + wait) ÷ (window × client CPUs): the share of its
	// client CPUs the driver ran or wanted to run. Near 1 it set the pace even when
	// other processes kept its Utilization low.
	Demand *float64 `json:"demand,omitempty"`
	// QuotaCPUs is the CFS quota of this process's cgroup, in CPUs, when one is set:
	// the driver could use no more, whatever --client-cpus.
	QuotaCPUs float64 `json:"quota_cpus,omitempty"`
}

// DriverFigures are what the bottleneck verdict reads of the driver.
func (r *Result) DriverFigures() bottleneck.Driver {
	c := r.ClientCPU
	return bottleneck.Driver{CPUs: r.Config.ClientCPUs, Users: r.Config.Users, Utilization: c.Utilization, Demand: c.Demand, QuotaCPUs: c.QuotaCPUs}
}

// clientBound is the utilization above which a result warns that the driver, not the
// database, may have set the pace.
const clientBound = 0.8

// Second is one second of the run, counted by the client: T covers (T-1, T] seconds
// from the window's start, so ramp-up seconds have T <= 0.
type Second struct {
	T      int     `json:"t"`
	Phase  string  `json:"phase"`
	TPM    float64 `json:"tpm"`
	NOPM   float64 `json:"nopm"`
	Errors int64   `json:"errors"`
	// Open-loop runs: the transactions that arrived (came due) in the second, per
	// minute; those skipped in it for the latency limit; and the arrivals due and
	// not yet started at its end.
	OfferedTPM float64 `json:"offered_tpm,omitempty"`
	Skipped    int64   `json:"skipped,omitempty"`
	Backlog    int     `json:"backlog,omitempty"`
}

func resultConfig(cfg Config) RunConfig {
	rc := RunConfig{Mode: string(cfg.Mode), Users: cfg.Users, RampSeconds: cfg.Ramp.Seconds(),
		DurationSeconds: cfg.Duration.Seconds(), AllWarehouses: cfg.AllWarehouses, Keying: cfg.Keying,
		Inputs: cfg.Inputs, Seed: cfg.Seed, MaxRetries: cfg.MaxRetries, ClientCPUs: cfg.ClientCPUs,
		UntilSteadySeconds: cfg.UntilSteady.Seconds()}
	if cfg.Rate > 0 {
		rc.Rate, rc.Arrivals, rc.LatencyLimitMs = cfg.Rate, cfg.Arrivals, ms(cfg.LatencyLimit.Microseconds())
	}
	return rc
}

// finish computes the result from the window's measurements.
// The client counts transactions completing inside the planned window, so its rates
// are over the planned duration; the database counters are rates over the time between
// their two reads.
func (res *Result) finish(w *window, shards []*shard, cfg Config, r *run) {
	res.Start, res.End = r.windowStart, w.end
	minutes := res.End.Sub(res.Start).Minutes()
	if w.interrupted != nil {
		res.Interrupted = true
		why := "interrupted"
		if !errors.Is(w.interrupted, context.Canceled) {
			why = "stopped (" + strings.ReplaceAll(w.interrupted.Error(), "\n", "; ") + ")"
		}
		res.Notes = append(res.Notes, fmt.Sprintf("%s after %.1f s of the %.0f s timed window: every figure is over the part that ran",
			why, res.End.Sub(res.Start).Seconds(), cfg.Duration.Seconds()))
	}
	dbMinutes := w.after.At.Sub(w.before.At).Minutes()
	res.TPMDB = PerMinute(w.after.Transactions-w.before.Transactions, dbMinutes)
	res.NOPMDB = PerMinute(w.after.NextOrderIDs-w.before.NextOrderIDs, dbMinutes)
	res.Sources = map[string]string{
		"tpm_db":      w.after.TransactionsSource + ", delta over the timed window",
		"nopm_db":     w.after.NewOrdersSource + ", delta over the timed window (committed New-Orders only)",
		"tpm_client":  "transactions of all five types completed inside the timed window, counted by storbench",
		"nopm_client": "New-Orders completed inside the timed window, counted by storbench (the 1% rolled back included, as the spec counts them)",
		"latency":     "client-measured response time per transaction, HdrHistogram 3 significant digits",
	}
	m := mergeShards(shards)
	counts := m.counts
	var completed int64
	for t := range tpcc.NumTransactions {
		s := res.Transactions.Of(t)
		c := counts[t]
		*s = TxnStats{Count: c.completed, Rollbacks: c.rollbacks, Retries: c.retries, Errors: c.errors,
			Skipped: c.skipped, P90LimitMs: tpcc.Paces[t].P90Limit * 1000}
		s.Latencies = summarize(m.hist[t])
		if r.sched != nil {
			service := summarize(m.service[t])
			s.Service = &service
		}
		completed += c.completed
	}
	res.TPMClient = PerMinute(completed, minutes)
	res.NOPMClient = PerMinute(counts[tpcc.NewOrder].completed, minutes)
	if r.sched != nil {
		res.openLoop(w, m, cfg, minutes)
	}
	// A server that restarted inside the window reset its statistics: the delta
	// means nothing (negative, or counted from the restart), so the client's count
	// stands in, and says so. NOPM (the data itself) is not affected.
	// (An uptime-derived start moves by a second between readings: only a jump counts.)
	restarted := w.after.Since.Sub(w.before.Since).Abs() > 2*time.Second
	if (w.after.Transactions < w.before.Transactions || restarted) && !w.after.NoTransactionCounter {
		res.TPMDB = res.TPMClient
		res.Sources["tpm_db"] = "the database's transaction counter went back during the window (a server restart resets it): the client's count, as tpm_client"
		res.Notes = append(res.Notes, "the database's transaction counter was reset during the window (server restart): database TPM is the client's count")
	}
	if w.countersLost != nil {
		res.TPMDB, res.NOPMDB = res.TPMClient, res.NOPMClient
		res.DatabaseUnavailable = true
		lost := "unavailable: the database could not be read at the window's end (" + strings.ReplaceAll(w.countersLost.Error(), "\n", "; ") + "); the client's count"
		res.Sources["tpm_db"], res.Sources["nopm_db"] = lost+", as tpm_client", lost+", as nopm_client"
		res.Notes = append(res.Notes, "database TPM and NOPM unavailable, the client's counts stand in: the server did not answer at the window's end")
	}
	if w.after.NoTransactionCounter {
		res.TPMDB = res.TPMClient
		res.Sources["tpm_db"] = "the engine keeps no transaction counter (" + r.db.Engine() + "): the client's count, as tpm_client"
		res.Notes = append(res.Notes, "database TPM is the client's count: the engine keeps no transaction counter; NOPM (database) is sum(d_next_o_id)")
	}
	if r.rules.NOPMCountsUnusedItem {
		res.hammerDBNOPM(counts[tpcc.NewOrder].rollbacks, minutes)
	}
	res.ErrorsByKind = m.kinds
	res.Audit = tpcc.Audit(m.inputs, res.Config.Warehouses)
	res.ClientCPU = clientCPU(w.cpuBefore, w.cpuAfter, completed)
	res.ClientCPU.QuotaCPUs = cgroup.ProcessCPUQuota()
	if secs := res.End.Sub(res.Start).Seconds() * float64(cfg.ClientCPUs); secs > 0 {
		c := &res.ClientCPU
		c.Utilization = (c.UserSeconds + c.SystemSeconds) / secs
		if c.WaitSeconds != nil {
			d := (c.UserSeconds + c.SystemSeconds + *c.WaitSeconds) / secs
			c.Demand = &d
		}
	}
	if res.ClientCPU.Utilization > clientBound {
		res.Notes = append(res.Notes, fmt.Sprintf("the driver used %.0f%% of its %d client CPUs: it may have limited the throughput; raise --client-cpus",
			res.ClientCPU.Utilization*100, cfg.ClientCPUs))
	}
	res.Timeline = w.timeline
	// Without keying and think times users never pause: a second of the window in
	// which none completed a transaction is an outage. With them, a quiet second is
	// the spec's pacing, not a fault.
	for _, sec := range w.timeline {
		if sec.T > 0 && sec.TPM == 0 && !cfg.Keying {
			res.OutageSeconds++
		}
	}
	if res.OutageSeconds > 0 {
		var errs int64
		for _, sec := range w.timeline {
			if sec.T > 0 {
				errs += sec.Errors
			}
		}
		res.Notes = append(res.Notes, fmt.Sprintf("%d seconds of the timed window completed no transaction (%d errors in the window): see the timeline", res.OutageSeconds, errs))
	}
	res.steadiness(w, cfg, r)
}

// hammerDBNOPM sets the NOPM of a tool that commits the New-Orders this run rolled
// back for an unused item (rolledBack in the window).
func (res *Result) hammerDBNOPM(rolledBack int64, minutes float64) {
	if res.DatabaseUnavailable {
		// nopm_db is the client's count, which has the rolled-back ones already.
		res.HammerDBNOPM = res.NOPMDB
		res.Sources["hammerdb_nopm"] = "nopm_client (the New-Orders rolled back for an unused item included): the database could not be read at the window's end"
		return
	}
	res.HammerDBNOPM = res.NOPMDB + PerMinute(rolledBack, minutes)
	res.Sources["hammerdb_nopm"] = fmt.Sprintf("nopm_db plus the %d New-Orders rolled back for an unused item (2.4.1.4) in the window, per minute: what HammerDB 4.12's NOPM (delta of sum(d_next_o_id)) counts, as it commits them", rolledBack)
}

// PerMinute converts a count over a window to a rate per minute.
func PerMinute(n int64, minutes float64) float64 {
	if minutes <= 0 {
		return 0
	}
	return float64(n) / minutes
}

// summarize is a histogram's summary, with the histogram itself encoded.
func summarize(h *hdrhistogram.Histogram) Latencies {
	var l Latencies
	if h.TotalCount() == 0 {
		return l
	}
	l.MeanMs = h.Mean() / 1000
	l.P50Ms = ms(h.ValueAtQuantile(50))
	l.P90Ms = ms(h.ValueAtQuantile(90))
	l.P95Ms = ms(h.ValueAtQuantile(95))
	l.P99Ms = ms(h.ValueAtQuantile(99))
	l.MaxMs = ms(h.Max())
	if enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
		l.Histogram = base64.StdEncoding.EncodeToString(enc)
	}
	return l
}

func ms(us int64) float64 { return float64(us) / 1000 }

func clientCPU(before, after cpuReading, completed int64) ClientCPU {
	user := tvSeconds(after.usage.Utime) - tvSeconds(before.usage.Utime)
	sys := tvSeconds(after.usage.Stime) - tvSeconds(before.usage.Stime)
	c := ClientCPU{UserSeconds: user, SystemSeconds: sys}
	if before.runDelay >= 0 && after.runDelay >= 0 {
		wait := max(after.runDelay-before.runDelay, 0)
		c.WaitSeconds = &wait
	}
	if completed > 0 {
		c.PerTransactionMicros = (user + sys) * 1e6 / float64(completed)
	}
	return c
}

func tvSeconds(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }

// ResponseAt is the response time in ms at percentile p (0-100) of the window's
// completed transactions of the given types (all five when none are given), read
// from their histograms: any percentile, not only the summarized ones. ok is false
// when none completed.
func (r *Result) ResponseAt(p float64, types ...tpcc.Transaction) (latency float64, ok bool, err error) {
	if len(types) == 0 {
		for t := range tpcc.NumTransactions {
			types = append(types, t)
		}
	}
	all := newHistogram()
	for _, t := range types {
		h, err := r.Transactions.Of(t).Decode()
		if err != nil {
			return 0, false, fmt.Errorf("%s latency histogram: %w", t, err)
		}
		if h != nil {
			all.Merge(h)
		}
	}
	if all.TotalCount() == 0 {
		return 0, false, nil
	}
	return float64(all.ValueAtQuantile(p)) / 1000, true, nil
}

// Decode is the latencies' histogram (µs); nil when the result holds none.
func (l *Latencies) Decode() (*hdrhistogram.Histogram, error) {
	if l.Histogram == "" {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(l.Histogram)
	if err != nil {
		return nil, err
	}
	return hdrhistogram.Decode(b)
}
