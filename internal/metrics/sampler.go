package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"
)

// Sampler runs its collectors every interval on a timeline anchored at an origin
// (the run's timed window start), keeps the samples and streams each one to a sink as
// it is taken, so a crash loses at most the interval in progress.
type Sampler struct {
	collectors []named
	interval   time.Duration
	sink       *CSVWriter
	// judge names each sample's bottleneck before it is kept and streamed.
	judge func(*Sample) string
	// watch sees each sample once it is kept (a live endpoint).
	watch func(*Sample)

	mu      sync.Mutex
	samples []Sample
	notes   []string
	failed  map[string]bool
	// gaps are each collector's runs of failed samples, for the note at Stop: a
	// source that stops answering mid-run leaves holes, and the report says where.
	gaps map[string][]gap

	origin time.Time
	// clock is when a tick's sample is taken: time.Now, or in a test a clock that
	// runs late as a busy machine's timers do.
	clock  func() time.Time
	prevAt time.Time
	primed bool
	stop   chan struct{}
	done   chan struct{}
}

// named is a collector with the name its errors are reported under.
type named struct {
	name string
	Collector
	// apart: it reads a server or another host, which may stall for the whole
	// deadline, so it runs beside the others (into a sample of its own, merged
	// after) instead of after them.
	apart bool
}

// gap is a run of consecutive samples a collector failed.
type gap struct {
	from, to time.Time // the first and last failed samples' times
	samples  int
	seconds  float64 // the failed samples' intervals
	open     bool    // the collector has not answered since
}

// NewSampler samples every interval; sink may be nil.
func NewSampler(interval time.Duration, sink *CSVWriter) *Sampler {
	return &Sampler{interval: interval, sink: sink, clock: time.Now, failed: map[string]bool{}, gaps: map[string][]gap{}}
}

// Add registers a collector before Start.
func (s *Sampler) Add(name string, c Collector) {
	s.collectors = append(s.collectors, named{name: name, Collector: c})
}

// AddApart adds a collector that reads another host (node_exporter): it runs beside
// the others, so that a stalled host and a stalled database do not each cost an
// interval. The database's own collectors stay in order with the rest: they share the
// server's connections, and with the two at once MariaDB's wait profile once read as
// reset mid-run (TestWaitsMariaDB, under the whole test suite).
func (s *Sampler) AddApart(name string, c Collector) {
	s.collectors = append(s.collectors, named{name: name, Collector: c, apart: true})
}

// Note records something the report must say (a source not available, a device
// without figures).
func (s *Sampler) Note(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = append(s.notes, fmt.Sprintf(format, args...))
}

// Prime reads every collector's starting counters (opening connections, waiting for
// a tracer's first print), so that Start costs the run nothing; it returns the
// collectors that failed, by name.
func (s *Sampler) Prime(ctx context.Context) map[string]error {
	s.prevAt = time.Now()
	s.primed = true
	return s.collect(ctx, &Sample{Time: s.prevAt})
}

// Start samples at origin + k·interval in the background until Stop (priming first if
// Prime was not called). An origin in the future (a ramp-up still to come) is fine:
// samples before it have T <= 0.
func (s *Sampler) Start(ctx context.Context, origin time.Time) {
	if !s.primed {
		s.Prime(ctx)
	}
	s.origin = origin
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go s.loop(ctx)
}

func (s *Sampler) loop(ctx context.Context) {
	defer close(s.done)
	due := s.nextTick(time.Now())
	timer := time.NewTimer(time.Until(due))
	defer timer.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-ctx.Done():
			return
		case <-timer.C:
			s.take(ctx, s.clock(), s.tickT(due))
			// From after the collection: one that overran its interval skips a tick
			// rather than being followed at once by a sliver of a sample.
			due = s.nextTick(s.clock())
			timer.Reset(time.Until(due))
		}
	}
}

// nextTick is the first tick of the origin's grid after now. Ticks stay on the grid,
// so a slow collection never makes the timeline drift. A sample is labelled with the
// tick it was due at (tickT of it), not the tick nearest to when it was taken: a tick
// that fired more than half an interval late (a busy machine) was labelled with the
// next tick, which nextTick then scheduled again, and two samples had one T.
func (s *Sampler) nextTick(now time.Time) time.Time {
	k := math.Floor(float64(now.Sub(s.origin))/float64(s.interval)) + 1
	return s.origin.Add(time.Duration(k) * s.interval)
}

// tickT is the grid point nearest to now, in seconds from the origin.
func (s *Sampler) tickT(now time.Time) float64 {
	k := math.Round(float64(now.Sub(s.origin)) / float64(s.interval))
	return k * s.interval.Seconds()
}

// Stop takes a last sample covering the time since the previous one (the end of the
// window is not left out), stops the collectors that run processes, and returns the
// samples.
func (s *Sampler) Stop(ctx context.Context) []Sample {
	close(s.stop)
	<-s.done
	now := time.Now()
	s.take(ctx, now, math.Round(now.Sub(s.origin).Seconds()*1000)/1000)
	s.noteGaps()
	s.close()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples
}

// close stops the collectors that run processes.
func (s *Sampler) close() {
	for _, c := range s.collectors {
		if closer, ok := c.Collector.(io.Closer); ok {
			if err := closer.Close(); err != nil {
				s.Note("%s: %v", c.name, err)
			}
		}
	}
}

