package study

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/tpcc"
)

// Capacity is an experiment kind: per target, the highest rate of transactions its
// database carries within a latency objective (the SLO), searched with short
// open-loop probes, each from the base image (docs/capacity.md).
const Capacity = "capacity"

// Defaults of a capacity search.
const (
	// DefaultMinAchieved: a probe that kept up completes about all that arrived; the
	// driver's own note on users that held the rate back uses the same share.
	DefaultMinAchieved = 0.99
	DefaultStartRate   = 1000
	DefaultPrecision   = 0.05
	// DefaultMaxProbes: doubling from 1,000 TPM reaches 1M TPM in 11 probes; a
	// bracket of 2x narrows to 5% in 5 more, so 12 finds most capacities a few
	// doublings from the start.
	DefaultMaxProbes = 12
	// MaxProbes bounds max_probes: each probe is a window of minutes, and a search
	// of a hundred has long narrowed to any precision worth asking for.
	MaxProbes = 100
)

// SLO is what a probe must meet: the response time at Percentile of Transaction's
// completed transactions at most Ms (from when each was due: open-loop); with
// DiskP99Ms, the data disk's per-I/O 99th percentile at most that too.
type SLO struct {
	Transaction string  `yaml:"transaction" json:"transaction"`
	Percentile  float64 `yaml:"percentile" json:"percentile"`
	Ms          float64 `yaml:"ms" json:"ms"`
	DiskP99Ms   float64 `yaml:"disk_p99_ms" json:"disk_p99_ms,omitempty"`
}

// sloTransaction is a transaction name an SLO takes, with how text names it and the
// types it stands for (all five for "all").
type sloTransaction struct {
	key, title string
	types      []tpcc.Transaction
}

var sloTransactions = []sloTransaction{
	{"new-order", "New-Order", []tpcc.Transaction{tpcc.NewOrder}},
	{"payment", "Payment", []tpcc.Transaction{tpcc.Payment}},
	{"order-status", "Order-Status", []tpcc.Transaction{tpcc.OrderStatus}},
	{"delivery", "Delivery", []tpcc.Transaction{tpcc.Delivery}},
	{"stock-level", "Stock-Level", []tpcc.Transaction{tpcc.StockLevel}},
	{"all", "all transactions", nil},
}

// sloTransactionOf is the SLO transaction of that name; nil when there is none.
func sloTransactionOf(key string) *sloTransaction {
	if i := slices.IndexFunc(sloTransactions, func(t sloTransaction) bool { return t.key == key }); i >= 0 {
		return &sloTransactions[i]
	}
	return nil
}

// Latency names the SLO's latency: "New-Order p90".
func (o SLO) Latency() string {
	title := o.Transaction
	if t := sloTransactionOf(o.Transaction); t != nil {
		title = t.title
	}
	return title + " p" + strconv.FormatFloat(o.Percentile, 'f', -1, 64)
}

// String is the objective as the plan and the findings write it: "New-Order p90 ≤ 5
// ms", with ", data disk p99 ≤ 10 ms" when it has one.
func (o SLO) String() string {
	s := fmt.Sprintf("%s ≤ %s ms", o.Latency(), strconv.FormatFloat(o.Ms, 'f', -1, 64))
	if o.DiskP99Ms > 0 {
		s += fmt.Sprintf(", data disk p99 ≤ %s ms", strconv.FormatFloat(o.DiskP99Ms, 'f', -1, 64))
	}
	return s
}

type capacity struct{ onAny }

func (capacity) name() string { return Capacity }
func (capacity) knobs() []string {
	return []string{"users", "ramp", "duration", "slo", "min_achieved", "start_rate", "precision", "max_probes"}
}

