package metrics

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/storbench/storbench/internal/engine"
)

// Wait classes: where a database session's time went, as its engine's wait events
// tell (docs/metrics.md maps each engine's events to them; the engines name them
// as package engine does).
const (
	// WaitCPU is time active with no wait event: running, or runnable and waiting for
	// a CPU, which the database cannot tell apart.
	WaitCPU = engine.WaitCPU
	// WaitDataIO is reading, writing or extending data files (PostgreSQL
	// IO:DataFileRead, DataFileWrite, DataFileExtend…; InnoDB data file I/O).
	WaitDataIO = engine.WaitDataIO
	// WaitWAL is writing and flushing the log (PostgreSQL IO:WALWrite, WALSync,
	// LWLock:WALWrite…; InnoDB redo log).
	WaitWAL = engine.WaitWAL
	// WaitLock is heavyweight (row, table, transaction) locks.
	WaitLock = engine.WaitLock
	// WaitLWLock is the server's internal locks and latches, but the log's.
	WaitLWLock = engine.WaitLWLock
	// WaitClient is waiting for the client inside a transaction (PostgreSQL
	// Client:ClientRead while "idle in transaction" or active).
	WaitClient = engine.WaitClient
	// WaitOther is every other wait event.
	WaitOther = engine.WaitOther
)

// WaitClasses are the classes in the order figures show them.
var WaitClasses = []string{WaitCPU, WaitDataIO, WaitWAL, WaitLock, WaitLWLock, WaitClient, WaitOther}

// Waits is where the database's sessions spent their active time over an interval
// or a window, by role and wait class.
type Waits struct {
	// Source names how the profile was taken ("pg_stat_activity sampled at 10 Hz",
	// "pg_wait_sampling profile", …), for the result's labels.
	Source string `json:"source"`
	// Missing says what the server lacked for a full profile ("" when nothing).
	Missing string `json:"missing,omitempty"`
	// Roles: the clients' sessions first (as ProcessRoles' roles), then the
	// background roles sampled.
	Roles []RoleWaits `json:"roles"`
	// Readings is how many times the sessions were read (a sampled source; 0 for a
	// server's own cumulative profile).
	Readings int `json:"readings,omitempty"`
	// MaxGapSeconds is the longest time one reading stood for: each share is
	// within one gap per change of a session's state (a sampled source).
	MaxGapSeconds float64 `json:"max_gap_s,omitempty"`
}

// RoleWaits is one role's active time by wait class.
type RoleWaits struct {
	Server string `json:"server,omitempty"`
	Role   string `json:"role"`
	// Seconds is the time observed in each class (WaitClasses), summed over the
	// role's sessions: 4 sessions active all along a 1 s interval make 4 s.
	Seconds map[string]float64 `json:"seconds"`
	// IntervalSeconds is the time the profile covers (for the mean number of active
	// sessions).
	IntervalSeconds float64 `json:"interval_s"`
}

// Active is the role's active time in all classes.
func (r RoleWaits) Active() float64 {
	var sum float64
	for _, s := range r.Seconds {
		sum += s
	}
	return sum
}

// Pct is class's share of the role's active time, in percent; 0 with no active time.
func (r RoleWaits) Pct(class string) float64 {
	if a := r.Active(); a > 0 {
		return 100 * r.Seconds[class] / a
	}
	return 0
}

// Clients is the clients' sessions' profile (the first role), nil when none.
func (w *Waits) Clients() *RoleWaits {
	if w == nil || len(w.Roles) == 0 {
		return nil
	}
	return &w.Roles[0]
}

// MeanActive is the mean number of the role's sessions active over the interval.
func (r RoleWaits) MeanActive() float64 {
	if r.IntervalSeconds > 0 {
		return r.Active() / r.IntervalSeconds
	}
	return 0
}

// waitCollector reads what the database's sessions are doing rate times a second, in
// a goroutine of its own from its first Collect to Close, and hands each interval
// the time it counted per role and class. A reading stands for the time since the
// previous one (not 1/rate: a reading delayed by a busy machine would otherwise
// shorten the profile), up to maxReadingGap: after a longer gap (a server that
// stopped answering) the time is lost, not guessed.
type waitCollector struct {
	db     engine.WaitSampler
	rate   float64
	server string // the figures' server, "" for the only one
	clock

	mu       sync.Mutex
	roles    []string
	seconds  map[roleClass]float64
	span     float64 // the time the interval's readings stand for
	maxGap   float64
	readings int
	source   string
	err      error // the last reading's, nil after a good one

	primed bool
	cancel context.CancelFunc
	done   chan struct{}
}

