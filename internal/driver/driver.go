// Package driver runs TPROC-C: virtual users each on their own session, a ramp-up,
// a timed window in which only completed transactions count, per-second progress,
// and the run's result (both throughput views, latencies, input audit).
package driver

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sync/errgroup"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/tpcc"
)

// Config is a run's configuration.
type Config struct {
	Workload
	Users    int
	Ramp     time.Duration
	Duration time.Duration
	// Rate, when above 0, makes the run open-loop: transactions of the mix arrive at
	// Rate a minute (all five types, as pgbench's and sysbench's rates count), spread
	// by Arrivals, and Users is how many may run at once. 0: closed-loop users.
	Rate float64
	Seed uint64 // of the run's inputs
	// ClientCPUs is how many CPUs the driver may use (the caller sets GOMAXPROCS);
	// the result warns when the driver came close to using them all.
	ClientCPUs int
	// Progress, when set, is called once a second.
	Progress func(Tick)
	// Accepted, when set, is called once Run has accepted the run (the server can
	// hold its users, the engine has its mode), before any user connects: a caller
	// prepares there what a refused run must not leave behind (metrics files).
	Accepted func(context.Context) error
	// Started, when set, is called once the users are connected, with the start of
	// the timed window: the origin of the run's timeline (ramp-up seconds are <= 0).
	Started func(windowStart time.Time)
	// StartAt, when set, is when the timed window starts, instead of Ramp after the
	// users connect: runs on several databases then measure the same seconds.
	StartAt time.Time
	// Storage is where the database keeps its files (engine.WatchStorage): failures
	// while it is nearly full stop the run. Unset, only the engine's own disk-full
	// errors do.
	Storage engine.StorageWatch
	// UntilSteady, when set, is the longest the timed window may run: past Duration
	// it goes on until its last Duration seconds are steady (internal/steady), as
	// fio's steady state does. Zero: the window runs Duration.
	UntilSteady time.Duration
	// validated is set by Validate: Run does not check again what its caller's
	// Validate accepted before connecting.
	validated bool
}

// Tick is the run's state at one second.
type Tick struct {
	Elapsed time.Duration
	Phase   string // PhaseRamp or PhaseTimed
	// Client view over the last second, per minute.
	TPM, NOPM   float64
	NewOrderP95 time.Duration // over the last second
	Errors      int64         // over the last second
	// OfferedTPM is an open-loop run's arrivals over the last second, per minute.
	OfferedTPM float64
	// Buckets are each type's response times since the run began, by
	// tpcc.Transaction; the driver's own, valid only during the call.
	Buckets *[tpcc.NumTransactions]LatencyBuckets
}

// Phases of a run.
const (
	PhaseRamp  = "ramp"
	PhaseTimed = "timed"
)

// stopGrace bounds how long in-flight transactions may run past the window's end.
const stopGrace = 30 * time.Second

// Database is what a run needs of a database: sessions and counters (engine.Runner)
// and the names its result records.
type Database interface {
	engine.Runner
	Engine() string
	ServerVersion(ctx context.Context) (string, error)
}

// run is one run's shared state.
type run struct {
	db                     Database
	cfg                    Config
	rules                  *tpcc.InputRules
	start                  time.Time
	windowStart, windowEnd time.Time
	stop                   atomic.Bool
	stopped                chan struct{}
	// cut is when the timed window ended before windowEnd, interrupted or judged
	// steady (Unix ns; 0: none): transactions completing after it do not count.
	cut atomic.Int64
	// diskFull is the first error the engine called a full disk: a run on a full
	// storage is stopped, since users retrying for the rest of the window would
	// measure only errors.
	diskFull atomic.Pointer[error]
	// sched is an open-loop run's arrivals (nil: closed loop); lateAfter its
	// latency limit.
	sched     *schedule
	lateAfter time.Duration
	// nextJudged is the second (T) at which a window run until steady is judged
	// next (steadyEnd).
	nextJudged int
}

func (r *run) stopping() bool { return r.stop.Load() }

func (r *run) beforeCut(t time.Time) bool {
	cut := r.cut.Load()
	return cut == 0 || t.UnixNano() < cut
}

// pause sleeps for d unless the run stops first; it reports whether to go on.
func (r *run) pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return !r.stopping()
	case <-r.stopped:
		return false
	case <-ctx.Done():
		return false
	}
}