func (capacity) check(c *checker, s *Study, i int, e *Experiment) {
	p := func(key string) string { return fmt.Sprintf("experiments[%d].%s", i, key) }
	switch n := len(e.Users.Values); {
	case n == 0:
		c.errf(p("users"), "%s has no users", "add users: N, the users that carry its rates at once, e.g. users: 16", label(e))
	case n > 1:
		c.errf(p("users"), "%s takes one users value, the users that carry its rates at once, not %d", "give one, e.g. users: %d: enough to carry the highest rate (rate × mean response time)", label(e), n, e.Users.Values[n-1])
	}
	c.window(i, e)
	if s.Workload.Keying {
		c.errf(p("kind"), "%s offers rates, which workload.keying would pace with keying and think times too", "set keying: false, or run the capacity search in a study of its own", label(e))
	}
	c.slo(s, i, e)
	if !c.doc.Has(p("min_achieved")) {
		e.MinAchieved = DefaultMinAchieved
	} else if !(e.MinAchieved > 0 && e.MinAchieved <= 1) {
		c.errf(p("min_achieved"), "%s %g is out of range", "give the share of the arrivals a probe must complete to pass, above 0 and at most 1, e.g. %g", p("min_achieved"), e.MinAchieved, DefaultMinAchieved)
	}
	if !c.doc.Has(p("start_rate")) {
		e.StartRate = DefaultStartRate
	} else if !(e.StartRate > 0 && e.StartRate <= driver.MaxRate) {
		c.errf(p("start_rate"), "%s %g is out of range", "give the first probe's rate in transactions per minute, above 0 and at most %g, e.g. %d", p("start_rate"), e.StartRate, float64(driver.MaxRate), DefaultStartRate)
	}
	if !c.doc.Has(p("precision")) {
		e.Precision = DefaultPrecision
	} else if !(e.Precision > 0 && e.Precision <= 1) {
		c.errf(p("precision"), "%s %g is out of range", "give how close the search brackets the capacity, the failing rate ÷ the passing rate − 1, above 0 and at most 1, e.g. %g", p("precision"), e.Precision, DefaultPrecision)
	}
	switch {
	case !c.doc.Has(p("max_probes")):
		e.MaxProbes = DefaultMaxProbes
	case e.MaxProbes < 2:
		c.errf(p("max_probes"), "%s %d is too few", "a search needs a probe that passes and one that fails: give 2 or more, e.g. %d", p("max_probes"), e.MaxProbes, DefaultMaxProbes)
	case e.MaxProbes > MaxProbes:
		c.errf(p("max_probes"), "%s %d is more than %d", "each probe is a timed window; give e.g. %d", p("max_probes"), e.MaxProbes, MaxProbes, DefaultMaxProbes)
	}
}

// slo checks a capacity experiment's objective; each of its values is needed, as a
// default would decide a purchase for whoever left it out.
func (c *checker) slo(s *Study, i int, e *Experiment) {
	p := func(key string) string { return fmt.Sprintf("experiments[%d].slo.%s", i, key) }
	if e.SLO == nil {
		c.errf(fmt.Sprintf("experiments[%d].kind", i), "%s has no slo", "add slo: {transaction: new-order, percentile: 90, ms: 5}, the latency its rates must meet", label(e))
		return
	}
	o := e.SLO
	var names []string
	for _, t := range sloTransactions {
		names = append(names, t.key)
	}
	switch {
	case !c.doc.Has(p("transaction")):
		c.errf(fmt.Sprintf("experiments[%d].slo", i), "%s has no transaction", "add transaction: one of %s", p(""), strings.Join(names, ", "))
	case sloTransactionOf(o.Transaction) == nil:
		c.errf(p("transaction"), "%s %q is not a transaction", "use one of %s", p("transaction"), o.Transaction, strings.Join(names, ", "))
	}
	switch {
	case !c.doc.Has(p("percentile")):
		c.errf(fmt.Sprintf("experiments[%d].slo", i), "%s has no percentile", "add percentile: e.g. 90, as TPC-C's response time limits, or 99", p(""))
	case !(o.Percentile > 0 && o.Percentile < 100):
		c.errf(p("percentile"), "%s %g is out of range", "give a percentile above 0 and below 100, e.g. 90 or 99.9", p("percentile"), o.Percentile)
	}
	switch {
	case !c.doc.Has(p("ms")):
		c.errf(fmt.Sprintf("experiments[%d].slo", i), "%s has no ms", "add ms: the response time in milliseconds the percentile must meet, e.g. ms: 5", p(""))
	case !(o.Ms > 0):
		c.errf(p("ms"), "%s %g is not positive", "give the response time in milliseconds the percentile must meet, e.g. ms: 5", p("ms"), o.Ms)
	}
	if !c.doc.Has(p("disk_p99_ms")) {
		return
	}
	switch {
	case !(o.DiskP99Ms > 0):
		c.errf(p("disk_p99_ms"), "%s %g is not positive", "give the data disk's per-I/O p99 in milliseconds a probe must meet, e.g. disk_p99_ms: 10, or remove it", p("disk_p99_ms"), o.DiskP99Ms)
	case s.Metrics.IOLatency == "off":
		c.errf(p("disk_p99_ms"), "%s needs the data disk's per-I/O latency, which metrics.io_latency: off does not trace", "set io_latency: auto or on, or remove disk_p99_ms", p("disk_p99_ms"))
	}
}

