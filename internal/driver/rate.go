package driver

// Open-loop (fixed-rate) load: the run offers transactions at a rate, whether or not
// the database keeps up, as an application's requests arrive. Closed-loop users slow
// down with the database, so their latencies leave out the queueing a real client sees
// (coordinated omission); here each transaction's response time runs from when it was
// due (its arrival), and how late the users started it is reported on its own.

import (
	"context"
	"fmt"
	"math"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/tpcc"
)

// Arrival processes of an open-loop run.
const (
	// ArrivalsPoisson: exponential gaps between arrivals, so the offered load is not
	// phase-locked to anything (the default, as pgbench's --rate).
	ArrivalsPoisson = "poisson"
	// ArrivalsUniform: equal gaps.
	ArrivalsUniform = "uniform"
)

// schedule is the one stream of arrivals of an open-loop run, shared by its users as
// a connection pool serves an application's requests: a free user takes the oldest
// arrival not yet started, or, when none is waiting, the next one and waits for it.
// With every user busy, arrivals queue (the backlog), and their response times grow
// with the wait, as a real client's would. Times are from origin, in whole
// nanoseconds: sums of float seconds drift off the window's edges.
type schedule struct {
	mu      sync.Mutex
	origin  time.Time
	gap     float64 // mean nanoseconds between arrivals
	poisson bool
	rng     *tpcc.Rand
	next    time.Duration // the next arrival not yet generated
	// queue holds the arrivals that are due and not yet taken, from head on.
	queue []time.Duration
	head  int
	// reserved are arrivals a waiting user took before they were due, in order:
	// they count as arrived once due.
	reserved []time.Duration
	// limit (0: none): an arrival already this late when a user could take it is
	// skipped, not run.
	limit time.Duration
	// windowStart and windowEnd bound the timed window.
	windowStart, windowEnd time.Duration
	// Cumulative counts, read by the timeline (every phase) and the result (window).
	arrived, skipped             int64
	arrivedWindow, skippedWindow int64
}

func newSchedule(cfg Config, origin, windowStart, windowEnd time.Time, rng *tpcc.Rand) *schedule {
	s := &schedule{origin: origin, gap: float64(time.Minute) / cfg.Rate, poisson: cfg.Arrivals != ArrivalsUniform, rng: rng,
		limit: cfg.LatencyLimit.Duration, windowStart: windowStart.Sub(origin), windowEnd: windowEnd.Sub(origin)}
	s.next = s.draw()
	return s
}

// draw is the gap to the next arrival.
func (s *schedule) draw() time.Duration {
	if !s.poisson {
		return time.Duration(math.Round(s.gap))
	}
	return time.Duration(math.Round(-math.Log(1-s.rng.Float()) * s.gap))
}

func (s *schedule) inWindow(at time.Duration) bool { return at >= s.windowStart && at < s.windowEnd }

// generate moves the arrivals due by now (seconds from origin) into the queue, and
// counts the reserved ones that came due.
func (s *schedule) generate(now time.Duration) {
	for s.next <= now {
		s.queue = append(s.queue, s.next)
		s.count(s.next)
		s.next += s.draw()
	}
	n := 0
	for n < len(s.reserved) && s.reserved[n] <= now {
		s.count(s.reserved[n])
		n++
	}
	s.reserved = s.reserved[n:]
}

func (s *schedule) count(at time.Duration) {
	s.arrived++
	if s.inWindow(at) {
		s.arrivedWindow++
	}
}

// dropLate skips the queued arrivals already later than the limit.
func (s *schedule) dropLate(now time.Duration) {
	if s.limit <= 0 {
		return
	}
	for s.head < len(s.queue) && now-s.queue[s.head] > s.limit {
		s.skipped++
		if s.inWindow(s.queue[s.head]) {
			s.skippedWindow++
		}
		s.head++
	}
	s.compact()
}

// compact reclaims the taken part of the queue once it is most of it.
func (s *schedule) compact() {
	if s.head > 1024 && s.head > len(s.queue)/2 {
		s.queue = append(s.queue[:0], s.queue[s.head:]...)
		s.head = 0
	}
}

// take is the arrival a free user runs next: the oldest due one, or the next to come.
func (s *schedule) take(now time.Time) time.Time {
	at := now.Sub(s.origin)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.generate(at)
	s.dropLate(at)
	var due time.Duration
	if s.head < len(s.queue) {
		due = s.queue[s.head]
		s.head++
		s.compact()
	} else {
		due = s.next
		s.next += s.draw()
		s.reserved = append(s.reserved, due)
	}
	return s.origin.Add(due)
}

// scheduleCounts are the schedule's cumulative counts at one instant.
type scheduleCounts struct {
	arrived, skipped             int64
	arrivedWindow, skippedWindow int64
	backlog                      int // due, not yet started
}

// read brings the schedule up to now and returns its counts.
func (s *schedule) read(now time.Time) scheduleCounts {
	at := now.Sub(s.origin)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.generate(at)
	s.dropLate(at)
	return scheduleCounts{arrived: s.arrived, skipped: s.skipped, arrivedWindow: s.arrivedWindow,
		skippedWindow: s.skippedWindow, backlog: len(s.queue) - s.head}
}