// take collects one sample and streams it.
func (s *Sampler) take(ctx context.Context, now time.Time, t float64) {
	sample := Sample{T: t, Time: now, Seconds: now.Sub(s.prevAt).Seconds()}
	s.prevAt = now
	s.collect(ctx, &sample)
	if s.judge != nil {
		sample.Bottleneck, sample.judged = s.judge(&sample), true
	}
	s.mu.Lock()
	s.samples = append(s.samples, sample)
	s.mu.Unlock()
	if s.watch != nil {
		s.watch(&sample)
	}
	if s.sink != nil {
		missing, err := s.sink.Write(&sample)
		if err != nil && !s.failed["csv"] {
			s.failed["csv"] = true
			s.Note("writing the samples' CSV failed: %v", err)
		}
		if len(missing) > 0 && !s.failed["csv columns"] {
			s.failed["csv columns"] = true
			s.Note("the CSV lacks %v (not in its first sample); the JSON has them", missing)
		}
	}
}

// collect runs each collector with a deadline, so a stalled source (a database that
// stopped answering) delays one sample, not the timeline; those added apart run
// beside the others, each into a sample of its own merged after in the order they
// were added. A failing collector is noted once and tried again every interval.
func (s *Sampler) collect(ctx context.Context, sample *Sample) map[string]error {
	results := make([]error, len(s.collectors))
	parts := make([]Sample, len(s.collectors))
	deadline := max(s.interval, time.Second)
	var wg sync.WaitGroup
	for i, c := range s.collectors {
		if c.apart {
			parts[i] = Sample{T: sample.T, Time: sample.Time, Seconds: sample.Seconds}
			wg.Go(func() {
				cctx, cancel := context.WithTimeout(ctx, deadline)
				defer cancel()
				results[i] = c.Collect(cctx, &parts[i])
			})
		}
	}
	for i, c := range s.collectors {
		if !c.apart {
			cctx, cancel := context.WithTimeout(ctx, deadline)
			results[i] = c.Collect(cctx, sample)
			cancel()
		}
	}
	wg.Wait()
	var errs map[string]error
	for i, c := range s.collectors {
		if c.apart {
			merge(sample, &parts[i])
		}
		err := results[i]
		gs := s.gaps[c.name]
		last := len(gs) - 1
		// A reset is no failure of the source (it answered): each is said where it
		// happened.
		if reset := errors.Is(err, ErrCounterReset); err == nil || reset {
			if last >= 0 {
				gs[last].open = false
			}
			if reset {
				sample.Resets = append(sample.Resets, c.name)
				s.Note("%s counters reset at %s (a server restart or a statistics reset): that interval has no %s figures, and summaries leave it out",
					c.name, sample.Time.Format(time.TimeOnly), c.name)
			}
			continue
		}
		if last < 0 || !gs[last].open {
			gs = append(gs, gap{from: sample.Time, open: true})
			last++
		}
		gs[last].to, gs[last].samples, gs[last].seconds = sample.Time, gs[last].samples+1, gs[last].seconds+sample.Seconds
		s.gaps[c.name] = gs
		if errs == nil {
			errs = map[string]error{}
		}
		errs[c.name] = err
		if !s.failed[c.name] {
			s.failed[c.name] = true
			s.Note("%s figures missing from %s on: %v", c.name, sample.Time.Format(time.TimeOnly), err)
		}
	}
	return errs
}

// noteGaps says, per collector that failed, how many samples and seconds lack its
// figures and when (the first few gaps).
func (s *Sampler) noteGaps() {
	const shown = 5
	for _, c := range s.collectors {
		gs := s.gaps[c.name]
		if len(gs) == 0 {
			continue
		}
		var samples int
		var seconds float64
		var when []string
		for i, g := range gs {
			samples, seconds = samples+g.samples, seconds+g.seconds
			if i >= shown {
				continue
			}
			from, to := g.from.Format(time.TimeOnly), g.to.Format(time.TimeOnly)
			if from != to {
				from += "-" + to
			}
			when = append(when, from)
		}
		if len(gs) > shown {
			when = append(when, fmt.Sprintf("%d more", len(gs)-shown))
		}
		s.Note("%s figures missing in %d samples, %.1f s in all (%s); rates in the first sample after a gap are over all of it",
			c.name, samples, seconds, strings.Join(when, ", "))
	}
}

// Notes returns what the report must say.
func (s *Sampler) Notes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.notes...)
}

// merge adds what a collector run apart put in its own sample to the interval's.
// Every figure a collector may set is listed here (TestMergeCoversSample keeps it
// so): one left out would be lost without a word.
func merge(dst, src *Sample) {
	if src.CPU != nil {
		dst.CPU = src.CPU
	}
	if src.Memory != nil {
		dst.Memory = src.Memory
	}
	if src.Database != nil {
		dst.Database = src.Database
	}
	if src.Scrape != nil {
		dst.Scrape = src.Scrape
	}
	if src.blockIO != nil {
		dst.blockIO = src.blockIO
	}
	if src.Waits != nil {
		addWaits(dst, src.Waits)
	}
	dst.Disks = append(dst.Disks, src.Disks...)
	dst.Latency = append(dst.Latency, src.Latency...)
	dst.ProcessIO = append(dst.ProcessIO, src.ProcessIO...)
	dst.GroupCPU = append(dst.GroupCPU, src.GroupCPU...)
}
