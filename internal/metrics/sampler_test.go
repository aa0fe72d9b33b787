package metrics

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/storbench/storbench/internal/input"
)

// countingCollector reports one disk whose write count grows by one per call, and
// fails on demand.
type countingCollector struct {
	calls atomic.Int64
	fail  atomic.Bool
}

func (c *countingCollector) Collect(_ context.Context, s *Sample) error {
	n := c.calls.Add(1)
	if c.fail.Load() {
		return errors.New("source gone")
	}
	if n > 1 {
		s.Disks = append(s.Disks, diskFigures("vda", []string{"data"}, DiskCounters{WriteIOs: 1}, s.Seconds))
	}
	return nil
}

// Samples fall on the origin's grid (so they line up with the run's timeline), an
// origin in the future gives ramp-up samples with T <= 0, Stop adds the partial last
// interval, each sample reaches the CSV as it is taken, and a failing source is noted
// once while sampling goes on.
func TestSamplerTimeline(t *testing.T) {
	// In a bubble: its clock moves only when every goroutine waits, so a busy
	// machine cannot make the sleeps below take more samples or fewer.
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		s := NewSampler(50*time.Millisecond, NewCSVWriter(&out))
		c := &countingCollector{}
		s.Add("disks", c)
		origin := time.Now().Add(120 * time.Millisecond)
		s.Start(context.Background(), origin)
		time.Sleep(420 * time.Millisecond)
		c.fail.Store(true)
		time.Sleep(120 * time.Millisecond)
		samples := s.Stop(context.Background())

		if len(samples) < 6 {
			t.Fatalf("%d samples in 540 ms at 50 ms", len(samples))
		}
		if samples[0].T > 0 {
			t.Errorf("first sample T = %v: before the origin it must be <= 0", samples[0].T)
		}
		for i, sm := range samples[:len(samples)-1] {
			if k := sm.T / 0.05; math.Abs(k-math.Round(k)) > 1e-9 {
				t.Errorf("sample %d at T = %v is off the 50 ms grid", i, sm.T)
			}
			if i > 0 && sm.T <= samples[i-1].T {
				t.Errorf("T not increasing at %d: %v after %v", i, sm.T, samples[i-1].T)
			}
		}
		last := samples[len(samples)-1]
		if last.Seconds <= 0 || last.Seconds > 0.06 {
			t.Errorf("last sample covers %v s", last.Seconds)
		}
		var missing int
		for _, sm := range samples {
			if len(sm.Disks) == 0 {
				missing++
			}
		}
		notes := s.Notes()
		want := fmt.Sprintf("disks figures missing in %d samples", missing)
		if len(notes) != 2 || !strings.Contains(notes[0], "disks figures missing from") || !strings.Contains(notes[0], "source gone") ||
			!strings.Contains(notes[1], want) {
			t.Errorf("notes = %q, want one on the failing source, then %q", notes, want)
		}

		rows, err := csv.NewReader(&out).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(samples)+1 || rows[0][0] != "t" || rows[0][3] != "vda_read_iops" {
			t.Fatalf("CSV has %d rows (want header + %d), header %v", len(rows), len(samples), rows[0])
		}
		// After the source failed, its cells are empty rather than missing or zero.
		if got := rows[len(rows)-1][3]; got != "" {
			t.Errorf("cell of a failed source = %q, want empty", got)
		}
	})
}

func TestLatencyHistogram(t *testing.T) {
	for _, c := range []struct {
		ns     uint64
		bucket int
	}{
		{0, 0}, {15, 15}, {16, 64}, {17, 65}, {31, 79}, {32, 80}, {33, 80}, {34, 81},
		{1000, 9*16 + 15}, // 1000 = 0b1111101000: p = 9, next four bits 1111
		{1 << 20, 20 * 16},
	} {
		if got := latencyBucket(c.ns); got != c.bucket {
			t.Errorf("latencyBucket(%d) = %d, want %d", c.ns, got, c.bucket)
		}
		if up := bucketUpperNs(c.bucket); float64(c.ns) >= up {
			t.Errorf("%d ns lies above its bucket's upper edge %v", c.ns, up)
		}
	}
	// Every bucket is at most 1/16 of its lower edge wide.
	for ns := uint64(16); ns < 1<<30; ns = ns*17/16 + 1 {
		b := latencyBucket(ns)
		if up := bucketUpperNs(b); up > float64(ns)*(1+1.0/16)+1 {
			t.Fatalf("bucket of %d ns reaches %v: wider than 1/16", ns, up)
		}
	}

	h := LatencyHistogram{}
	for i := uint64(1); i <= 1000; i++ {
		h[latencyBucket(i*1000)]++ // 1 µs … 1 ms, uniform
	}
	if h.Count() != 1000 {
		t.Fatalf("count = %d", h.Count())
	}
	for _, q := range []struct{ q, trueMs float64 }{{0.5, 0.5}, {0.99, 0.99}, {0.999, 0.999}} {
		got := h.QuantileMs(q.q)
		if got < q.trueMs || got > q.trueMs*(1+1.0/16) {
			t.Errorf("p%v = %v ms, want within [%v, +6.25%%]", q.q*100, got, q.trueMs)
		}
	}
	if (LatencyHistogram{}).QuantileMs(0.99) != 0 {
		t.Error("an empty histogram has no percentile")
	}
}

