package metrics

import (
	"math"
	"math/bits"
	"sort"
)

// LatencyHistogram counts I/O latencies in log-linear buckets: 16 buckets per power of
// two, so a bucket's edges are within 1/16 (6.25%) of each other. The bucketing is
// computed inside the kernel by the tracing script (iolatency.bt), which cannot
// collect every value at hundreds of thousands of I/Os per second.
type LatencyHistogram map[int]int64

// latencyBucket is the bucket of a latency of ns nanoseconds: below 16 ns the value
// itself, else 16·⌊log2 ns⌋ + the next four bits below the leading one.
func latencyBucket(ns uint64) int {
	if ns < 16 {
		return int(ns)
	}
	p := bits.Len64(ns) - 1
	return p*16 + int(ns>>(p-4)&15)
}

// bucketUpperNs is the smallest latency above bucket b.
func bucketUpperNs(b int) float64 {
	if b < 16 {
		return float64(b + 1)
	}
	p, sub := b/16, b%16
	return float64(uint64(16+sub+1) << (p - 4))
}

// Add counts another histogram's I/Os.
func (h LatencyHistogram) Add(o LatencyHistogram) {
	for b, n := range o {
		h[b] += n
	}
}

// Count is the number of I/Os counted.
func (h LatencyHistogram) Count() int64 {
	var n int64
	for _, c := range h {
		n += c
	}
	return n
}

// QuantileMs is the upper edge, in ms, of the bucket holding quantile q (0 < q <= 1):
// never lower than the true value, at most 6.25% above it. 0 for an empty histogram.
func (h LatencyHistogram) QuantileMs(q float64) float64 {
	total := h.Count()
	if total == 0 {
		return 0
	}
	buckets := make([]int, 0, len(h))
	for b := range h {
		buckets = append(buckets, b)
	}
	sort.Ints(buckets)
	// The rank of quantile q is ⌈q·total⌉, at least 1.
	rank := max(int64(math.Ceil(q*float64(total))), 1)
	var seen int64
	for _, b := range buckets {
		seen += h[b]
		if seen >= rank {
			return bucketUpperNs(b) / 1e6
		}
	}
	return bucketUpperNs(buckets[len(buckets)-1]) / 1e6
}

// latencyFigures summarises one device's histogram.
func latencyFigures(device string, h LatencyHistogram) Latency {
	return Latency{Device: device, IOs: h.Count(), P50Ms: h.QuantileMs(0.50), P99Ms: h.QuantileMs(0.99),
		P999Ms: h.QuantileMs(0.999), hist: h}
}