// backlogOfWindow counts the arrivals due in the window that no user started by its
// end (read at or after it).
func (s *schedule) backlogOfWindow() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, at := range s.queue[s.head:] {
		if s.inWindow(at) {
			n++
		}
	}
	return n
}

// openLoop sets what became of an open-loop run's arrivals in the window, and notes
// when the users, not the database, held the rate back.
func (res *Result) openLoop(w *window, m merged, cfg Config, minutes float64) {
	a := w.arrivals
	rr := &RateResult{OfferedTPM: cfg.Rate, ArrivedTPM: PerMinute(a.arrivedWindow, minutes), AchievedTPM: res.TPMClient,
		Arrivals: cfg.Arrivals, Arrived: a.arrivedWindow, Skipped: a.skippedWindow, Late: m.late,
		LatencyLimitMs: ms(cfg.LatencyLimit.Microseconds()), Backlog: w.backlog, Lag: summarize(m.lag)}
	if rr.Arrived > 0 {
		rr.SkippedShare = float64(rr.Skipped) / float64(rr.Arrived)
	}
	if secs := minutes * 60 * float64(cfg.Users); secs > 0 {
		rr.UsersBusy = m.busy.Seconds() / secs
	}
	res.Rate = rr
	res.Sources["latency"] = "client-measured response time per transaction from when it was due (its arrival in the schedule), HdrHistogram 3 significant digits; service: from when a user began it"
	res.Sources["offered_tpm"] = fmt.Sprintf("the rate asked for; %s arrivals shared by the %d users, a free user taking the oldest due", cfg.Arrivals, cfg.Users)
	if rr.AchievedTPM < achievedShare*rr.ArrivedTPM && rr.UsersBusy > usersSaturated {
		// Little's law: carrying the rate takes rate × mean service time users at once.
		var service float64
		var n int64
		for t := range tpcc.NumTransactions {
			if h := m.service[t]; h.TotalCount() > 0 {
				service += h.Mean() * float64(h.TotalCount())
				n += h.TotalCount()
			}
		}
		need := cfg.Rate / 60 * service / float64(max(n, 1)) / 1e6
		res.Notes = append(res.Notes, fmt.Sprintf("the %d users were busy %.0f%% of the window and achieved %.0f of the %.0f TPM that arrived: at the mean service time measured, the rate needs about %.0f users at once (rate × service time), give more --users, unless the database is at its capacity (its bottleneck verdict says)",
			cfg.Users, rr.UsersBusy*100, rr.AchievedTPM, rr.ArrivedTPM, math.Ceil(need)))
	}
}

// achievedShare is the share of the arrivals a run that kept up achieves; and
// usersSaturated the busy share of the users past which they, not the database, may
// have held the rate back.
const (
	achievedShare  = 0.99
	usersSaturated = 0.9
)

// timerSlack is how early a user stops waiting on a Go timer for its next arrival:
// the runtime's timers wake up to a millisecond late on an idle machine (its poller
// waits in whole milliseconds), which an open-loop run would count in every response
// time (measured: schedule lag p50 0.55-1.66 ms at 60,000 TPM). The rest of the wait
// is on the user's timerfd (waker), which the poller sees ready when the kernel's
// high-resolution timer fires.
const timerSlack = 1500 * time.Microsecond

// waitUntil waits for an arrival that is due at due; it reports whether to go on.
func (r *run) waitUntil(ctx context.Context, w *waker, due time.Time) bool {
	wait := time.Until(due)
	if wait > timerSlack && !r.pause(ctx, wait-timerSlack) {
		return false
	}
	w.sleep(due)
	return !r.stopping()
}

// waker is a user's timerfd, read through Go's poller: the goroutine parks and wakes
// when the timer fires, to tens of microseconds, without holding a thread. (A
// nanosleep was as precise but cost 100-115 µs of client CPU per transaction against
// 33 closed-loop: the runtime handed the sleeping thread's CPU to another thread and
// back at every wait.)
type waker struct {
	fd   int
	file *os.File
	buf  [8]byte
}

func newWaker() (*waker, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("create a timer (timerfd) for an open-loop user: %w", err)
	}
	// A non-blocking descriptor: os.NewFile puts it in the poller.
	return &waker{fd: fd, file: os.NewFile(uintptr(fd), "timerfd")}, nil
}

// sleep waits until due, a short wait (under timerSlack); should the timer fail, a
// Go timer stands in, late rather than early: a transaction begun before it was due
// would have a response time shorter than its service time.
func (w *waker) sleep(due time.Time) {
	d := time.Until(due)
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d.Nanoseconds())}
	if d <= 0 {
		return
	}
	if err := unix.TimerfdSettime(w.fd, 0, &spec, nil); err == nil {
		if _, err := w.file.Read(w.buf[:]); err == nil {
			return
		}
	}
	time.Sleep(time.Until(due))
}

func (w *waker) close() {
	if w != nil {
		_ = w.file.Close()
	}
}

// overlap is the part of [began, end] inside the timed window (up to its cut, when
// one ended it early).
func (r *run) overlap(began, end time.Time) time.Duration {
	to := r.windowEnd
	if cut := r.cut.Load(); cut != 0 {
		to = time.Unix(0, cut)
	}
	if end.Before(to) {
		to = end
	}
	from := r.windowStart
	if began.After(from) {
		from = began
	}
	return max(0, to.Sub(from))
}