type roleClass struct{ role, class string }

// maxReadingGap bounds the time one reading stands for.
const maxReadingGap = time.Second

func newWaitCollector(server string, db engine.WaitSampler, rate float64) *waitCollector {
	return &waitCollector{db: db, rate: rate, server: server, seconds: map[roleClass]float64{}}
}

// Collect implements Collector: its first call starts the readings.
func (c *waitCollector) Collect(ctx context.Context, s *Sample) error {
	if !c.primed {
		c.primed = true
		loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		c.cancel, c.done = cancel, make(chan struct{})
		go c.loop(loopCtx)
		return nil
	}
	c.mu.Lock()
	seconds, span, maxGap, readings, roles, source, err := c.seconds, c.span, c.maxGap, c.readings, c.roles, c.source, c.err
	c.seconds, c.span, c.maxGap, c.readings = map[roleClass]float64{}, 0, 0, 0
	c.mu.Unlock()
	if readings == 0 {
		// Without an error, the interval was shorter than a reading's period (the
		// last one, taken as the run stops): nothing to say.
		return err
	}
	// The profile covers the time its readings stand for, which differs from the
	// sample's interval by less than a gap: the mean number of sessions active is
	// then exactly the readings' weighted mean.
	w := waitProfile(c.server, fmt.Sprintf("%s sampled at %g Hz", source, c.rate), roles, seconds, span)
	w.Readings, w.MaxGapSeconds = readings, maxGap
	addWaits(s, w)
	return nil
}

// loop reads at rate until its context ends.
func (c *waitCollector) loop(ctx context.Context) {
	defer close(c.done)
	tick := time.NewTicker(time.Duration(float64(time.Second) / c.rate))
	defer tick.Stop()
	prev := c.clock.read()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		rctx, cancel := context.WithTimeout(ctx, maxReadingGap)
		w, err := c.db.SessionWaits(rctx)
		cancel()
		now := c.clock.read()
		c.mu.Lock()
		c.err = err
		if err == nil {
			weight := min(now.Sub(prev), maxReadingGap).Seconds()
			for _, n := range w.Sessions {
				c.seconds[roleClass{n.Role, n.Class}] += float64(n.N) * weight
			}
			c.span, c.maxGap = c.span+weight, max(c.maxGap, weight)
			c.roles, c.source, c.readings = w.Roles, w.Source, c.readings+1
			prev = now
		}
		c.mu.Unlock()
	}
}

// Close stops the readings.
func (c *waitCollector) Close() error {
	if c.cancel != nil {
		c.cancel()
		<-c.done
	}
	return nil
}

// waitProfile lays out the seconds counted per role and class over an interval: the
// clients' role (roles[0]) always, the others where they were seen active.
func waitProfile(server, source string, roles []string, seconds map[roleClass]float64, interval float64) *Waits {
	w := &Waits{Source: source}
	for i, role := range roles {
		r := RoleWaits{Server: server, Role: role, Seconds: map[string]float64{}, IntervalSeconds: interval}
		for _, class := range WaitClasses {
			if v := seconds[roleClass{role, class}]; v > 0 {
				r.Seconds[class] = v
			}
		}
		if i == 0 || len(r.Seconds) > 0 {
			w.Roles = append(w.Roles, r)
		}
	}
	return w
}

// addWaits adds one server's profile to the sample's: with several servers sampled
// (consolidated instances), each one's roles follow the previous one's, named by
// their Server.
func addWaits(s *Sample, w *Waits) {
	if s.Waits == nil {
		s.Waits = w
		return
	}
	s.Waits.Roles = append(s.Waits.Roles, w.Roles...)
	s.Waits.Readings += w.Readings
	s.Waits.MaxGapSeconds = max(s.Waits.MaxGapSeconds, w.MaxGapSeconds)
	if s.Waits.Missing == "" {
		s.Waits.Missing = w.Missing
	}
}

// waitSums adds up the samples' profiles over a window: sums of seconds, never
// averages of shares, per server and role.
type waitSums struct {
	source, missing string
	roles           []serverRole
	seconds         map[serverRole]map[string]float64
	interval        map[serverRole]float64
	maxGap          float64
	readings        int
}

type serverRole struct{ server, role string }

