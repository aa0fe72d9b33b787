package study

import (
	"encoding/base64"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/metrics"
)

// capacityStudy is minimal with its user sweep replaced by a capacity experiment of
// the given keys (lines 8 on: "  - kind: capacity", then knobs).
func capacityStudy(knobs string) string {
	return edit("  - kind: user-sweep\n    users: [1, 2]\n", "  - kind: capacity\n"+knobs)
}

const capacityKnobs = "    users: 16\n    slo: {transaction: new-order, percentile: 90, ms: 5}\n"

// A capacity experiment's defaults, and its one step per target: the whole search,
// planned at its budget of probes, each a window after a restore.
func TestParseCapacity(t *testing.T) {
	s := mustParse(t, capacityStudy(capacityKnobs+"    ramp: 10s\n    duration: 1m\n"))
	e := s.Experiments[0]
	if e.MinAchieved != 0.99 || e.StartRate != 1000 || e.Precision != 0.05 || e.MaxProbes != 12 {
		t.Errorf("defaults: min_achieved %g start_rate %g precision %g max_probes %d, want 0.99 1000 0.05 12", e.MinAchieved, e.StartRate, e.Precision, e.MaxProbes)
	}
	steps := Plan(s)
	restore := restoreEstimate(2)
	want := Step{Seq: 1, ID: "nvme/capacity", Target: "nvme", Experiment: "capacity", Kind: Capacity, Users: 16, Ramp: 10 * time.Second,
		Duration: time.Minute, SLO: &SLO{Transaction: "new-order", Percentile: 90, Ms: 5}, MaxProbes: 12, Estimate: 12 * (70*time.Second + restore)}
	if len(steps) != 1 || !reflect.DeepEqual(steps[0], want) {
		t.Fatalf("plan %+v, want one step %+v", steps, want)
	}
	var b strings.Builder
	if err := WritePlan(&b, s, steps, defaultResults(t, s)); err != nil {
		t.Fatal(err)
	}
	if line := `  1/1  nvme  capacity "capacity"  users 16  New-Order p90 ≤ 5 ms  up to 12 probes of ramp 10s 1m  (~14m31s)`; !strings.Contains(b.String(), line) {
		t.Errorf("plan lacks %q:\n%s", line, b.String())
	}

	s = mustParse(t, capacityStudy("    users: 4\n    slo: {transaction: all, percentile: 99.9, ms: 20, disk_p99_ms: 2.5}\n    min_achieved: 0.95\n    start_rate: 500\n    precision: 0.1\n    max_probes: 6\n"))
	if e := s.Experiments[0]; e.MinAchieved != 0.95 || e.StartRate != 500 || e.Precision != 0.1 || e.MaxProbes != 6 {
		t.Errorf("given settings not kept: %+v", e)
	}
	if got, want := Plan(s)[0].SLO.String(), "all transactions p99.9 ≤ 20 ms, data disk p99 ≤ 2.5 ms"; got != want {
		t.Errorf("SLO %q, want %q", got, want)
	}
}

