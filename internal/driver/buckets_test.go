package driver

import "testing"

// A response time counts once, in the first bucket whose bound it does not pass:
// a bound's own value is in that bucket, above the last bound in the overflow one.
func TestLatencyBucketsCountEachOnce(t *testing.T) {
	var b LatencyBuckets
	for _, us := range []int64{1, 500, 501, 10_000_000, 10_000_001} {
		b.add(us)
	}
	want := map[int]int64{0: 2, 1: 1, len(LatencyBounds) - 1: 1, len(LatencyBounds): 1}
	for i, n := range b.Counts {
		if n != want[i] {
			t.Errorf("bucket %d: %d, want %d", i, n, want[i])
		}
	}
	if b.SumMicros != 1+500+501+10_000_000+10_000_001 {
		t.Errorf("sum %d µs", b.SumMicros)
	}
	var total LatencyBuckets
	total.plus(&b)
	total.plus(&b)
	if total.Counts[0] != 4 || total.SumMicros != 2*b.SumMicros {
		t.Errorf("two shards' buckets summed: %+v", total)
	}
}
