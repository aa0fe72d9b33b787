package tpcc

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The three NURand uses of 2.1.6.
var nurandFields = []struct {
	name    string
	a, x, y int
}{
	{"c_last", ALast, 0, 999},
	{"c_id", ACID, 1, CustomersPerDistrict},
	{"ol_i_id", AItemID, 1, Items},
}

func TestNURandConstants(t *testing.T) {
	// 2.1.6: A is 255 for C_LAST, 1023 for C_ID, 8191 for OL_I_ID.
	for _, tc := range []struct {
		name      string
		got, want int
	}{{"ALast", ALast, 255}, {"ACID", ACID, 1023}, {"AItemID", AItemID, 8191}} {
		if tc.got != tc.want {
			t.Errorf("%s = %d, want %d", tc.name, tc.got, tc.want)
		}
	}
}

func TestIntInclusiveBounds(t *testing.T) {
	for _, tc := range []struct{ lo, hi int }{{0, 0}, {1, 10}, {0, 255}, {5, 15}, {-3, 3}, {100, 500000}} {
		r := NewRand(7, uint64(tc.hi))
		lo, hi := tc.hi, tc.lo
		for range 20000 {
			v := r.Int(tc.lo, tc.hi)
			if v < tc.lo || v > tc.hi {
				t.Fatalf("Int(%d, %d) = %d", tc.lo, tc.hi, v)
			}
			lo, hi = min(lo, v), max(hi, v)
		}
		// Both bounds are inclusive (2.1.5); a small range must reach both.
		if tc.hi-tc.lo <= 255 && (lo != tc.lo || hi != tc.hi) {
			t.Errorf("Int(%d, %d) covered only [%d, %d]", tc.lo, tc.hi, lo, hi)
		}
	}
}

func TestPercent(t *testing.T) {
	for _, p := range []int{0, 1, 10, 15, 60, 100} {
		r := NewRand(3, uint64(p))
		const n = 200000
		hits := 0
		for range n {
			if r.Percent(p) {
				hits++
			}
		}
		within(t, "Percent share", pct(hits, n), float64(p)-0.4, float64(p)+0.4)
		if p == 0 && hits != 0 || p == 100 && hits != n {
			t.Errorf("Percent(%d) hit %d of %d", p, hits, n)
		}
	}
}

func TestNURandWithinRange(t *testing.T) {
	for _, f := range nurandFields {
		for _, c := range []int{0, 1, f.a / 2, f.a} {
			r := NewRand(11, uint64(c))
			seenLo, seenHi := f.y, f.x
			for range 100000 {
				v := r.NURand(f.a, f.x, f.y, c)
				if v < f.x || v > f.y {
					t.Fatalf("%s: NURand(%d, %d, %d, C=%d) = %d, out of range", f.name, f.a, f.x, f.y, c, v)
				}
				seenLo, seenHi = min(seenLo, v), max(seenHi, v)
			}
			// The whole range is used, not just [x, x+A].
			if seenHi-seenLo < (f.y-f.x)*9/10 {
				t.Errorf("%s C=%d: values only span [%d, %d]", f.name, c, seenLo, seenHi)
			}
		}
	}
}

// TestNURandIsTheSpecFormula replays the same stream and checks NURand is exactly
// (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x, whichever of the two draws
// comes first. It catches random(0, A-1) (a known deviation for ol_i_id) that no
// statistical test of a sane size can see.
func TestNURandIsTheSpecFormula(t *testing.T) {
	for _, f := range nurandFields {
		for _, c := range []int{0, 37, f.a} {
			r := NewRand(5, 99)
			refA, refB := NewRand(5, 99), NewRand(5, 99) // A-draw first / range-draw first
			okA, okB := true, true
			n := f.y - f.x + 1
			for range 20000 {
				got := r.NURand(f.a, f.x, f.y, c)
				u := refA.Int(0, f.a)
				v := refA.Int(f.x, f.y)
				if got != ((u|v)+c)%n+f.x {
					okA = false
				}
				v = refB.Int(f.x, f.y)
				u = refB.Int(0, f.a)
				if got != ((u|v)+c)%n+f.x {
					okB = false
				}
			}
			if !okA && !okB {
				t.Errorf("%s C=%d: NURand does not follow the formula of 2.1.6", f.name, c)
			}
		}
	}
}

