package driver

import (
	"context"
	"math"
	"time"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/tpcc"
)

// inputs are a user's reusable input structs: drawing a transaction allocates nothing.
type inputs struct {
	newOrder    tpcc.NewOrderInput
	payment     tpcc.PaymentInput
	orderStatus tpcc.OrderStatusInput
	delivery    tpcc.DeliveryInput
	stockLevel  tpcc.StockLevelInput
}

// user is one virtual user: its own session, deck and input stream.
type user struct {
	id      int
	session engine.Session
	gen     *tpcc.Inputs
	deck    *tpcc.Deck
	// home is the user's warehouse; with all-warehouses, homes are the warehouses it
	// cycles through (HammerDB's "use all warehouses").
	home      int
	homes     []int
	nextHome  int
	district  int // fixed Stock-Level district (2.8.1.1)
	shard     *shard
	in        inputs
	reconnect func(ctx context.Context) (engine.Session, error)
	waker     *waker // open-loop runs: how it waits for an arrival
}

func (u *user) warehouse() int {
	if len(u.homes) == 0 {
		return u.home
	}
	w := u.homes[u.nextHome]
	u.nextHome = (u.nextHome + 1) % len(u.homes)
	return w
}

// loop runs transactions until the run stops it. Errors never end it: they are
// counted, and a lost connection is reopened with backoff. In an open-loop run the
// user takes each transaction's arrival from the run's schedule and waits for it.
func (u *user) loop(ctx context.Context, r *run) {
	for !r.stopping() {
		var due time.Time
		if r.sched != nil {
			due = r.sched.take(time.Now())
			if !r.waitUntil(ctx, u.waker, due) {
				return
			}
		}
		t := u.deck.Next()
		w := u.warehouse()
		u.draw(t, w)
		if r.cfg.Keying && !r.pause(ctx, time.Duration(r.rules.Paces[t].Keying*float64(time.Second))) {
			return
		}
		o, lost := u.transact(ctx, r, t)
		if r.sched != nil {
			// The response time runs from when the transaction was due, as the client
			// of an application would see it; the service time from when a user began.
			o.open, o.service, o.lag = true, o.latency, o.began.Sub(due)
			o.latency = o.end.Sub(due)
			o.busy = r.overlap(o.began, o.end)
		}
		o.inWindow = !o.end.Before(r.windowStart) && o.end.Before(r.windowEnd) && r.beforeCut(o.end)
		u.shard.record(&o, &u.in, r.lateAfter)
		// Reconnect only after recording: the backoff is not the transaction's latency.
		if lost && !u.reopen(ctx, r) {
			return
		}
		if r.cfg.Keying && !r.pause(ctx, thinkTime(u.gen.Rand(), r.rules.Paces[t].MeanThink)) {
			return
		}
	}
}

// transact runs one transaction, retrying serialization failures and deadlocks; lost
// says its connection is gone.
func (u *user) transact(ctx context.Context, r *run, t tpcc.Transaction) (o outcome, lost bool) {
	o.txn = t
	o.began = time.Now()
	for {
		var err error
		o.rolledBack, o.skipped, err = u.execute(ctx, t)
		if err == nil {
			break
		}
		f := r.db.Classify(err)
		if f.Retry && o.retries < r.cfg.MaxRetries {
			o.retries++
			continue
		}
		o.err, o.errKind, lost = err, f.Kind, f.Lost
		if f.DiskFull {
			r.diskFull.CompareAndSwap(nil, &err)
		}
		break
	}
	o.end = time.Now()
	o.latency = o.end.Sub(o.began)
	return o, lost
}

func (u *user) draw(t tpcc.Transaction, w int) {
	switch t {
	case tpcc.NewOrder:
		u.gen.NewOrder(w, &u.in.newOrder)
	case tpcc.Payment:
		u.gen.Payment(w, &u.in.payment)
	case tpcc.OrderStatus:
		u.gen.OrderStatus(w, &u.in.orderStatus)
	case tpcc.Delivery:
		u.gen.Delivery(w, &u.in.delivery)
	case tpcc.StockLevel:
		// 2.8.1.1: Stock-Level always uses the user's own warehouse and district
		// (unless the input rules draw the district per call).
		u.gen.StockLevel(u.home, u.district, &u.in.stockLevel)
	}
}

func (u *user) execute(ctx context.Context, t tpcc.Transaction) (rolledBack bool, skipped int, err error) {
	switch t {
	case tpcc.NewOrder:
		rolledBack, err = u.session.NewOrder(ctx, &u.in.newOrder)
	case tpcc.Payment:
		err = u.session.Payment(ctx, &u.in.payment)
	case tpcc.OrderStatus:
		err = u.session.OrderStatus(ctx, &u.in.orderStatus)
	case tpcc.Delivery:
		skipped, err = u.session.Delivery(ctx, &u.in.delivery)
	case tpcc.StockLevel:
		_, err = u.session.StockLevel(ctx, &u.in.stockLevel)
	}
	return rolledBack, skipped, err
}

// reopen replaces a lost session, retrying with backoff until the run stops.
func (u *user) reopen(ctx context.Context, r *run) bool {
	u.session.Close()
	backoff := 100 * time.Millisecond
	for !r.stopping() {
		s, err := u.reconnect(ctx)
		if err == nil {
			u.session = s
			return true
		}
		if !r.pause(ctx, backoff) {
			break
		}
		backoff = min(2*backoff, 5*time.Second)
	}
	u.session = closedSession{}
	return false
}

// thinkTime is the spec's think time: -ln(r) × mean, at most 10 × mean (5.2.5.4).
func thinkTime(r *tpcc.Rand, mean float64) time.Duration {
	s := math.Min(-math.Log(1-r.Float())*mean, 10*mean)
	return time.Duration(s * float64(time.Second))
}

// closedSession stands in for a session that could not be reopened before the end.
type closedSession struct{ engine.Session }

func (closedSession) Close() {}

// close ends the user's session and frees its waker.
func (u *user) close() {
	if u.session != nil {
		u.session.Close()
	}
	u.waker.close()
}