// A directory the server reported but this host cannot resolve (a server in a
// container) costs its disk figures, not the run; the user's own --path must exist;
// --io-latency on needs a disk to trace.
func TestMonitorTargets(t *testing.T) {
	ctx := t.Context()
	m, err := New(ctx, Config{Interval: time.Second, IOLatency: "off",
		Targets: []Target{{Path: "/nonexistent/storbench/data", Role: "data", Reported: true}}})
	if err != nil {
		t.Fatalf("a reported directory that does not exist here: %v", err)
	}
	notes := m.sampler.Notes()
	m.Close()
	if len(notes) == 0 || !strings.Contains(notes[0], "no disk figures for the data directory") {
		t.Errorf("notes = %q", notes)
	}
	if _, err := New(ctx, Config{Interval: time.Second, IOLatency: "off",
		Targets: []Target{{Path: "/nonexistent/storbench", Role: "path"}}}); !errors.Is(err, input.ErrInvalid) {
		t.Errorf("missing --path: %v, want an input error", err)
	}
	if _, err := New(ctx, Config{Interval: time.Second, IOLatency: "on",
		Targets: []Target{{Path: "/proc", Role: "path"}}}); !errors.Is(err, input.ErrInvalid) {
		t.Errorf("--io-latency on without a disk: %v, want an input error", err)
	}
}

// Each run of failed samples is a gap; the note counts them all and says when.
func TestSamplerGaps(t *testing.T) {
	s := NewSampler(time.Second, nil)
	c := &countingCollector{}
	s.Add("disks", c)
	s.Prime(context.Background())
	s.origin = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i, fail := range []bool{false, true, true, false, true, false} {
		c.fail.Store(fail)
		s.take(context.Background(), s.origin.Add(time.Duration(i+1)*time.Second), float64(i+1))
	}
	s.noteGaps()
	notes := s.Notes()
	if len(notes) != 2 || !strings.Contains(notes[1], "disks figures missing in 3 samples, 3.0 s in all (12:00:02-12:00:03, 12:00:05)") {
		t.Errorf("notes = %q", notes)
	}
}

// TestSamplerLateTick: a tick that fires more than half an interval late (a busy
// machine; here every other tick's clock runs 30 ms late at 50 ms) keeps the T it was
// due at, on the grid and increasing. Before, such a sample took the T of the next grid
// point, which was then sampled again on time: TestSamplerTimeline saw two samples
// with one T under load.
func TestSamplerLateTick(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewSampler(50*time.Millisecond, nil)
		var calls atomic.Int64
		s.clock = func() time.Time {
			// The loop reads the clock twice a tick (the sample, then the next tick).
			if n := calls.Add(1); (n-1)/2%2 == 0 {
				return time.Now().Add(30 * time.Millisecond)
			}
			return time.Now()
		}
		s.Start(context.Background(), time.Now())
		time.Sleep(400 * time.Millisecond)
		samples := s.Stop(context.Background())
		if len(samples) < 4 {
			t.Fatalf("%d samples in 400 ms at 50 ms", len(samples))
		}
		for i, sm := range samples[:len(samples)-1] {
			if k := sm.T / 0.05; math.Abs(k-math.Round(k)) > 1e-9 {
				t.Errorf("sample %d at T = %v is off the 50 ms grid", i, sm.T)
			}
			if i > 0 && sm.T <= samples[i-1].T {
				t.Errorf("T not increasing at %d: %v after %v", i, sm.T, samples[i-1].T)
			}
		}
	})
}