// Run drives the database and returns the result of the timed window. Interrupted
// (ctx done) inside the window, it returns the result of the part that ran, marked
// Interrupted, together with ctx's error; before the window, no result.
func Run(ctx context.Context, db Database, cfg Config) (*Result, error) {
	if !cfg.validated {
		if err := cfg.Validate(); err != nil {
			return nil, err
		}
	}
	if err := checkConnections(ctx, db, cfg.Users); err != nil {
		return nil, err
	}
	info, err := db.BuildInfo(ctx)
	var notes []string
	switch {
	case errors.Is(err, engine.ErrNoBuildInfo):
		if notes, err = foreignBuild(&info, &cfg); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, fmt.Errorf("read build information: %w", err)
	}
	if cfg.Mode, err = engine.ResolveMode(db, cfg.Mode); err != nil {
		return nil, err
	}
	if err := checkStatements(ctx, db, cfg.Users, cfg.Mode); err != nil {
		return nil, err
	}
	res := &Result{Config: resultConfig(cfg), Notes: notes}
	if info.Warehouses < 1 {
		return nil, errors.New("the database has no warehouses: run storbench build first")
	}
	if cfg.Accepted != nil {
		if err := cfg.Accepted(ctx); err != nil {
			return nil, err
		}
	}
	rules, _ := tpcc.ParseInputs(cfg.Inputs) // checked by Validate
	rng := tpcc.RunRand(cfg.Seed, 0)
	constants := runConstants(rng, info.CLoad)
	res.Config.Warehouses, res.Config.Schema, res.Config.CLoad, res.Config.CRun = info.Warehouses, info.Schema, info.CLoad, constants.CLast
	res.Config.BuiltBy = info.BuiltBy
	if v, err := db.ServerVersion(ctx); err == nil {
		res.Config.ServerVersion = v
	}

	users, shards, err := openUsers(ctx, db, cfg, rules, info.Warehouses, constants)
	if err != nil {
		return nil, err
	}
	r := &run{db: db, cfg: cfg, rules: rules, stopped: make(chan struct{})}
	r.start = time.Now()
	r.windowStart = r.start.Add(cfg.Ramp)
	if !cfg.StartAt.IsZero() {
		if cfg.StartAt.Before(r.start) {
			for _, u := range users {
				u.close()
			}
			return nil, fmt.Errorf("the common start of the timed window passed while %d users connected: allow a longer ramp", cfg.Users)
		}
		r.windowStart = cfg.StartAt
	}
	r.windowEnd = r.windowStart.Add(cfg.longestWindow())
	if cfg.Rate > 0 {
		// Arrivals start with the ramp-up, so the window opens on a loaded database.
		r.sched = newSchedule(cfg, r.start, r.windowStart, r.windowEnd, tpcc.RunRand(cfg.Seed, cfg.Users+1))
		r.lateAfter = cfg.LatencyLimit.Duration
	}
	if cfg.Started != nil {
		cfg.Started(r.windowStart)
	}

	userCtx, cancelUsers := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelUsers()
	var wg sync.WaitGroup
	for _, u := range users {
		wg.Go(func() {
			defer u.close()
			u.loop(userCtx, r)
		})
	}
	w, werr := r.watch(ctx, shards)
	r.stop.Store(true)
	close(r.stopped)
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	// The grace runs from the window's end (or its cut), not from the read of the
	// counters there: a server that stopped answering held that read for
	// counterTimeout, and its users' in-flight transactions wait on the same server.
	graceFrom := time.Now()
	if w != nil {
		graceFrom = w.end
	}
	grace := time.NewTimer(time.Until(graceFrom.Add(stopGrace)))
	defer grace.Stop()
	// In-flight transactions end on their own, within stopGrace; Ctrl-C ends them at
	// once (past the window's end or its cut, they do not count anyway).
	select {
	case <-finished:
	case <-grace.C:
	case <-ctx.Done():
	}
	cancelUsers()
	<-finished
	if werr != nil {
		return nil, werr
	}
	res.finish(w, shards, cfg, r)
	switch {
	case w.interrupted != nil:
		return res, w.interrupted
	case w.countersLost != nil:
		return res, fmt.Errorf("the database did not answer at the window's end (%w): its figures are marked unavailable, the client's counts stand in", w.countersLost)
	}
	return res, nil
}