func (ws *waitSums) add(w *Waits) {
	if w == nil {
		return
	}
	if ws.seconds == nil {
		ws.seconds, ws.interval, ws.source = map[serverRole]map[string]float64{}, map[serverRole]float64{}, w.Source
	}
	if ws.missing == "" {
		ws.missing = w.Missing
	}
	for _, r := range w.Roles {
		k := serverRole{r.Server, r.Role}
		if ws.seconds[k] == nil {
			ws.roles = append(ws.roles, k)
			ws.seconds[k] = map[string]float64{}
		}
		for class, v := range r.Seconds {
			ws.seconds[k][class] += v
		}
		ws.interval[k] += r.IntervalSeconds
	}
	ws.readings, ws.maxGap = ws.readings+w.Readings, max(ws.maxGap, w.MaxGapSeconds)
}

// total is the window's profile; nil when no sample had one.
func (ws *waitSums) total() *Waits {
	if ws.seconds == nil {
		return nil
	}
	w := &Waits{Source: ws.source, Missing: ws.missing, Readings: ws.readings, MaxGapSeconds: ws.maxGap}
	for _, k := range ws.roles {
		// A background role shows only in the intervals it was active in: the
		// window's span is its server's clients' (the first role, always there).
		span := ws.interval[serverRole{k.server, ws.firstRole(k.server)}]
		w.Roles = append(w.Roles, RoleWaits{Server: k.server, Role: k.role, Seconds: ws.seconds[k], IntervalSeconds: span})
	}
	return w
}

// firstRole is the first role seen of server: its clients'.
func (ws *waitSums) firstRole(server string) string {
	for _, k := range ws.roles {
		if k.server == server {
			return k.role
		}
	}
	return ""
}

// profileCollector reads a server's own cumulative wait profile each interval and
// hands the interval its difference.
type profileCollector struct {
	db         engine.WaitProfiler
	server     string // the figures' server, "" for the only one
	prev       map[roleClass]float64
	prevActive map[string]float64
	clock
	prevAt time.Time
	primed bool
}

// Collect implements Collector.
func (c *profileCollector) Collect(ctx context.Context, s *Sample) error {
	p, err := c.db.WaitProfile(ctx)
	now := c.clock.read()
	if err != nil {
		return err
	}
	cur := map[roleClass]float64{}
	for _, v := range p.Seconds {
		cur[roleClass{v.Role, v.Class}] += v.Seconds
	}
	active := map[string]float64{}
	for _, a := range p.Active {
		active[a.Role] += a.Seconds
	}
	prev, prevActive, seconds, primed := c.prev, c.prevActive, now.Sub(c.prevAt).Seconds(), c.primed
	c.prev, c.prevActive, c.prevAt, c.primed = cur, active, now, true
	if !primed {
		return nil
	}
	// A counter that went back has no figure for this interval. All of them at once
	// is a restart or a statistics reset; some only, a part of the sum that left it
	// (MariaDB drops a user's performance_schema summary rows): the others still
	// count, and the interval says what it is missing.
	delta := map[roleClass]float64{}
	went, of := 0, len(cur)+len(active)
	for k, v := range cur {
		if d := v - prev[k]; d >= 0 {
			delta[k] = d
		} else {
			went++
		}
	}
	// The rest of a role's active time: a statement's waits are counted as each
	// ends, the statement when it ends, so an interval may hold a wait whose
	// statement ends in the next one; the rest is then none, not negative.
	for role, a := range active {
		d := a - prevActive[role]
		if d < 0 {
			went++
			continue
		}
		for _, class := range WaitClasses {
			d -= delta[roleClass{role, class}]
		}
		delta[roleClass{role, p.Rest}] += max(d, 0)
	}
	if went > 0 && went == of {
		return ErrCounterReset
	}
	w := waitProfile(c.server, p.Source, p.Roles, delta, seconds)
	w.Missing = p.Missing
	if went > 0 {
		w.Missing = strings.TrimPrefix(w.Missing+"; ", "; ") + fmt.Sprintf("%d of the server's %d cumulative wait counters went back in this interval (part of their sum left it): they count nothing here", went, of)
	}
	addWaits(s, w)
	return nil
}

// ForServer is the wait profile of one of the servers sampled (its roles only), nil
// when it has none.
func (w *Waits) ForServer(server string) *Waits {
	if w == nil {
		return nil
	}
	one := *w
	one.Roles = slices.DeleteFunc(slices.Clone(w.Roles), func(r RoleWaits) bool { return r.Server != server })
	if len(one.Roles) == 0 {
		return nil
	}
	return &one
}
