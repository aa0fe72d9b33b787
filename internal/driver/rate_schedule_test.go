package driver

import (
	"math"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/tpcc"
	"github.com/storbench/storbench/internal/yamlfile"
)

// TestScheduleArrivals draws ten minutes of arrivals at 60,000 a minute: Poisson
// arrivals come within 1% of the rate (their count's spread is 0.13%), uniform ones
// exactly; with nobody taking them, they queue as the backlog.
func TestScheduleArrivals(t *testing.T) {
	origin := time.Unix(1e9, 0)
	for _, arrivals := range []string{ArrivalsPoisson, ArrivalsUniform} {
		cfg := Config{Rate: 60000, Workload: Workload{Arrivals: arrivals}}
		s := newSchedule(cfg, origin, origin, origin.Add(10*time.Minute), tpcc.RunRand(1, 0))
		c := s.read(origin.Add(10 * time.Minute))
		if got := float64(c.arrivedWindow); math.Abs(got-600000)/600000 > 0.01 {
			t.Errorf("%s: %g arrivals in 10 minutes at 60,000 a minute, want within 1%%", arrivals, got)
		}
		if arrivals == ArrivalsUniform && c.arrived != 600000 {
			t.Errorf("uniform: %d arrivals, want 600000 (the last one is due at 10m exactly)", c.arrived)
		}
		if int64(c.backlog) != c.arrived || s.backlogOfWindow() != c.arrivedWindow {
			t.Errorf("%s: backlog %d (of the window %d), want every one of the %d arrivals: nobody took any", arrivals, c.backlog, s.backlogOfWindow(), c.arrived)
		}
	}
}

// TestScheduleTake: a free user takes the oldest due arrival; with none due, the next
// one, which counts as arrived only once due; with a latency limit, arrivals later
// than it are skipped, not handed out.
func TestScheduleTake(t *testing.T) {
	origin := time.Unix(1e9, 0)
	cfg := Config{Rate: 600, Workload: Workload{Arrivals: ArrivalsUniform, LatencyLimit: yamlfile.Duration{Duration: 250 * time.Millisecond}}} // one every 100 ms
	s := newSchedule(cfg, origin, origin.Add(time.Second), origin.Add(3*time.Second), tpcc.RunRand(1, 0))
	at := func(d time.Duration) time.Time { return origin.Add(d) }
	if due := s.take(at(0)); !due.Equal(at(100 * time.Millisecond)) {
		t.Errorf("nothing due at 0: took %v, want the first arrival at 100ms", due.Sub(origin))
	}
	if c := s.read(at(50 * time.Millisecond)); c.arrived != 0 {
		t.Errorf("the taken arrival counted before it was due: %d arrived at 50ms", c.arrived)
	}
	// At 1.05 s, arrivals 200 ms … 1 s are due (9 of them); those before 800 ms are
	// more than 250 ms late.
	if due := s.take(at(1050 * time.Millisecond)); !due.Equal(at(800 * time.Millisecond)) {
		t.Errorf("took %v, want the oldest arrival within the latency limit (800ms)", due.Sub(origin))
	}
	c := s.read(at(1050 * time.Millisecond))
	if c.arrived != 10 || c.skipped != 6 || c.backlog != 2 {
		t.Errorf("at 1.05 s: arrived %d skipped %d backlog %d, want 10, 6 (200-700 ms), 2 (900 ms, 1 s)", c.arrived, c.skipped, c.backlog)
	}
	if c.arrivedWindow != 1 || c.skippedWindow != 0 {
		t.Errorf("window from 1 s: arrived %d skipped %d in it, want 1 and 0", c.arrivedWindow, c.skippedWindow)
	}
}

// TestBusyOverlapsWindow: a transaction's busy time counts only where it overlaps
// the timed window (or the part of it before a cut), so the users' busy share cannot
// pass 100% (a probe showed 104% when transactions begun before the window counted
// whole).
func TestBusyOverlapsWindow(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(1e9, 0).Add(time.Duration(ms) * time.Millisecond) }
	r := &run{windowStart: at(1000), windowEnd: at(3000)}
	for _, c := range []struct {
		began, end int
		want       time.Duration
	}{
		{500, 1200, 200 * time.Millisecond}, // begun before the window
		{1500, 1700, 200 * time.Millisecond},
		{2900, 3400, 100 * time.Millisecond}, // ended after it
		{200, 800, 0},
		{500, 3500, 2 * time.Second},
	} {
		if got := r.overlap(at(c.began), at(c.end)); got != c.want {
			t.Errorf("[%d, %d] ms: %v in the window [1000, 3000], want %v", c.began, c.end, got, c.want)
		}
	}
	r.cut.Store(at(2000).UnixNano())
	if got := r.overlap(at(1500), at(2500)); got != 500*time.Millisecond {
		t.Errorf("cut at 2000 ms: [1500, 2500] counts %v, want 500ms", got)
	}
}