// TestNURandDistribution compares the empirical law with the exact one: it is close to
// it, far from uniform, and far from the law of another C.
func TestNURandDistribution(t *testing.T) {
	for _, f := range nurandFields {
		t.Run(f.name, func(t *testing.T) {
			const c = 17
			n := f.y - f.x + 1
			draws := 200000
			if n > 10000 {
				draws = 1000000
			}
			r := NewRand(13, uint64(n))
			counts := make([]int, n)
			for range draws {
				counts[r.NURand(f.a, f.x, f.y, c)-f.x]++
			}
			exact := nurandPMF(t, f.a, f.x, f.y, c)
			if d := tvd(counts, exact); d > 0.15 {
				t.Errorf("distance to the exact NURand law = %.3f, want <= 0.15", d)
			}
			if d := tvd(counts, uniformPMF(n)); d < 0.35 {
				t.Errorf("distance to uniform = %.3f, want >= 0.35 (NURand is not uniform)", d)
			}
			if d := tvd(counts, nurandPMF(t, f.a, f.x, f.y, c+1)); d < 0.35 {
				t.Errorf("distance to the law with C+1 = %.3f, want >= 0.35 (C must shift the law)", d)
			}
			// Hot values: the most frequent value is drawn far more often than 1/n.
			top := slices.Max(counts)
			if ratio := float64(top) * float64(n) / float64(draws); ratio < 10 {
				t.Errorf("most frequent value drawn %.1fx the uniform rate, want >= 10x", ratio)
			}
		})
	}
}

// TestNURandCShift checks C rotates the law: with the same draws, NURand with C is
// NURand with 0 shifted by C modulo the range.
func TestNURandCShift(t *testing.T) {
	for _, f := range nurandFields {
		n := f.y - f.x + 1
		for _, c := range []int{1, 100, f.a} {
			r0, rc := NewRand(21, 1), NewRand(21, 1)
			for i := range 5000 {
				v0 := r0.NURand(f.a, f.x, f.y, 0)
				vc := rc.NURand(f.a, f.x, f.y, c)
				if want := (v0-f.x+c)%n + f.x; vc != want {
					t.Fatalf("%s draw %d: NURand C=%d gave %d, C=0 gave %d, want %d", f.name, i, c, vc, v0, want)
				}
			}
		}
	}
}

func TestValidCDelta(t *testing.T) {
	// 2.1.6.1: |C-Run - C-Load| in 65..119, excluding 96 and 112.
	for d := -300; d <= 300; d++ {
		ad := max(d, -d)
		want := ad >= 65 && ad <= 119 && ad != 96 && ad != 112
		for _, cLoad := range []int{0, 100, 255} {
			if got := ValidCDelta(cLoad, cLoad+d); got != want {
				t.Errorf("ValidCDelta(%d, %d) (delta %d) = %v, want %v", cLoad, cLoad+d, d, got, want)
			}
		}
	}
	for _, tc := range []struct {
		cLoad, cRun int
		want        bool
	}{
		{0, 0, false}, {0, 64, false}, {0, 65, true}, {0, 95, true}, {0, 96, false}, {0, 97, true},
		{0, 111, true}, {0, 112, false}, {0, 113, true}, {0, 119, true}, {0, 120, false},
		{200, 135, true}, {200, 136, false}, {200, 104, false}, {200, 88, false}, {200, 81, true}, {200, 80, false},
	} {
		if got := ValidCDelta(tc.cLoad, tc.cRun); got != tc.want {
			t.Errorf("ValidCDelta(%d, %d) = %v, want %v", tc.cLoad, tc.cRun, got, tc.want)
		}
	}
}

func TestValidCRuns(t *testing.T) {
	for cLoad := 0; cLoad <= ALast; cLoad++ {
		var want []int
		for c := 0; c <= ALast; c++ {
			if ValidCDelta(cLoad, c) {
				want = append(want, c)
			}
		}
		got := ValidCRuns(cLoad)
		if len(got) == 0 || !slices.Equal(got, want) {
			t.Fatalf("ValidCRuns(%d) = %v, want %v", cLoad, got, want)
		}
	}
}

