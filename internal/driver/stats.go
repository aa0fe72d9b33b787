package driver

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/storbench/storbench/internal/tpcc"
)

// Latency histograms count microseconds from 1 µs to 5 minutes with 3 significant
// digits: Stock-Level's 20 s limit (5.2.5.4) is well inside, and nothing is clamped.
const (
	histMin     = 1
	histMax     = int64(histMaxDuration / time.Microsecond)
	histSigFigs = 3
	// histMaxDuration is the longest latency recorded as itself.
	histMaxDuration = 5 * time.Minute
)

func newHistogram() *hdrhistogram.Histogram { return hdrhistogram.New(histMin, histMax, histSigFigs) }

// shard holds the statistics of a group of virtual users behind one mutex. A
// histogram of this precision is ~160 KB, so thousands of users share a few shards
// instead of holding five histograms each; with users spread over the shards the lock
// is rarely contended.
type shard struct {
	mu sync.Mutex
	// Timed window only.
	hist      [tpcc.NumTransactions]*hdrhistogram.Histogram
	counts    [tpcc.NumTransactions]txnCounts
	errorKind map[string]int64
	inputs    tpcc.InputStats
	// Every phase, read by the ticker for the timeline and progress.
	total      progressCounts
	newOrderIv *hdrhistogram.Histogram // New-Order latencies since the last tick
	// buckets count every completed transaction's response time, by type, for a
	// live endpoint's histograms (Tick.Buckets).
	buckets [tpcc.NumTransactions]LatencyBuckets
	// Open-loop runs only (nil otherwise), timed window: the service times (from
	// when a user began each transaction), the schedule lag (how late it began),
	// the transactions later than the latency limit, and the users' busy time.
	service [tpcc.NumTransactions]*hdrhistogram.Histogram
	lag     *hdrhistogram.Histogram
	late    int64
	busy    time.Duration
}

type txnCounts struct {
	completed, rollbacks, retries, errors, skipped int64
}

// progressCounts are cumulative; the ticker takes differences.
type progressCounts struct {
	completed, newOrders, errors int64
}

func newShard(open bool) *shard {
	s := &shard{errorKind: map[string]int64{}, newOrderIv: newHistogram()}
	for i := range s.hist {
		s.hist[i] = newHistogram()
		if open {
			s.service[i] = newHistogram()
		}
	}
	if open {
		s.lag = newHistogram()
	}
	return s
}

// outcome is one transaction as a virtual user saw it.
type outcome struct {
	txn        tpcc.Transaction
	began, end time.Time
	// latency is the response time: from when the transaction was due in an
	// open-loop run (open), from when the user began it otherwise.
	latency    time.Duration
	open       bool
	service    time.Duration // open: from when the user began it
	lag        time.Duration // open: how late the user began it
	busy       time.Duration // open: the part of it inside the timed window
	inWindow   bool
	err        error
	errKind    string
	retries    int
	rolledBack bool
	skipped    int
}

// record counts one transaction; in an open-loop run with a latency limit, one whose
// response time exceeds lateAfter (>0) counts as late.
func (s *shard) record(o *outcome, in *inputs, lateAfter time.Duration) {
	us := o.latency.Microseconds()
	s.mu.Lock()
	defer s.mu.Unlock()
	if o.err != nil {
		s.total.errors++
	} else {
		s.total.completed++
		if o.txn == tpcc.NewOrder {
			s.total.newOrders++
			s.newOrderIv.RecordValue(clamp(us))
		}
		s.buckets[o.txn].add(us)
	}
	// A user's busy time counts where it overlaps the window, whenever the
	// transaction completed: its share of the window never passes 100%.
	s.busy += o.busy
	if !o.inWindow {
		return
	}
	if o.open {
		s.lag.RecordValue(clamp(o.lag.Microseconds()))
	}
	c := &s.counts[o.txn]
	c.retries += int64(o.retries)
	if o.err != nil {
		c.errors++
		s.errorKind[o.errKind]++
		return
	}
	c.completed++
	c.skipped += int64(o.skipped)
	if o.rolledBack {
		c.rollbacks++
	}
	s.hist[o.txn].RecordValue(clamp(us))
	if o.open {
		s.service[o.txn].RecordValue(clamp(o.service.Microseconds()))
		if lateAfter > 0 && o.latency > lateAfter {
			s.late++
		}
	}
	switch o.txn {
	case tpcc.NewOrder:
		s.inputs.CountNewOrder(&in.newOrder, o.rolledBack)
	case tpcc.Payment:
		s.inputs.CountPayment(&in.payment)
	case tpcc.OrderStatus:
		s.inputs.CountOrderStatus(&in.orderStatus)
	case tpcc.Delivery:
		s.inputs.CountDelivery(o.skipped)
	}
}

// clamp keeps a value inside the histogram's range; only a latency above 5 minutes
// could leave it, and it then counts as 5 minutes (the maximum shows that cap).
func clamp(us int64) int64 {
	return max(histMin, min(us, histMax))
}

// snapshot reads the cumulative progress counts, adds the latency buckets to
// buckets and takes the interval histogram.
func (s *shard) snapshot(into *hdrhistogram.Histogram, buckets *[tpcc.NumTransactions]LatencyBuckets) progressCounts {
	s.mu.Lock()
	defer s.mu.Unlock()
	into.Merge(s.newOrderIv)
	s.newOrderIv.Reset()
	for i := range buckets {
		buckets[i].plus(&s.buckets[i])
	}
	return s.total
}

// LatencyBounds are the upper bounds, in µs, of the buckets in which the driver
// counts each type's response times for a live endpoint (0.5 ms to 10 s: an
// in-memory Order-Status to a Delivery on a saturated disk). Counting one is a few
// comparisons per transaction, where folding a histogram of each second into them
// cost 0.4 ms a type a second.
var LatencyBounds = [...]int64{500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000, 2_000_000, 5_000_000, 10_000_000}

// LatencyBuckets are response times counted since the run began (ramp-up included).
type LatencyBuckets struct {
	// Counts[i] counts those above LatencyBounds[i-1] and up to LatencyBounds[i];
	// the last, those above every bound.
	Counts [len(LatencyBounds) + 1]int64
	// SumMicros is their sum.
	SumMicros int64
}

func (b *LatencyBuckets) add(us int64) {
	i := 0
	for i < len(LatencyBounds) && us > LatencyBounds[i] {
		i++
	}
	b.Counts[i]++
	b.SumMicros += us
}

func (b *LatencyBuckets) plus(o *LatencyBuckets) {
	for i, n := range o.Counts {
		b.Counts[i] += n
	}
	b.SumMicros += o.SumMicros
}