// Each refusal names the setting and how to fix it, at its line.
func TestParseCapacityErrors(t *testing.T) {
	slo := "    users: 16\n    slo:\n      transaction: new-order\n      percentile: 90\n      ms: 5\n"
	cases := []struct {
		name, text string
		line       int
		want       string
	}{
		{"no slo", capacityStudy("    users: 16\n"), 8, "the capacity experiment has no slo (add slo: {transaction: new-order, percentile: 90, ms: 5}"},
		{"no users", capacityStudy("    slo: {transaction: new-order, percentile: 90, ms: 5}\n"), 8, "the capacity experiment has no users (add users: N"},
		{"a users sweep", capacityStudy("    users: [4, 16]\n    slo: {transaction: new-order, percentile: 90, ms: 5}\n"), 9, "takes one users value, the users that carry its rates at once, not 2 (give one, e.g. users: 16"},
		{"no transaction", capacityStudy("    users: 16\n    slo: {percentile: 90, ms: 5}\n"), 10, "experiments[0].slo. has no transaction (add transaction: one of new-order, payment, order-status, delivery, stock-level, all)"},
		{"unknown transaction", capacityStudy(strings.Replace(slo, "new-order", "neworder", 1)), 11, `experiments[0].slo.transaction "neworder" is not a transaction (use one of new-order, payment`},
		{"no percentile", capacityStudy("    users: 16\n    slo: {transaction: payment, ms: 5}\n"), 10, "has no percentile (add percentile: e.g. 90"},
		{"percentile 100", capacityStudy(strings.Replace(slo, "percentile: 90", "percentile: 100", 1)), 12, "experiments[0].slo.percentile 100 is out of range (give a percentile above 0 and below 100, e.g. 90 or 99.9)"},
		{"percentile 0", capacityStudy(strings.Replace(slo, "percentile: 90", "percentile: 0", 1)), 12, "experiments[0].slo.percentile 0 is out of range"},
		{"no ms", capacityStudy("    users: 16\n    slo: {transaction: payment, percentile: 90}\n"), 10, "has no ms (add ms:"},
		{"ms zero", capacityStudy(strings.Replace(slo, "ms: 5", "ms: 0", 1)), 13, "experiments[0].slo.ms 0 is not positive (give the response time in milliseconds the percentile must meet, e.g. ms: 5)"},
		{"disk p99 negative", capacityStudy(slo + "      disk_p99_ms: -1\n"), 14, "experiments[0].slo.disk_p99_ms -1 is not positive"},
		{"disk p99 untraced", capacityStudy(slo+"      disk_p99_ms: 10\n") + "metrics:\n  io_latency: off\n", 14, "experiments[0].slo.disk_p99_ms needs the data disk's per-I/O latency, which metrics.io_latency: off does not trace (set io_latency: auto or on, or remove disk_p99_ms)"},
		{"unknown slo key", capacityStudy(slo + "      p: 90\n"), 14, `unknown key "p" in slo`},
		{"min_achieved above 1", capacityStudy(slo + "    min_achieved: 1.5\n"), 14, "experiments[0].min_achieved 1.5 is out of range (give the share of the arrivals a probe must complete to pass, above 0 and at most 1, e.g. 0.99)"},
		{"start_rate zero", capacityStudy(slo + "    start_rate: 0\n"), 14, "experiments[0].start_rate 0 is out of range (give the first probe's rate in transactions per minute, above 0 and at most 1e+08, e.g. 1000)"},
		{"precision zero", capacityStudy(slo + "    precision: 0\n"), 14, "experiments[0].precision 0 is out of range (give how close the search brackets the capacity"},
		{"precision above 1", capacityStudy(slo + "    precision: 5\n"), 14, "experiments[0].precision 5 is out of range"},
		{"one probe", capacityStudy(slo + "    max_probes: 1\n"), 14, "experiments[0].max_probes 1 is too few (a search needs a probe that passes and one that fails: give 2 or more, e.g. 12)"},
		{"too many probes", capacityStudy(slo + "    max_probes: 1000\n"), 14, "experiments[0].max_probes 1000 is more than 100"},
		{"keying", strings.Replace(capacityStudy(slo), "warehouses: 2", "warehouses: 2\n  keying: true", 1), 9, "the capacity experiment offers rates, which workload.keying would pace with keying and think times too (set keying: false"},
		{"a sweep's key", capacityStudy(slo + "    repeats: 2\n"), 14, "repeats does not apply to a capacity experiment"},
		{"rate on capacity", capacityStudy(slo + "    rate: 1000\n"), 14, "rate does not apply to a capacity experiment"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { parseFails(t, c.text, c.line, c.want) })
	}
}

