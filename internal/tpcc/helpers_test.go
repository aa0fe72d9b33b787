package tpcc

import (
	"math"
	"math/bits"
	"testing"
)

// nurandPMF returns the exact distribution of NURand(a, x, y, c) (2.1.6) indexed by
// value-x, for an A of the form 2^k-1 (all three spec constants are). For a given
// random(x, y) draw v, random(0, A)|v takes each superset s of v's low k bits with
// probability 2^popcount(v&A) / 2^k, so enumerating supersets gives the exact law
// without the (A+1)·(y-x+1) double loop.
func nurandPMF(t testing.TB, a, x, y, c int) []float64 {
	t.Helper()
	if a&(a+1) != 0 {
		t.Fatalf("nurandPMF: A=%d is not 2^k-1", a)
	}
	n := y - x + 1
	p := make([]float64, n)
	base := 1 / float64(n) / float64(a+1)
	for v := x; v <= y; v++ {
		low := v & a
		high := v &^ a
		w := base * float64(uint64(1)<<bits.OnesCount(uint(low)))
		for s := low; ; s = (s + 1) | low {
			p[((high|s)+c)%n] += w
			if s == a {
				break
			}
		}
	}
	return p
}

// tvd is the total variation distance between a histogram of counts (normalised) and
// a probability vector of the same length.
func tvd(counts []int, p []float64) float64 {
	var total int
	for _, c := range counts {
		total += c
	}
	var d float64
	for i, c := range counts {
		d += math.Abs(float64(c)/float64(total) - p[i])
	}
	return d / 2
}

func uniformPMF(n int) []float64 {
	p := make([]float64, n)
	for i := range p {
		p[i] = 1 / float64(n)
	}
	return p
}

// within fails the test when got is outside [lo, hi].
func within(t testing.TB, what string, got, lo, hi float64) {
	t.Helper()
	if got < lo || got > hi {
		t.Errorf("%s = %.4f, want within [%.4f, %.4f]", what, got, lo, hi)
	}
}

func pct(n, of int) float64 { return 100 * float64(n) / float64(of) }

func isAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func TestNURandPMFHelper(t *testing.T) {
	// The helper must agree with the brute-force definition, or the tests using it
	// prove nothing.
	for _, tc := range []struct{ a, x, y, c int }{{255, 0, 999, 0}, {255, 0, 999, 77}, {1023, 1, 3000, 500}, {15, 3, 40, 9}} {
		fast := nurandPMF(t, tc.a, tc.x, tc.y, tc.c)
		n := tc.y - tc.x + 1
		slow := make([]float64, n)
		for r1 := 0; r1 <= tc.a; r1++ {
			for r2 := tc.x; r2 <= tc.y; r2++ {
				slow[((r1|r2)+tc.c)%n] += 1 / float64((tc.a+1)*n)
			}
		}
		var sum float64
		for i := range fast {
			sum += fast[i]
			if math.Abs(fast[i]-slow[i]) > 1e-12 {
				t.Fatalf("%+v: pmf[%d] = %g, brute force %g", tc, i, fast[i], slow[i])
			}
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Fatalf("%+v: pmf sums to %g", tc, sum)
		}
	}
}