// TestRunConstantsExhaustive draws run constants for every possible C-Load (0..255).
func TestRunConstantsExhaustive(t *testing.T) {
	r := NewRand(17, 3)
	minID, maxID, minItem, maxItem := ACID, 0, AItemID, 0
	for cLoad := 0; cLoad <= ALast; cLoad++ {
		seen := map[int]bool{}
		for range 200 {
			c := RunConstants(r, cLoad)
			if c.CLast < 0 || c.CLast > ALast || !ValidCDelta(cLoad, c.CLast) {
				t.Fatalf("RunConstants(cLoad=%d).CLast = %d: invalid C-Run (delta %d)", cLoad, c.CLast, c.CLast-cLoad)
			}
			if c.CID < 0 || c.CID > ACID {
				t.Fatalf("RunConstants(cLoad=%d).CID = %d, want 0..%d", cLoad, c.CID, ACID)
			}
			if c.ItemID < 0 || c.ItemID > AItemID {
				t.Fatalf("RunConstants(cLoad=%d).ItemID = %d, want 0..%d", cLoad, c.ItemID, AItemID)
			}
			seen[c.CLast] = true
			minID, maxID = min(minID, c.CID), max(maxID, c.CID)
			minItem, maxItem = min(minItem, c.ItemID), max(maxItem, c.ItemID)
		}
		// C-Run is random among the valid ones, not always the same.
		if len(seen) < 10 {
			t.Errorf("cLoad=%d: only %d distinct C-Run values in 200 draws", cLoad, len(seen))
		}
	}
	// C_ID and OL_I_ID constants range over all of 0..A (2.1.6).
	if minID != 0 || maxID != ACID {
		t.Errorf("CID covered [%d, %d], want [0, %d]", minID, maxID, ACID)
	}
	if minItem > 10 || maxItem < AItemID-10 {
		t.Errorf("ItemID covered [%d, %d], want about [0, %d]", minItem, maxItem, AItemID)
	}
}

func TestLoadConstants(t *testing.T) {
	a, b := LoadConstants(1), LoadConstants(1)
	if a != b {
		t.Errorf("LoadConstants not deterministic: %+v vs %+v", a, b)
	}
	distinct := map[Constants]bool{}
	for seed := range uint64(200) {
		c := LoadConstants(seed)
		if c.CLast < 0 || c.CLast > ALast || c.CID < 0 || c.CID > ACID || c.ItemID < 0 || c.ItemID > AItemID {
			t.Fatalf("LoadConstants(%d) = %+v out of range", seed, c)
		}
		distinct[c] = true
	}
	if len(distinct) < 190 {
		t.Errorf("LoadConstants gave %d distinct values over 200 seeds", len(distinct))
	}
}

func TestAppendAString(t *testing.T) {
	for _, tc := range []struct{ lo, hi int }{{2, 2}, {6, 10}, {14, 24}, {24, 24}, {300, 500}} {
		r := NewRand(23, uint64(tc.lo))
		lens := map[int]bool{}
		for range 5000 {
			b := r.AppendAString([]byte("pre"), tc.lo, tc.hi)
			if string(b[:3]) != "pre" {
				t.Fatalf("AppendAString clobbered the prefix: %q", b[:3])
			}
			s := string(b[3:])
			if len(s) < tc.lo || len(s) > tc.hi || !isAlnum(s) {
				t.Fatalf("AppendAString(%d, %d) = %q", tc.lo, tc.hi, s)
			}
			lens[len(s)] = true
		}
		if len(lens) != tc.hi-tc.lo+1 {
			t.Errorf("AppendAString(%d, %d) produced %d distinct lengths, want %d", tc.lo, tc.hi, len(lens), tc.hi-tc.lo+1)
		}
	}
}

// TestAStringCharsUniform checks every position (across several 64-bit draws) uses
// all 62 characters evenly.
func TestAStringCharsUniform(t *testing.T) {
	const n, length = 62000, 20
	r := NewRand(29, 1)
	var counts [length][256]int
	for range n {
		s := r.AppendAString(nil, length, length)
		for i := range length {
			counts[i][s[i]]++
		}
	}
	for i := range length {
		for _, c := range []byte(alphanumeric) {
			within(t, fmt.Sprintf("a-string position %d share of %q (%%)", i+1, c), pct(counts[i][c], n), 100.0/62-0.3, 100.0/62+0.3)
		}
	}
}

// TestNStringDigitsUniform checks every digit position of a long n-string is uniform.
func TestNStringDigitsUniform(t *testing.T) {
	const n, length = 40000, 40
	r := NewRand(31, 1)
	var counts [length][10]int
	for range n {
		s := r.AppendNString(nil, length, length)
		if len(s) != length || !isDigits(string(s)) {
			t.Fatalf("AppendNString(%d, %d) = %q", length, length, s)
		}
		for i := range length {
			counts[i][s[i]-'0']++
		}
	}
	for i := range length {
		for d := range 10 {
			if share := pct(counts[i][d], n); share < 9 || share > 11 {
				t.Errorf("n-string position %d: digit %d share %.2f%%, want 10%% +- 1", i+1, d, share)
			}
		}
	}
}