// ServerConnections is the max_connections a server made for a run of users needs:
// theirs, the run's own (ownConnections), and room for the sampler's, a standby's
// and an operator's sessions beside them.
func ServerConnections(users int) int { return users + 20 }

// ownConnections are the connections a run holds besides its users': the database's
// own (build information, the window's counters) and the metrics sampler's observer.
const ownConnections = 2

// checkConnections refuses, before any user connects, a run the server cannot hold:
// past max_connections the last users would fail to connect after the others did.
// Run calls it; a caller that prepares more (metrics files) does so in Config.Accepted.
// An engine without a limit (SQLite), or one that cannot tell, is not checked here
// (openUsers still fails whole).
func checkConnections(ctx context.Context, db Database, users int) error {
	cl, ok := db.(engine.ConnectionLimiter)
	if !ok {
		return nil
	}
	limit, err := cl.ConnectionLimit(ctx)
	if err != nil {
		return nil
	}
	if need := users + ownConnections; need > limit.Available {
		return input.Errorf("users", "%d users need %d connections but the server allows %d more (max_connections=%d): lower {users} or raise max_connections",
			users, need, max(limit.Available, 0), limit.Max)
	}
	return nil
}

// checkStatements refuses, before any user connects, a run whose sessions would
// prepare more statements than the server allows (MariaDB's max_prepared_stmt_count,
// 16,382 by default: 3,276 procedures-mode users). Like checkConnections, an engine
// without such a limit, or one that cannot tell, is not checked here.
func checkStatements(ctx context.Context, db Database, users int, mode engine.Mode) error {
	sl, ok := db.(engine.StatementLimiter)
	if !ok {
		return nil
	}
	limit, err := sl.StatementLimit(ctx, mode)
	if err != nil {
		return nil
	}
	if need := users * limit.PerSession; need > limit.Available {
		return input.Errorf("users", "%d users prepare %d statements (%d a session in %s mode) but the server allows %d more (max_prepared_stmt_count=%d): lower {users} or raise max_prepared_stmt_count",
			users, need, limit.PerSession, mode, max(limit.Available, 0), limit.Max)
	}
	return nil
}

// foreignBuild says what a run on a database storbench did not build can know and
// do. The procedures mode cannot run there: its stored procedures come with
// storbench's build, and storbench adds nothing to a database it did not build; a run
// that named no mode takes sql there, and says so.
// HammerDB's build is recognised (engine.HammerDBBuild): its C-Load is known.
func foreignBuild(info *engine.BuildInfo, cfg *Config) ([]string, error) {
	by := "another tool"
	if info.BuiltBy != "" {
		by = info.BuiltBy
	}
	var notes []string
	switch cfg.Mode {
	case engine.Procedures:
		return nil, input.Errorf("mode", "this database was built by %s, not storbench, so it has none of storbench's stored procedures (which storbench does not add to a database it did not build): run it in {mode} sql", by)
	case engine.Best:
		cfg.Mode = engine.SQL
		notes = append(notes, fmt.Sprintf("mode sql: the database was built by %s, so it has none of storbench's stored procedures", by))
	}
	if info.BuiltBy != engine.BuiltByHammerDB {
		info.CLoad = -1
		return append(notes, "database not built by storbench: C-Load for c_last unknown, so C-Run could not be checked against 2.1.6.1"), nil
	}
	note := fmt.Sprintf("database built by HammerDB (its routines, no storbench build record): C-Load %d, its loader's constant, C-Run drawn against it", info.CLoad)
	if cfg.Inputs != tpcc.HammerDBInputs {
		note += "; the inputs stay the spec's (--inputs hammerdb takes HammerDB's)"
	}
	return append(notes, note), nil
}

// runConstants picks the run's C values; an unknown C-Load (-1) skips 2.1.6.1.
func runConstants(r *tpcc.Rand, cLoad int) tpcc.Constants {
	if cLoad < 0 {
		return tpcc.RunConstants(r, r.Int(0, tpcc.ALast))
	}
	return tpcc.RunConstants(r, cLoad)
}

