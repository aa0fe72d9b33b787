package driver_test

import (
	"context"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/load"
	"github.com/storbench/storbench/internal/testsupport/pgtest"
	"github.com/storbench/storbench/internal/yamlfile"
)

// TestOpenLoop drives a real PostgreSQL (one warehouse) closed-loop and at fixed
// rates: a rate well under capacity is achieved and answers as fast as one closed-loop
// user does; a server paused for 2 s shows in the open-loop response times (from when
// each transaction was due) and schedule lag but hardly in the closed-loop ones, whose
// users simply stop asking (coordinated omission); an overloaded rate with a latency
// limit skips and counts arrivals instead of queueing them without end.
func TestOpenLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts a PostgreSQL server")
	}
	ctx := context.Background()
	srv := pgtest.Start(t)
	db, err := engine.Open(ctx, srv.DSN("tpcc"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := load.Build(ctx, db, load.Options{Warehouses: 1, Workers: 2, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, cfg driver.Config) *driver.Result {
		t.Helper()
		cfg.Mode, cfg.MaxRetries, cfg.ClientCPUs = engine.Procedures, 5, 1
		res, err := driver.Run(ctx, db, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	p := func(t *testing.T, res *driver.Result, q float64) float64 {
		t.Helper()
		v, ok, err := res.ResponseAt(q)
		if err != nil || !ok {
			t.Fatalf("p%g of the window: %v (any completed: %v)", q, err, ok)
		}
		return v
	}

	// One closed-loop user: the low-load latency, and a capacity to take a share of.
	closed := run(t, driver.Config{Users: 1, Ramp: time.Second, Duration: 8 * time.Second, Seed: 1})
	capacity, closedP50 := closed.TPMClient, p(t, closed, 50)
	t.Logf("closed loop, 1 user: %.0f TPM, p50 %.2f ms", capacity, closedP50)
	rate := math.Round(capacity / 4)

	t.Run("achieved", func(t *testing.T) {
		before := runDelays(t, srv.PID())
		res := run(t, driver.Config{Users: 4, Ramp: time.Second, Duration: 15 * time.Second, Seed: 2, Rate: rate})
		var waited float64
		for p, d := range runDelays(t, srv.PID()) {
			waited += d - before[p]
		}
		serverWait := waited / (res.End.Sub(res.Start) + time.Second).Seconds()
		r := res.Rate
		if r == nil {
			t.Fatal("an open-loop run's result has no rate section")
		}
		t.Logf("offered %.0f arrived %.0f achieved %.0f TPM, p50 %.2f ms (Payment's service p50 %.2f ms), lag p50 %.2f p99 %.2f ms, users busy %.0f%%",
			r.OfferedTPM, r.ArrivedTPM, r.AchievedTPM, p(t, res, 50), res.Transactions.Payment.Service.P50Ms, r.Lag.P50Ms, r.Lag.P99Ms, 100*r.UsersBusy)
		if d := math.Abs(r.AchievedTPM-r.ArrivedTPM) / r.ArrivedTPM; d > 0.02 {
			t.Errorf("achieved %.0f TPM of the %.0f that arrived (%.1f%% off), want within 2%%", r.AchievedTPM, r.ArrivedTPM, 100*d)
		}
		// Poisson arrivals: their count over the window spreads by its square root.
		if sd := math.Sqrt(r.OfferedTPM * 15 / 60); math.Abs(r.ArrivedTPM-r.OfferedTPM)*15/60 > 4*sd {
			t.Errorf("arrived %.0f TPM at an offered %.0f: more than 4 standard deviations of a Poisson count off", r.ArrivedTPM, r.OfferedTPM)
		}
		// Close, not equal: between arrivals the server's backend and the client's
		// thread go idle and each transaction wakes them, which one closed-loop user,
		// asking again at once, never waits for (measured on 2 CPUs: Payment's service
		// p50 0.62-1.1 ms open-loop vs 0.32-0.50 ms closed-loop).
		// On a machine busy with other work (the whole suite), each wake-up also
		// waits for a CPU: measured, the server's processes waited 30% of the window
		// and p50 was 9.5 ms vs 1.5 ms. Then only the rates are asserted.
		if got := p(t, res, 50); serverWait > quietForLatency || loadAverage(t) > float64(runtime.NumCPU())+1 {
			t.Logf("p50 not compared: the server's processes waited for a CPU %.1f%% of the window, load average %.1f (p50 %.2f ms open-loop, %.2f closed-loop)", 100*serverWait, loadAverage(t), got, closedP50)
		} else if got > 2*closedP50+0.5 {
			t.Errorf("open-loop p50 %.2f ms at a quarter of capacity, closed-loop (1 user) %.2f ms: want close (within 2x + 0.5 ms)", got, closedP50)
		}
		if r.Skipped != 0 || r.Backlog > 4 {
			t.Errorf("well under capacity: skipped %d, not begun at the end %d, want none and at most one per user", r.Skipped, r.Backlog)
		}
	})

	t.Run("paused", func(t *testing.T) {
		// The same 2 s pause of every server process, 4 s into each window.
		pause := func(time.Time) {
			go func() {
				time.Sleep(5 * time.Second)
				if err := pauseFor(srv.PID(), 2*time.Second); err != nil {
					t.Error(err)
				}
			}()
		}
		open := run(t, driver.Config{Users: 8, Ramp: time.Second, Duration: 16 * time.Second, Seed: 3, Rate: rate, Started: pause})
		closed := run(t, driver.Config{Users: 8, Ramp: time.Second, Duration: 16 * time.Second, Seed: 4, Started: pause})
		openP99, closedP99 := p(t, open, 99), p(t, closed, 99)
		t.Logf("2 s pause: open loop at %.0f TPM p99 %.0f ms (service p99 New-Order %.0f ms, lag p99 %.0f ms, max backlog %d); closed loop p99 %.0f ms (max %.0f ms) at %.0f TPM",
			rate, openP99, open.Transactions.NewOrder.Service.P99Ms, open.Rate.Lag.P99Ms, maxBacklog(open), closedP99, closed.Transactions.NewOrder.MaxMs, closed.TPMClient)
		if openP99 < 1500 {
			t.Errorf("open loop: p99 from when due %.0f ms with the server paused 2 s, want >= 1500 ms", openP99)
		}
		if open.Rate.Lag.P99Ms < 1000 || maxBacklog(open) == 0 {
			t.Errorf("open loop: schedule lag p99 %.0f ms, backlog at most %d: the pause does not show in the schedule", open.Rate.Lag.P99Ms, maxBacklog(open))
		}
		if closedP99 >= 1500 {
			t.Errorf("closed loop: p99 %.0f ms: its users stop asking while the server is paused, so it was expected far under 1500 ms", closedP99)
		}
	})

	t.Run("overloaded", func(t *testing.T) {
		const limit = 100 * time.Millisecond
		res := run(t, driver.Config{Users: 4, Ramp: time.Second, Duration: 6 * time.Second, Seed: 5, Rate: 20 * capacity, Workload: driver.Workload{LatencyLimit: yamlfile.Duration{Duration: limit}}})
		r := res.Rate
		t.Logf("overloaded: offered %.0f arrived %.0f achieved %.0f TPM, skipped %d (%.1f%%), late %d, not begun at the end %d, lag max %.0f ms; notes %q",
			r.OfferedTPM, r.ArrivedTPM, r.AchievedTPM, r.Skipped, 100*r.SkippedShare, r.Late, r.Backlog, r.Lag.MaxMs, res.Notes)
		if r.SkippedShare < 0.5 {
			t.Errorf("at 20x capacity %.1f%% of the arrivals were skipped, want most of them", 100*r.SkippedShare)
		}
		// What is left queued at the end is at most the arrivals of one limit.
		if max := int64(r.OfferedTPM/60*limit.Seconds()*1.2) + 4; r.Backlog > max {
			t.Errorf("%d arrivals not begun at the end, want at most the %d of one latency limit: the backlog was not bounded", r.Backlog, max)
		}
		if r.Lag.MaxMs > float64(limit.Milliseconds())+50 {
			t.Errorf("schedule lag up to %.0f ms with a %v limit: late arrivals were run, not skipped", r.Lag.MaxMs, limit)
		}
		var skipped int64
		for _, s := range res.Timeline {
			skipped += s.Skipped
		}
		if skipped < r.Skipped {
			t.Errorf("the timeline shows %d skipped, the window %d", skipped, r.Skipped)
		}
		if !strings.Contains(strings.Join(res.Notes, " "), "users were busy") {
			t.Errorf("no note that every user was busy: %q", res.Notes)
		}
	})
}

// quietForLatency is the share of the window the server's processes may have waited
// for a CPU for the low-load latencies to be compared: the run alone on 2 CPUs waited
// 7.8% (its own driver and backends share them), beside the whole suite 19-30%.
const quietForLatency = 0.10

// loadAverage is the machine's 1-minute load average: beside the whole suite it was
// 4-9 on 2 CPUs, and a run whose server waited under 10% still answered at p50 6.9 ms
// against its closed-loop 2.1 ms measured a minute before.
func loadAverage(t *testing.T) float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		t.Fatal(err)
	}
	v, err := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func maxBacklog(res *driver.Result) int {
	m := 0
	for _, s := range res.Timeline {
		m = max(m, s.Backlog)
	}
	return m
}