// An experiment's rate and the workload's arrivals and latency limit: checked by the
// driver's own checks, at their lines, refused with keying, and handed to the driver
// by the steps that offer a rate.
func TestParseOpenLoop(t *testing.T) {
	s := mustParse(t, edit("users: [1, 2]", "users: [1, 2]\n    rate: 30000"))
	if s.Experiments[0].Rate != 30000 || s.Workload.Arrivals != driver.ArrivalsPoisson || s.Workload.LatencyLimit.Duration != 0 {
		t.Errorf("rate %g arrivals %q latency limit %v, want 30000, poisson, none", s.Experiments[0].Rate, s.Workload.Arrivals, s.Workload.LatencyLimit)
	}
	steps := Plan(s)
	if got, want := describeStep(steps[0]), "users 1  rep 1  rate 30000 TPM  ramp 2m  5m"; got != want {
		t.Errorf("plan line %q, want %q", got, want)
	}

	text := strings.Replace(edit("users: [1, 2]", "users: [1, 2]\n    rate: 600"), "warehouses: 2", "warehouses: 2\n  arrivals: uniform\n  latency_limit: 250ms", 1)
	text += "  - kind: user-sweep\n    name: closed\n    users: [4]\n"
	s = mustParse(t, text)
	r := &runner{study: s}
	steps = Plan(s)
	open, closed := r.driverConfig(steps[0]), r.driverConfig(steps[2])
	if open.Rate != 600 || open.Arrivals != driver.ArrivalsUniform || open.LatencyLimit.Duration != 250*time.Millisecond {
		t.Errorf("open-loop step's driver: rate %g arrivals %q latency limit %v, want 600 uniform 250ms", open.Rate, open.Arrivals, open.LatencyLimit)
	}
	// The driver refuses a latency limit without a rate: a closed-loop step has none.
	if closed.Rate != 0 || closed.LatencyLimit.Duration != 0 {
		t.Errorf("closed-loop step's driver: rate %g latency limit %v, want neither", closed.Rate, closed.LatencyLimit)
	}
	if err := closed.Validate(); err != nil {
		t.Errorf("the closed-loop step's driver settings are refused: %v", err)
	}

	withRate := edit("users: [1, 2]", "users: [1, 2]\n    rate: 600")
	cases := []struct {
		name, text string
		line       int
		want       string
	}{
		{"negative rate", edit("users: [1, 2]", "users: [1, 2]\n    rate: -5"), 10, "rate -5 is negative (give transactions per minute, e.g. rate 30000, or 0 for closed-loop users)"},
		{"rate per second", edit("users: [1, 2]", "users: [1, 2]\n    rate: 2e8"), 10, "rate 2e+08 is more than 1e+08 transactions per minute"},
		{"rate with keying", strings.Replace(withRate, "warehouses: 2", "warehouses: 2\n  keying: true", 1), 11, "rate and workload.keying both pace the users (an open-loop run's arrivals replace keying and think times: remove rate, or set keying: false)"},
		{"unknown arrivals", strings.Replace(withRate, "warehouses: 2", "warehouses: 2\n  arrivals: bursty", 1), 7, `arrivals "bursty" is not an arrival process (give poisson or uniform)`},
		{"latency limit without a rate", edit("warehouses: 2", "warehouses: 2\n  latency_limit: 1s"), 7, "latency_limit 1s skips transactions already that late, which only open-loop steps have, and no experiment offers a rate (give an experiment rate:, run a capacity search, or remove latency_limit)"},
		{"negative latency limit", strings.Replace(withRate, "warehouses: 2", "warehouses: 2\n  latency_limit: -1s", 1), 7, "latency_limit -1s is negative (give e.g. latency_limit 1s, or 0 for none)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { parseFails(t, c.text, c.line, c.want) })
	}
	// A capacity search offers rates: the latency limit applies to its probes.
	mustParse(t, strings.Replace(capacityStudy(capacityKnobs), "warehouses: 2", "warehouses: 2\n  latency_limit: 1s", 1))
}

// search runs a capacity search against a database that carries exactly capacity
// TPM: a probe passes at or below it.
func search(c *CapacityRun, capacity float64) []float64 {
	var rates []float64
	for {
		rate, ok := c.nextRate()
		if !ok {
			break
		}
		rates = append(rates, rate)
		c.Probes = append(c.Probes, CapacityProbe{RateTPM: rate, Pass: rate <= capacity, AchievedTPM: rate - 1, NOPM: rate / 2})
	}
	c.Conclude()
	return rates
}

// The search doubles from the start while probes pass, halves while they fail, then
// bisects the bracket to the precision, within the budget; what it found says how it
// ended.
func TestCapacitySearch(t *testing.T) {
	newRun := func(probes int) *CapacityRun {
		return &CapacityRun{StartRate: 1000, Precision: 0.05, MaxProbes: probes}
	}
	// 8,000 fails: the bracket 4,000-8,000 narrows to 5,250-5,500, 4.8% apart.
	c := newRun(12)
	if got, want := search(c, 5300), []float64{1000, 2000, 4000, 8000, 6000, 5000, 5500, 5250}; !slices.Equal(got, want) {
		t.Errorf("rates %v, want %v", got, want)
	}
	if c.Outcome != CapacityFound || c.Best != 8 || c.Fail != 7 || c.CapacityTPM != 5249 || c.CapacityNOPM != 2625 {
		t.Errorf("outcome %s best %d fail %d capacity %g TPM %g NOPM, want found at probe 8 (5,249 TPM, 2,625 NOPM), failed at 7", c.Outcome, c.Best, c.Fail, c.CapacityTPM, c.CapacityNOPM)
	}
	// The first probe fails: halving until one passes, then bisecting.
	c = newRun(12)
	if got, want := search(c, 300), []float64{1000, 500, 250, 375, 313, 282, 298, 306}; !slices.Equal(got, want) {
		t.Errorf("rates %v, want %v", got, want)
	}
	if c.Outcome != CapacityFound || c.Probes[c.Best-1].RateTPM != 298 || c.Probes[c.Fail-1].RateTPM != 306 {
		t.Errorf("outcome %s, bracket %+v", c.Outcome, c)
	}
	// Budgets that end the search early.
	for _, tc := range []struct {
		probes   int
		capacity float64
		outcome  string
		summary  string
	}{
		{3, 5300, CapacityNoFailure, "every probe passed New-Order p90 ≤ 5 ms, the highest at 4000 TPM (3999 TPM, 2000 NOPM achieved): the capacity is higher (give a higher start_rate or more max_probes) (3 probes)"},
		{5, 5300, CapacityWide, "capacity at least 3999 TPM (2000 NOPM) within New-Order p90 ≤ 5 ms: passed at 4000 TPM, failed at 6000 TPM, 50% apart when the 5 probes ran out (precision 0.05)"},
		{4, 10, CapacityNoPass, "no probe passed New-Order p90 ≤ 5 ms, down to 125 TPM: the capacity is lower (give a lower start_rate, more max_probes, or check the users can carry the rate) (4 probes)"},
	} {
		c := newRun(tc.probes)
		c.SLO = SLO{Transaction: "new-order", Percentile: 90, Ms: 5}
		search(c, tc.capacity)
		if len(c.Probes) != tc.probes || c.Outcome != tc.outcome || c.Summary() != tc.summary {
			t.Errorf("%d probes at a capacity of %g: %d probes, %s:\n%s\nwant %s:\n%s", tc.probes, tc.capacity, len(c.Probes), c.Outcome, c.Summary(), tc.outcome, tc.summary)
		}
	}
}

// histogram is a latency histogram as a run stores it: n values of each ms.
func histogram(t *testing.T, n int, ms ...float64) string {
	t.Helper()
	h := hdrhistogram.New(1, int64(5*time.Minute/time.Microsecond), 3)
	for _, v := range ms {
		if err := h.RecordValues(int64(v*1000), int64(n)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// A probe passes when it completed its share of the arrivals within the SLO's
// latency (and the data disk's p99); the reason names each criterion it failed.
func TestCapacityJudge(t *testing.T) {
	run := func(achieved, busy float64, newOrderMs ...float64) *driver.Result {
		r := &driver.Result{Config: driver.RunConfig{Rate: 1000}, TPMClient: achieved, NOPMClient: achieved * 0.45,
			Rate: &driver.RateResult{OfferedTPM: 1000, ArrivedTPM: 1010, AchievedTPM: achieved, UsersBusy: busy}}
		r.Transactions.NewOrder.Histogram = histogram(t, 10, newOrderMs...)
		r.Transactions.Payment.Histogram = histogram(t, 10, 0.5)
		return r
	}
	// Latencies under 2.048 ms, which the histogram holds exactly.
	c := &CapacityRun{SLO: SLO{Transaction: "new-order", Percentile: 90, Ms: 1.5}, Users: 8, MinAchieved: 0.99}
	// 90% of the New-Orders at 1 ms or less.
	p, err := c.judge(run(1005, 0.4, 0.5, 1, 1, 1, 1, 1, 1, 1, 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	if !p.Pass || *p.LatencyMs != 1 || p.NOPM != 1005*0.45 || p.Why != "achieved 1005 of 1010 TPM arrived (99.5%); New-Order p90 1.00 ms, objective 1.5 ms" {
		t.Errorf("probe %+v, want a pass at 1 ms", p)
	}
	p, _ = c.judge(run(900, 0.95, 2))
	if want := "achieved 900 of 1010 TPM arrived (89.1%, under 99%; the 8 users were busy 95% of the window: more users may carry more); New-Order p90 2.00 ms, objective 1.5 ms"; p.Pass || p.Why != want {
		t.Errorf("probe %+v, want a failure: %s", p, want)
	}
	// All five types: the Payments at 0.5 ms bring the p50 of all down.
	c.SLO.Transaction = "all"
	if p, _ := c.judge(run(1005, 0.4, 2)); p.Pass {
		t.Errorf("all transactions' p90: %+v, want 2 ms, over 1.5", p)
	}
	c.SLO.Percentile = 50
	if p, _ := c.judge(run(1005, 0.4, 2)); !p.Pass || *p.LatencyMs != 0.5 {
		t.Errorf("all transactions' p50: %+v, want the Payments' 0.5 ms", p)
	}

	c.SLO = SLO{Transaction: "delivery", Percentile: 90, Ms: 5}
	r := run(1005, 0.4, 1)
	if p, _ := c.judge(r); p.Pass || !strings.Contains(p.Why, "no Delivery completed in the window") {
		t.Errorf("no Delivery completed: %+v", p)
	}
	c.SLO = SLO{Transaction: "new-order", Percentile: 90, Ms: 5, DiskP99Ms: 2}
	if _, err := c.judge(r); err == nil || !strings.Contains(err.Error(), "disk_p99_ms: the data disk's per-I/O latency was not traced") {
		t.Errorf("a disk objective without traced latency: %v", err)
	}
	r.System = &metrics.Report{Summary: metrics.Summary{Disks: []metrics.Disk{{Device: "vdb", Roles: []string{"wal"}}, {Device: "vdc", Roles: []string{"data"}}},
		Latency: []metrics.Latency{{Device: "vdb", IOs: 10, P99Ms: 1}, {Device: "vdc", IOs: 10, P99Ms: 3.5}}}}
	if p, err := c.judge(r); err != nil || p.Pass || *p.DiskP99Ms != 3.5 || !strings.HasSuffix(p.Why, "data disk p99 3.50 ms, objective 2 ms") {
		t.Errorf("the data disk's p99 3.5 ms against 2: %+v %v", p, err)
	}
}