// plan is one step per target for the whole search: its estimate is the budget, every
// probe a window after a restore.
func (capacity) plan(steps []Step, s *Study, e *Experiment) []Step {
	return eachTarget(steps, s, e, func(steps []Step, t *Target) []Step {
		b, id := stepBase(e, t)
		b.ID = id
		b.Users, b.Ramp, b.Duration = e.Users.Values[0], e.Ramp.Duration, e.Duration.Duration
		slo := *e.SLO
		b.SLO, b.MaxProbes = &slo, e.MaxProbes
		b.Estimate = time.Duration(e.MaxProbes) * (b.Ramp + b.Duration + stepRestore(s, t))
		return append(steps, b)
	})
}

func (capacity) describe(st Step) string {
	return fmt.Sprintf("users %d  %s  up to %d probes of ramp %s %s", st.Users, st.SLO, st.MaxProbes, roughDuration(st.Ramp), roughDuration(st.Duration))
}

func (capacity) run(ctx context.Context, r *runner, step Step, res *StepResult) error {
	return r.onTarget(ctx, step, res, r.capacity)
}

// CapacityRun is a capacity search on one target: its objective and settings, every
// probe, and what it found.
type CapacityRun struct {
	SLO         SLO             `json:"slo"`
	Users       int             `json:"users"`
	MinAchieved float64         `json:"min_achieved"`
	StartRate   float64         `json:"start_rate_tpm"`
	Precision   float64         `json:"precision"`
	MaxProbes   int             `json:"max_probes"`
	Probes      []CapacityProbe `json:"probes"`
	// Outcome is how the search ended (Capacity*).
	Outcome string `json:"outcome"`
	// Best is the probe (1-based) of the highest rate that passed and Fail that of
	// the lowest that failed (0: none); the capacity is Best's achieved throughput.
	Best        int     `json:"best_probe,omitempty"`
	Fail        int     `json:"fail_probe,omitempty"`
	CapacityTPM float64 `json:"capacity_tpm,omitempty"`
	// CapacityNOPM is Best's New-Orders completed a minute, the client's count.
	CapacityNOPM float64 `json:"capacity_nopm,omitempty"`
}

// How a capacity search ended.
const (
	// CapacityFound: a probe passed and a probe at a rate at most Precision above it
	// failed.
	CapacityFound = "found"
	// CapacityWide: the probes ran out with a bracket wider than Precision; the
	// capacity lies in it.
	CapacityWide = "bracket-wider-than-precision"
	// CapacityNoFailure: every probe passed; the capacity is above the highest rate.
	CapacityNoFailure = "no-probe-failed"
	// CapacityNoPass: every probe failed; the capacity is below the lowest rate.
	CapacityNoPass = "no-probe-passed"
)

// CapacityProbe is one probe: a timed window at one offered rate, judged against
// the SLO.
type CapacityProbe struct {
	RateTPM float64 `json:"rate_tpm"`
	Pass    bool    `json:"pass"`
	// Why says what decided: each criterion failed, or every one met.
	Why string `json:"why"`
	// LatencyMs is the response time at the SLO's percentile of its transactions
	// (nil: none completed); DiskP99Ms the data disk's per-I/O p99 (nil: the SLO
	// has none).
	LatencyMs *float64 `json:"slo_latency_ms,omitempty"`
	DiskP99Ms *float64 `json:"disk_p99_ms,omitempty"`
	// ArrivedTPM and AchievedTPM are the arrivals and the completed transactions of
	// the window a minute; NOPM its completed New-Orders a minute (client counts).
	ArrivedTPM  float64 `json:"arrived_tpm"`
	AchievedTPM float64 `json:"achieved_tpm"`
	NOPM        float64 `json:"nopm"`
	// RestoreSeconds is the restore of the base image before the probe.
	RestoreSeconds float64 `json:"restore_s,omitempty"`
	// Run is the probe's whole result: its timeline, metrics and bottleneck verdict.
	Run *driver.Result `json:"run"`
}