// openUsers connects every user before anything runs, so a run never starts with
// fewer users than asked (e.g. past max_connections): it fails whole instead.
func openUsers(ctx context.Context, db Database, cfg Config, rules *tpcc.InputRules, warehouses int, c tpcc.Constants) ([]*user, []*shard, error) {
	nShards := min(cfg.Users, 4*runtime.GOMAXPROCS(0))
	shards := make([]*shard, nShards)
	for i := range shards {
		shards[i] = newShard(cfg.Rate > 0)
	}
	users := make([]*user, cfg.Users)
	connect := func(ctx context.Context) (engine.Session, error) { return db.Connect(ctx, cfg.Mode) }
	// Eight at a time: a server forks a backend per connection, and thousands at
	// once only queue in its listen backlog. The first failure stops the others.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i := range users {
		r := tpcc.RunRand(cfg.Seed, i+1)
		home, district := rules.Home(r, i, warehouses)
		u := &user{
			id:        i,
			gen:       tpcc.NewInputsOf(rules, r, c, warehouses),
			deck:      tpcc.NewDeck(r),
			home:      home,
			district:  district,
			shard:     shards[i%nShards],
			reconnect: connect,
		}
		if cfg.AllWarehouses {
			u.homes = homesOf(i, cfg.Users, warehouses)
		}
		users[i] = u
		g.Go(func() error {
			s, err := connect(gctx)
			switch {
			case errors.Is(err, input.ErrInvalid):
				// What the user must fix (the database, the mode), not the server's limit.
				return fmt.Errorf("open session for user %d of %d: %w", i+1, cfg.Users, err)
			case err != nil:
				return fmt.Errorf("open session for user %d of %d (is max_connections high enough?): %w", i+1, cfg.Users, err)
			}
			u.session = s
			if cfg.Rate > 0 {
				if u.waker, err = newWaker(); err != nil {
					return fmt.Errorf("user %d of %d: %w (each open-loop user holds one: raise the open-file limit, ulimit -n)", i+1, cfg.Users, err)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		for _, u := range users {
			if u != nil {
				u.close()
			}
		}
		return nil, nil, err
	}
	return users, shards, nil
}

// homesOf deals the warehouses round-robin over the users: user i of n gets every
// n-th warehouse starting at i+1 (and, with more users than warehouses, shares one).
func homesOf(i, users, warehouses int) []int {
	var homes []int
	for w := i%warehouses + 1; w <= warehouses; w += users {
		homes = append(homes, w)
	}
	return homes
}

// window is what the watcher measured at the window's edges.
type window struct {
	before, after engine.Counters
	cpuBefore     cpuReading
	cpuAfter      cpuReading
	timeline      []Second
	// end is when the window ended: its planned end (or its longest, run until
	// steady), when judged steady, or the interruption.
	end time.Time
	// interrupted is why the window was cut short: ctx's error, or a full storage.
	interrupted error
	// countersLost is why the database counters could not be read at the window's
	// end (after is then before, moved to the end): the client's counts stand in.
	countersLost error
	// arrivals are an open-loop run's schedule counts at the window's end, and
	// backlog the arrivals of the window no user had started by then.
	arrivals scheduleCounts
	backlog  int64
}

// counterTimeout bounds one read of the database counters at a window edge: a
// stalled server must fail the run, not hang it; a slow one (a storage stall of
// seconds at the window's end) still answers within it, whatever the patience left
// for retries after failures. readMin is the one read an interrupted run makes.
const (
	counterTimeout = 30 * time.Second
	readMin        = 2 * time.Second
)

// startPatience is how long the window's start waits for a server that is down
// (being restarted) to answer again: nothing is measured yet. endPatience, shorter,
// at the window's end: what was measured is kept whether the server answers or not
// (a server killed and not restarted, a full disk keeping it down), and an operator
// is waiting.
const (
	startPatience = 60 * time.Second
	endPatience   = 5 * time.Second
)

// watch samples every second (progress and timeline), reads the database counters and
// this process's CPU time at the window's start and end, and returns at the end, with
// the last second sampled too.
func (r *run) watch(ctx context.Context, shards []*shard) (*window, error) {
	w := &window{}
	s := sampler{r: r, shards: shards, lastAt: r.start, iv: newHistogram()}
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	startTimer := time.NewTimer(time.Until(r.windowStart))
	defer startTimer.Stop()
	endTimer := time.NewTimer(time.Until(r.windowEnd))
	defer endTimer.Stop()
	for {
		select {
		case <-ctx.Done():
			return r.interrupt(ctx, w, &s, ctx.Err())
		case <-startTimer.C:
			w.cpuBefore = readCPU()
			c, err := r.counters(ctx, startPatience)
			if err != nil {
				return nil, fmt.Errorf("read database counters at the window's start: %w", err)
			}
			w.before = c
		case now := <-endTimer.C:
			w.cpuAfter = readCPU()
			w.end = r.windowEnd
			// The last second, unless the ticker sampled it an instant ago: its
			// rates over a few microseconds would be noise (or, to the same
			// nanosecond, not a number).
			if now.Sub(s.lastAt) >= minSample {
				w.timeline = append(w.timeline, s.sample(now))
			}
			r.arrivalsAt(w)
			// The window is measured: a server that does not answer (or Ctrl-C while
			// waiting for it) loses the database's figures only.
			r.readAfter(ctx, w, endPatience)
			return w, nil
		case now := <-ticker.C:
			sec := s.sample(now)
			w.timeline = append(w.timeline, sec)
			if err := r.storageFailure(sec); err != nil {
				return r.interrupt(ctx, w, &s, err)
			}
			if r.steadyEnd(w.timeline) {
				return r.endSteady(ctx, w, now), nil
			}
		}
	}
}

// storageFailure is why the run must stop for its storage: an error the engine
// called a full disk, or failures while the database's storage is nearly full (a
// PostgreSQL that cannot write its WAL restarts, and its clients see only lost
// connections).
func (r *run) storageFailure(sec Second) error {
	if err := r.diskFull.Load(); err != nil {
		return r.cfg.Storage.Explain(r.db, *err, "then run again")
	}
	if sec.Errors > 0 && r.cfg.Storage.Full() {
		return r.cfg.Storage.Explain(r.db, fmt.Errorf("%d transactions failed in the last second", sec.Errors), "then run again")
	}
	return nil
}

// interrupt ends the window now, for cause (the context's error, or a full
// storage): what ran of it is measured, unless it had not started. The database
// counters are read once more, past the cancellation; a server that cannot answer
// (stopped by its full disk) leaves the client's counts to stand in for them.
func (r *run) interrupt(ctx context.Context, w *window, s *sampler, cause error) (*window, error) {
	now := time.Now()
	if w.before.At.IsZero() {
		return nil, cause
	}
	r.cut.Store(now.UnixNano())
	w.cpuAfter = readCPU()
	w.end, w.interrupted = now, cause
	w.timeline = append(w.timeline, s.sample(now))
	r.arrivalsAt(w)
	if ctx.Err() != nil {
		// The operator asked to stop: one short read past the cancellation, no wait.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readMin)
		defer cancel()
		r.readAfter(rctx, w, 0)
		return w, nil
	}
	r.readAfter(ctx, w, endPatience)
	return w, nil
}

// arrivalsAt takes an open-loop run's schedule counts at the window's end.
func (r *run) arrivalsAt(w *window) {
	if r.sched == nil {
		return
	}
	w.arrivals = r.sched.read(w.end)
	w.backlog = r.sched.backlogOfWindow()
}

// readAfter reads the counters the window ends with, at w.end; when the server does
// not answer within patience (or ctx ends), the window keeps its start's counters
// moved to its end, and why they were lost.
func (r *run) readAfter(ctx context.Context, w *window, patience time.Duration) {
	c, err := r.counters(ctx, patience)
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			err = fmt.Errorf("interrupted while waiting for the server: %w", err)
		}
		c = w.before
		c.At, w.countersLost = w.end, err
	}
	w.after = c
}

// A server that is restarting cannot be read: after a failed read the counters are
// read again, with backoff, until patience has passed (a server that is down fails at
// once; one that answers slowly is waited for, up to counterTimeout).
func (r *run) counters(ctx context.Context, patience time.Duration) (engine.Counters, error) {
	deadline := time.Now().Add(patience)
	backoff := 250 * time.Millisecond
	for {
		cctx, cancel := context.WithTimeout(ctx, counterTimeout)
		c, err := r.db.Counters(cctx)
		cancel()
		if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			// The driver's own words: a paused or hung server, not a client timeout.
			err = fmt.Errorf("no reply in %v: the server stopped answering, paused or hung", counterTimeout)
		}
		if err == nil || ctx.Err() != nil || time.Now().Add(backoff).After(deadline) {
			return c, err
		}
		select {
		case <-ctx.Done():
			return c, err
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// minSample is the shortest interval the window's end samples on its own.
const minSample = 10 * time.Millisecond

// sampler turns the shards' cumulative counts into per-second rates.
type sampler struct {
	r      *run
	shards []*shard
	last   progressCounts
	lastAt time.Time
	iv     *hdrhistogram.Histogram
	// buckets are the shards' latency buckets summed at the last sample.
	buckets [tpcc.NumTransactions]LatencyBuckets
	// lastArrivals are an open-loop run's schedule counts at the last sample.
	lastArrivals scheduleCounts
}

// sample covers the time since the previous sample and reports progress.
func (s *sampler) sample(now time.Time) Second {
	var cur progressCounts
	s.iv.Reset()
	s.buckets = [tpcc.NumTransactions]LatencyBuckets{}
	for _, sh := range s.shards {
		c := sh.snapshot(s.iv, &s.buckets)
		cur.completed += c.completed
		cur.newOrders += c.newOrders
		cur.errors += c.errors
	}
	perMin := 60 / now.Sub(s.lastAt).Seconds()
	sec := Second{
		T:      int(now.Sub(s.r.windowStart).Round(time.Second) / time.Second),
		TPM:    float64(cur.completed-s.last.completed) * perMin,
		NOPM:   float64(cur.newOrders-s.last.newOrders) * perMin,
		Errors: cur.errors - s.last.errors,
		Phase:  PhaseTimed,
	}
	if s.r.sched != nil {
		a := s.r.sched.read(now)
		sec.OfferedTPM = float64(a.arrived-s.lastArrivals.arrived) * perMin
		sec.Skipped = a.skipped - s.lastArrivals.skipped
		sec.Backlog = a.backlog
		s.lastArrivals = a
	}
	s.last, s.lastAt = cur, now
	// Second T covers (T-1, T] from the window's start: T <= 0 is ramp-up.
	if sec.T <= 0 {
		sec.Phase = PhaseRamp
	}
	if s.r.cfg.Progress != nil {
		s.r.cfg.Progress(Tick{Elapsed: now.Sub(s.r.start), Phase: sec.Phase, TPM: sec.TPM, NOPM: sec.NOPM,
			NewOrderP95: time.Duration(s.iv.ValueAtQuantile(95)) * time.Microsecond, Errors: sec.Errors,
			OfferedTPM: sec.OfferedTPM, Buckets: &s.buckets})
	}
	return sec
}

// merged are the shards' window statistics folded together.
type merged struct {
	hist    [tpcc.NumTransactions]*hdrhistogram.Histogram
	counts  [tpcc.NumTransactions]txnCounts
	kinds   map[string]int64
	inputs  tpcc.InputStats
	service [tpcc.NumTransactions]*hdrhistogram.Histogram // open-loop
	lag     *hdrhistogram.Histogram                       // open-loop
	late    int64
	busy    time.Duration
}

// mergeShards folds the shards' window statistics together.
func mergeShards(shards []*shard) merged {
	m := merged{kinds: map[string]int64{}, lag: newHistogram()}
	for i := range m.hist {
		m.hist[i], m.service[i] = newHistogram(), newHistogram()
	}
	for _, s := range shards {
		s.mu.Lock()
		for i := range m.hist {
			m.hist[i].Merge(s.hist[i])
			if s.service[i] != nil {
				m.service[i].Merge(s.service[i])
			}
			c := &m.counts[i]
			sc := s.counts[i]
			c.completed += sc.completed
			c.rollbacks += sc.rollbacks
			c.retries += sc.retries
			c.errors += sc.errors
			c.skipped += sc.skipped
		}
		if s.lag != nil {
			m.lag.Merge(s.lag)
		}
		m.late += s.late
		m.busy += s.busy
		for k, v := range s.errorKind {
			m.kinds[k] += v
		}
		m.inputs.Add(&s.inputs)
		s.mu.Unlock()
	}
	return m
}
