package driver

import (
	"context"
	"errors"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/tpcc"
)

var _ Database = (*fakeDB)(nil)

// fakeDB is an engine whose sessions take about a millisecond per transaction, fail
// now and then with a retryable error or a lost connection, and keep exact counters.
// It tests the driver's window, timeline, retries and reconnects without a server.
type fakeDB struct {
	commits, newOrders atomic.Int64 // what "the database" committed
	connects           atomic.Int64
	mu                 sync.Mutex
	completions        []time.Time // when each successful transaction returned
}

var (
	errFakeRetry = errors.New("fake serialization failure")
	errFakeLost  = errors.New("fake connection lost")
)

func (db *fakeDB) Engine() string                                { return "fake" }
func (db *fakeDB) ServerVersion(context.Context) (string, error) { return "fake 1", nil }

func (db *fakeDB) BuildInfo(context.Context) (engine.BuildInfo, error) {
	return engine.BuildInfo{Warehouses: 2, CLoad: 100}, nil
}

func (db *fakeDB) Modes() []engine.Mode { return []engine.Mode{engine.SQL} }

func (db *fakeDB) Connect(context.Context, engine.Mode) (engine.Session, error) {
	db.connects.Add(1)
	return &fakeSession{db: db}, nil
}

func (db *fakeDB) Counters(context.Context) (engine.Counters, error) {
	return engine.Counters{Transactions: db.commits.Load(), NextOrderIDs: db.newOrders.Load(), At: time.Now()}, nil
}

func (db *fakeDB) Classify(err error) engine.Failure {
	switch {
	case errors.Is(err, errFakeRetry):
		return engine.Failure{Retry: true, Kind: "retry"}
	case errors.Is(err, errFakeLost):
		return engine.Failure{Lost: true, Kind: "lost"}
	}
	return engine.Failure{Kind: "other"}
}

type fakeSession struct {
	db    *fakeDB
	calls int
	dead  bool
}

// do is every transaction: the 7th call of a session fails once with a retryable
// error, the 50th loses the connection.
func (s *fakeSession) do(newOrder bool) error {
	if s.dead {
		return errFakeLost
	}
	s.calls++
	time.Sleep(time.Millisecond)
	switch {
	case s.calls%50 == 0:
		s.dead = true
		return errFakeLost
	case s.calls%7 == 0:
		return errFakeRetry
	}
	s.db.commits.Add(1)
	if newOrder {
		s.db.newOrders.Add(1)
	}
	s.db.mu.Lock()
	s.db.completions = append(s.db.completions, time.Now())
	s.db.mu.Unlock()
	return nil
}

func (s *fakeSession) NewOrder(context.Context, *tpcc.NewOrderInput) (bool, error) {
	return false, s.do(true)
}
func (s *fakeSession) Payment(context.Context, *tpcc.PaymentInput) error { return s.do(false) }
func (s *fakeSession) OrderStatus(context.Context, *tpcc.OrderStatusInput) error {
	return s.do(false)
}
func (s *fakeSession) Delivery(context.Context, *tpcc.DeliveryInput) (int, error) {
	return 0, s.do(false)
}
func (s *fakeSession) StockLevel(context.Context, *tpcc.StockLevelInput) (int, error) {
	return 0, s.do(false)
}
func (s *fakeSession) Close() {}

func TestRunWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := &fakeDB{}
		var ticks []Tick
		cfg := Config{Users: 4, Ramp: time.Second, Duration: 2 * time.Second, Seed: 7, ClientCPUs: 1, Progress: func(tk Tick) { ticks = append(ticks, tk) }, Workload: Workload{Mode: engine.SQL, MaxRetries: 3}}
		began := time.Now()
		res, err := Run(context.Background(), db, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(began); took > 5*time.Second {
			t.Errorf("a 3 s run took %v", took)
		}

		// The timeline: one ramp second, then both timed seconds, the last one included.
		var timed []int
		for _, s := range res.Timeline {
			if s.Phase == PhaseTimed {
				timed = append(timed, s.T)
			}
		}
		if len(timed) != 2 || timed[0] != 1 || timed[1] != 2 {
			t.Errorf("timed seconds %v, want [1 2]; timeline %+v", timed, res.Timeline)
		}
		if len(ticks) != len(res.Timeline) {
			t.Errorf("%d progress ticks for %d timeline seconds", len(ticks), len(res.Timeline))
		}

		// Only transactions that completed inside the window count.
		var completed int64
		for x := range tpcc.NumTransactions {
			completed += res.Transactions.Of(x).Count
		}
		inWindow := 0
		for _, c := range db.completions {
			if !c.Before(res.Start) && c.Before(res.End) {
				inWindow++
			}
		}
		if d := math.Abs(float64(completed - int64(inWindow))); d > 8 {
			t.Errorf("client counted %d transactions in the window, the engine completed %d there", completed, inWindow)
		}
		if got, want := res.TPMClient, float64(completed)/cfg.Duration.Minutes(); got != want {
			t.Errorf("client TPM %.0f, want %.0f (count over the planned window)", got, want)
		}
		// The fake's counters are exact: both views must agree closely.
		if diff := math.Abs(res.NOPMDB-res.NOPMClient) / res.NOPMClient; diff > 0.05 {
			t.Errorf("NOPM db %.0f vs client %.0f", res.NOPMDB, res.NOPMClient)
		}

		// Retries are counted and succeed; lost connections are errors and reconnect.
		var retries, errs int64
		for x := range tpcc.NumTransactions {
			retries += res.Transactions.Of(x).Retries
			errs += res.Transactions.Of(x).Errors
		}
		if retries == 0 {
			t.Error("no retries counted")
		}
		if errs == 0 || res.ErrorsByKind["lost"] != errs {
			t.Errorf("errors %d, by kind %v: want the lost connections", errs, res.ErrorsByKind)
		}
		if db.connects.Load() <= int64(cfg.Users) {
			t.Errorf("%d connects for %d users: lost sessions were not reopened", db.connects.Load(), cfg.Users)
		}
		if res.ErrorsByKind["retry"] != 0 {
			t.Errorf("retried transactions counted as errors: %v", res.ErrorsByKind)
		}
	})
}