func TestAppendNStringLengths(t *testing.T) {
	for _, tc := range []struct{ lo, hi int }{{4, 4}, {16, 16}, {1, 30}} {
		r := NewRand(37, uint64(tc.hi))
		for range 2000 {
			s := string(r.AppendNString(nil, tc.lo, tc.hi))
			if len(s) < tc.lo || len(s) > tc.hi || !isDigits(s) {
				t.Fatalf("AppendNString(%d, %d) = %q", tc.lo, tc.hi, s)
			}
		}
	}
}

func TestAppendData(t *testing.T) {
	// 4.3.3.1: i_data / s_data are a-strings of 26..50, 10% containing "ORIGINAL".
	const n = 100000
	r := NewRand(41, 1)
	orig := 0
	lens := map[int]int{}
	for range n {
		b := r.AppendData([]byte("x"))
		s := string(b[1:])
		if b[0] != 'x' || len(s) < 26 || len(s) > 50 || !isAlnum(s) {
			t.Fatalf("AppendData = %q", b)
		}
		if strings.Contains(s, "ORIGINAL") {
			orig++
		}
		lens[len(s)]++
	}
	within(t, "ORIGINAL share %", pct(orig, n), 9.4, 10.6)
	if len(lens) != 25 {
		t.Errorf("data lengths used: %d, want all 25 of 26..50", len(lens))
	}
}

func TestAppendZip(t *testing.T) {
	r := NewRand(43, 1)
	firsts := map[string]bool{}
	for range 20000 {
		z := string(r.AppendZip(nil))
		if len(z) != 9 || !isDigits(z[:4]) || z[4:] != "11111" {
			t.Fatalf("AppendZip = %q, want 4 digits then 11111", z)
		}
		firsts[z[:4]] = true
	}
	if len(firsts) < 8000 {
		t.Errorf("only %d distinct zip prefixes in 20000 draws", len(firsts))
	}
}

func TestPerm(t *testing.T) {
	r := NewRand(47, 1)
	for _, n := range []int{1, 2, 10, 3000} {
		p := r.Perm(n)
		s := slices.Clone(p)
		slices.Sort(s)
		for i, v := range s {
			if v != i+1 {
				t.Fatalf("Perm(%d) is not a permutation of 1..%d: sorted[%d] = %d", n, n, i, v)
			}
		}
	}
	a, b := r.Perm(3000), r.Perm(3000)
	if slices.Equal(a, b) {
		t.Error("two Perm(3000) draws are equal")
	}
}

func TestRandStreamsIndependent(t *testing.T) {
	// Same seed and stream: same values. Different stream or seed: different values.
	draw := func(seed, stream uint64) []int {
		r := NewRand(seed, stream)
		out := make([]int, 50)
		for i := range out {
			out[i] = r.Int(0, 1<<30)
		}
		return out
	}
	if !slices.Equal(draw(1, 2), draw(1, 2)) {
		t.Error("same seed and stream gave different values")
	}
	if slices.Equal(draw(1, 2), draw(1, 3)) {
		t.Error("different streams gave the same values")
	}
	if slices.Equal(draw(1, 2), draw(2, 2)) {
		t.Error("different seeds gave the same values")
	}
}

// TestRunStreamsApartFromBuild: a run given the build's seed draws nothing the build
// drew. Before, user 0 took stream 1 of the seed, the build's C-Load stream, so its
// first NURand C for c_last was C-Load itself.
func TestRunStreamsApartFromBuild(t *testing.T) {
	const warehouses = 100
	first := func(r *Rand) [2]uint64 { return [2]uint64{r.r.Uint64(), r.r.Uint64()} }
	for _, seed := range []uint64{1, 7, 42} {
		build := map[[2]uint64]uint64{}
		for s := uint64(streamConstants); s < streamWarehouseBase+(warehouses+1)*(uint64(numTables)+1); s++ {
			build[first(NewRand(seed, s))] = s
		}
		for n := range 1000 {
			if s, ok := build[first(RunRand(seed, n))]; ok {
				t.Fatalf("seed %d: run stream %d replays the build's stream %d", seed, n, s)
			}
		}
	}
}