// capacity runs a capacity search on the target: probes at the rates nextRate
// gives, each from the base image unless workload.restore is never.
func (r *runner) capacity(ctx context.Context, t *target, step Step, res *StepResult) error {
	e := r.experiment(step.Experiment)
	c := &CapacityRun{SLO: *step.SLO, Users: step.Users, MinAchieved: e.MinAchieved, StartRate: e.StartRate,
		Precision: e.Precision, MaxProbes: step.MaxProbes}
	// A failed search is stored with the probes it ran.
	res.Capacity = c
	restore := r.study.Workload.Restore != "never"
	probe := step.Ramp + step.Duration + stepRestore(r.study, &t.spec)
	for {
		rate, ok := c.nextRate()
		if !ok {
			break
		}
		if err := t.ready(ctx, variantOf(t, step), restore); err != nil {
			return err
		}
		if len(c.Probes) == 0 {
			if err := r.limitsApplied(t, res); err != nil {
				return err
			}
		}
		at := step
		at.Rate = rate
		cfg := r.driverConfig(at)
		r.showProgress(step, &cfg, time.Duration(c.MaxProbes-len(c.Probes)-1)*probe)
		out, err := r.measure(ctx, t, step, cfg, false)
		if err != nil {
			return err
		}
		p, err := c.judge(out.Run)
		p.RestoreSeconds = t.restoreSeconds
		res.RestoreSeconds += p.RestoreSeconds
		c.Probes = append(c.Probes, p)
		if err != nil {
			return fmt.Errorf("probe %d at %s: %w", len(c.Probes), rateText(rate), err)
		}
		verdict := "FAIL"
		if p.Pass {
			verdict = "pass"
		}
		fmt.Fprintf(r.opts.Log, "  %s probe %d/%d at %s: %s (%s)\n", step.Target, len(c.Probes), c.MaxProbes, rateText(rate), verdict, p.Why)
	}
	c.Conclude()
	fmt.Fprintf(r.opts.Log, "  %s: %s\n", step.Target, c.Summary())
	return nil
}

// bracket is the index of the probe of the highest rate that passed and of that of
// the lowest that failed (-1: none).
func (c *CapacityRun) bracket() (pass, fail int) {
	pass, fail = -1, -1
	for i, p := range c.Probes {
		switch {
		case p.Pass && (pass < 0 || p.RateTPM > c.Probes[pass].RateTPM):
			pass = i
		case !p.Pass && (fail < 0 || p.RateTPM < c.Probes[fail].RateTPM):
			fail = i
		}
	}
	return pass, fail
}

// nextRate is the rate of the next probe: the start, then doubling while probes pass
// (halving while they fail, when the first did), then the middle of the bracket
// between the highest pass and the lowest failure, until the bracket is within
// Precision or MaxProbes have run; false when the search is over.
func (c *CapacityRun) nextRate() (float64, bool) {
	if len(c.Probes) >= c.MaxProbes {
		return 0, false
	}
	pass, fail := c.bracket()
	var lo, hi, rate float64 // the bracket's rates (0: no such probe)
	if pass >= 0 {
		lo = c.Probes[pass].RateTPM
	}
	if fail >= 0 {
		hi = c.Probes[fail].RateTPM
	}
	switch {
	case lo == 0 && hi == 0:
		return c.StartRate, true
	case hi == 0:
		rate = min(2*lo, driver.MaxRate)
	case lo == 0:
		rate = hi / 2
	case hi/lo-1 <= c.Precision:
		return 0, false
	default:
		// Whole transactions a minute: finer rates are noise in any window.
		rate = math.Round((lo + hi) / 2)
	}
	// At the driver's maximum, or a bracket a transaction a minute wide: nothing
	// left to tell apart.
	if rate == lo || rate == hi {
		return 0, false
	}
	return rate, true
}

// Conclude sets, from the probes, how the search ended and the capacity it found.
func (c *CapacityRun) Conclude() {
	pass, fail := c.bracket()
	c.Best, c.Fail, c.CapacityTPM, c.CapacityNOPM = pass+1, fail+1, 0, 0
	switch {
	case pass < 0:
		c.Outcome = CapacityNoPass
		return
	case fail < 0:
		c.Outcome = CapacityNoFailure
	case c.Probes[fail].RateTPM/c.Probes[pass].RateTPM-1 <= c.Precision:
		c.Outcome = CapacityFound
	default:
		c.Outcome = CapacityWide
	}
	c.CapacityTPM, c.CapacityNOPM = c.Probes[pass].AchievedTPM, c.Probes[pass].NOPM
}