// TestRunConnectFailure: a run never starts with fewer users than asked.
func TestRunConnectFailure(t *testing.T) {
	db := &refusingDB{fakeDB: &fakeDB{}, allow: 3}
	_, err := Run(context.Background(), db, Config{Users: 5, Duration: time.Second, ClientCPUs: 1, Workload: Workload{Mode: engine.SQL}})
	if err == nil {
		t.Fatal("run started with 3 of 5 sessions")
	}
}

type refusingDB struct {
	*fakeDB
	allow int64
}

func (db *refusingDB) Connect(ctx context.Context, m engine.Mode) (engine.Session, error) {
	if db.connects.Load() >= db.allow {
		return nil, io.ErrUnexpectedEOF
	}
	return db.fakeDB.Connect(ctx, m)
}

// An interruption inside the timed window returns what ran of it: marked, rates over
// the part that ran, no transaction counted after the cut; before the window, nothing.
func TestRunInterrupted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := &fakeDB{}
		ctx, cancel := context.WithCancel(context.Background())
		cfg := Config{Users: 2, Ramp: 500 * time.Millisecond, Duration: 10 * time.Second, Seed: 3, ClientCPUs: 1, Workload: Workload{Mode: engine.SQL}}
		time.AfterFunc(2*time.Second, cancel)
		began := time.Now()
		res, err := Run(ctx, db, cfg)
		if !errors.Is(err, context.Canceled) || res == nil {
			t.Fatalf("interrupted run: result %v, error %v", res != nil, err)
		}
		if took := time.Since(began); took > 4*time.Second {
			t.Errorf("took %v to stop", took)
		}
		window := res.End.Sub(res.Start)
		if !res.Interrupted || window < time.Second || window > 2*time.Second || len(res.Notes) == 0 {
			t.Errorf("interrupted %v after %v, notes %q", res.Interrupted, window, res.Notes)
		}
		var completed int64
		for x := range tpcc.NumTransactions {
			completed += res.Transactions.Of(x).Count
		}
		db.mu.Lock()
		inWindow := 0
		for _, c := range db.completions {
			if !c.Before(res.Start) && c.Before(res.End) {
				inWindow++
			}
		}
		db.mu.Unlock()
		if d := math.Abs(float64(completed - int64(inWindow))); d > 4 {
			t.Errorf("counted %d transactions in the part that ran, the engine completed %d there", completed, inWindow)
		}
		if got, want := res.TPMClient, float64(completed)/window.Minutes(); math.Abs(got-want) > 1e-6*want {
			t.Errorf("client TPM %.0f, want %.0f (over the part that ran)", got, want)
		}

		ctx, cancel = context.WithCancel(context.Background())
		time.AfterFunc(300*time.Millisecond, cancel)
		if res, err := Run(ctx, db, Config{Users: 1, Ramp: 5 * time.Second, Duration: time.Second, ClientCPUs: 1, Workload: Workload{Mode: engine.SQL}}); res != nil || !errors.Is(err, context.Canceled) {
			t.Errorf("interrupted in the ramp-up: result %v, error %v", res != nil, err)
		}
	})
}

// Runs given the same StartAt measure the same window; one whose users connect after
// it is refused rather than measuring a shorter window.
func TestRunStartAt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now().Add(700 * time.Millisecond)
		cfg := Config{Users: 1, Ramp: time.Hour, Duration: time.Second, ClientCPUs: 1, StartAt: start, Workload: Workload{Mode: engine.SQL}}
		results := make([]*Result, 2)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range results {
			wg.Go(func() { results[i], errs[i] = Run(context.Background(), &fakeDB{}, cfg) })
		}
		wg.Wait()
		for i, res := range results {
			if errs[i] != nil || !res.Start.Equal(start) || !res.End.Equal(start.Add(time.Second)) {
				t.Errorf("run %d: %v, window %v-%v, want from %v", i, errs[i], res.Start, res.End, start)
			}
		}
		cfg.StartAt = time.Now().Add(-time.Second)
		if _, err := Run(context.Background(), &fakeDB{}, cfg); err == nil {
			t.Error("a common start already past was accepted")
		}
	})
}