// Summary is the search's outcome in one line, for the log and results list. A
// stored search is read without trusting it: an outcome its probes do not bear out is
// not stated.
func (c *CapacityRun) Summary() string {
	n := tpcc.Count(len(c.Probes), "probe")
	probe := func(i int) *CapacityProbe {
		if i < 1 || i > len(c.Probes) {
			return nil
		}
		return &c.Probes[i-1]
	}
	pass, fail := probe(c.Best), probe(c.Fail)
	switch {
	case c.Outcome == CapacityFound && pass != nil && fail != nil:
		return fmt.Sprintf("capacity %.0f TPM (%.0f NOPM) within %s: passed at %s, failed at %s (%s)",
			c.CapacityTPM, c.CapacityNOPM, c.SLO, rateText(pass.RateTPM), rateText(fail.RateTPM), n)
	case c.Outcome == CapacityWide && pass != nil && fail != nil:
		return fmt.Sprintf("capacity at least %.0f TPM (%.0f NOPM) within %s: passed at %s, failed at %s, %.0f%% apart when the %s ran out (precision %g)",
			c.CapacityTPM, c.CapacityNOPM, c.SLO, rateText(pass.RateTPM), rateText(fail.RateTPM), 100*(fail.RateTPM/pass.RateTPM-1), n, c.Precision)
	case c.Outcome == CapacityNoFailure && pass != nil:
		return fmt.Sprintf("every probe passed %s, the highest at %s (%.0f TPM, %.0f NOPM achieved): the capacity is higher (give a higher start_rate or more max_probes) (%s)",
			c.SLO, rateText(pass.RateTPM), c.CapacityTPM, c.CapacityNOPM, n)
	case c.Outcome == CapacityNoPass && fail != nil:
		return fmt.Sprintf("no probe passed %s, down to %s: the capacity is lower (give a lower start_rate, more max_probes, or check the users can carry the rate) (%s)",
			c.SLO, rateText(fail.RateTPM), n)
	}
	return fmt.Sprintf("%s within %s, no outcome", n, c.SLO)
}

// judge decides whether a probe's run met the objective, and says why.
func (c *CapacityRun) judge(run *driver.Result) (CapacityProbe, error) {
	p := CapacityProbe{RateTPM: run.Config.Rate, NOPM: run.NOPMClient, AchievedTPM: run.TPMClient, Run: run}
	var met, failed []string
	check := func(ok bool, text string) {
		if ok {
			met = append(met, text)
		} else {
			failed = append(failed, text)
		}
	}
	busy := 0.0
	if rr := run.Rate; rr != nil {
		p.ArrivedTPM, p.AchievedTPM, busy = rr.ArrivedTPM, rr.AchievedTPM, rr.UsersBusy
	}
	arrived := cmp.Or(p.ArrivedTPM, p.RateTPM)
	share := p.AchievedTPM / arrived
	kept := share >= c.MinAchieved
	text := fmt.Sprintf("achieved %.0f of %.0f TPM arrived (%.1f%%", p.AchievedTPM, arrived, 100*share)
	if !kept {
		text += fmt.Sprintf(", under %g%%", 100*c.MinAchieved)
		// The users, not the database, may have set that limit (driver.Result's note).
		if busy > 0.9 {
			text += fmt.Sprintf("; the %d users were busy %.0f%% of the window: more users may carry more", c.Users, 100*busy)
		}
	}
	check(kept, text+")")

	txn := sloTransactionOf(c.SLO.Transaction)
	if txn == nil {
		return p, fmt.Errorf("slo.transaction %q is not a transaction", c.SLO.Transaction)
	}
	latency, ok, err := run.ResponseAt(c.SLO.Percentile, txn.types...)
	if err != nil {
		return p, err
	}
	if ok {
		p.LatencyMs = &latency
		check(latency <= c.SLO.Ms, fmt.Sprintf("%s %.2f ms, objective %g ms", c.SLO.Latency(), latency, c.SLO.Ms))
	} else {
		check(false, "no "+txn.title+" completed in the window")
	}

	if c.SLO.DiskP99Ms > 0 {
		disk, traced := dataDiskP99(run.System)
		if !traced {
			return p, fmt.Errorf("slo.disk_p99_ms: the data disk's per-I/O latency was not traced (it needs bpftrace as root, metrics.io_latency: on says why it cannot): remove disk_p99_ms or trace the block layer")
		}
		p.DiskP99Ms = &disk
		check(disk <= c.SLO.DiskP99Ms, fmt.Sprintf("data disk p99 %.2f ms, objective %g ms", disk, c.SLO.DiskP99Ms))
	}
	p.Pass, p.Why = len(failed) == 0, strings.Join(met, "; ")
	if !p.Pass {
		p.Why = strings.Join(failed, "; ")
	}
	return p, nil
}

// dataDiskP99 is the per-I/O 99th percentile of the data disk's I/Os over a run's
// window (bpftrace, block layer); traced is false when the disk's latency was not
// traced. A disk that did no I/O in the window met any objective: 0, traced.
func dataDiskP99(sys *metrics.Report) (p99 float64, traced bool) {
	if sys == nil || len(sys.Summary.Disks) == 0 {
		return 0, false
	}
	d := dataDisk(sys.Summary.Disks)
	for _, l := range sys.Summary.Latency {
		if l.Device == d.Device {
			return l.P99Ms, true
		}
	}
	return 0, false
}
