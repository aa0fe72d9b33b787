package tpcc

import (
	"math/rand/v2"
)

// Rand is the random source for generation and inputs. It is a PCG generator, so a
// stream is reproducible from its seed and independent streams can be made per
// warehouse and per table (which lets the load be split across workers).
type Rand struct {
	r *rand.Rand
}

// NewRand returns a generator for one stream of a seed.
func NewRand(seed, stream uint64) *Rand {
	return &Rand{r: rand.New(rand.NewPCG(seed, stream))}
}

// Int returns a uniform integer in [lo, hi] (2.1.5 random(x..y), bounds inclusive).
func (r *Rand) Int(lo, hi int) int {
	return lo + r.r.IntN(hi-lo+1)
}

// Float returns a uniform float in [0, 1).
func (r *Rand) Float() float64 { return r.r.Float64() }

// Percent reports true with probability p/100.
func (r *Rand) Percent(p int) bool { return r.r.IntN(100) < p }

// NURand is the non-uniform random function of 2.1.6:
// (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
func (r *Rand) NURand(a, x, y, c int) int {
	return (((r.Int(0, a) | r.Int(x, y)) + c) % (y - x + 1)) + x
}

// The A constants of 2.1.6.
const (
	ALast   = 255  // c_last, range 0..999
	ACID    = 1023 // c_id, range 1..3000
	AItemID = 8191 // ol_i_id, range 1..100000
)

// Constants are the C values of NURand, one per field, shared by every user (2.1.6).
type Constants struct {
	CLast, CID, ItemID int
}

// LoadConstants draws the constants used to generate the initial data. C-Load for
// c_last must be recorded with the database so that a run can pick a valid C-Run.
func LoadConstants(seed uint64) Constants {
	r := NewRand(seed, streamConstants)
	return Constants{CLast: r.Int(0, ALast), CID: r.Int(0, ACID), ItemID: r.Int(0, AItemID)}
}

// RunConstants draws the constants for a run. C_ID and OL_I_ID are free; C-Run for
// c_last must differ from C-Load by 65..119, but not by 96 or 112 (2.1.6.1).
func RunConstants(r *Rand, cLoad int) Constants {
	valid := ValidCRuns(cLoad)
	return Constants{
		CLast:  valid[r.Int(0, len(valid)-1)],
		CID:    r.Int(0, ACID),
		ItemID: r.Int(0, AItemID),
	}
}

// ValidCRuns lists every C-Run for c_last in 0..255 that 2.1.6.1 allows for cLoad.
func ValidCRuns(cLoad int) []int {
	var out []int
	for c := 0; c <= ALast; c++ {
		if ValidCDelta(cLoad, c) {
			out = append(out, c)
		}
	}
	return out
}

// ValidCDelta reports whether |cRun - cLoad| is in 65..119 and not 96 or 112 (2.1.6.1).
func ValidCDelta(cLoad, cRun int) bool {
	d := cRun - cLoad
	if d < 0 {
		d = -d
	}
	return d >= 65 && d <= 119 && d != 96 && d != 112
}

const alphanumeric = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// AppendAString appends a random a-string of length lo..hi (4.3.2.2). Nine characters
// are taken from each 64-bit draw: 2^64 holds 62^9 over 1300 times, so the bias is
// below 0.1%.
func (r *Rand) AppendAString(b []byte, lo, hi int) []byte {
	n := r.Int(lo, hi)
	for n > 0 {
		x := r.r.Uint64()
		for k := 0; k < 9 && n > 0; k++ {
			b = append(b, alphanumeric[x%62])
			x /= 62
			n--
		}
	}
	return b
}

const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

// AppendLetters appends n random letters, for the columns 4.3.3.1 gives "a-string of
// N letters" (*_STATE, S_DIST_xx, OL_DIST_INFO). Eleven letters are taken from each
// 64-bit draw: 2^64 holds 26^11 over 5000 times, so the bias is below 0.02%.
func (r *Rand) AppendLetters(b []byte, n int) []byte {
	for n > 0 {
		x := r.r.Uint64()
		for k := 0; k < 11 && n > 0; k++ {
			b = append(b, letters[x%26])
			x /= 26
			n--
		}
	}
	return b
}

// AppendNString appends a random numeric string of length lo..hi (4.3.2.2). Sixteen
// digits are taken from each 64-bit draw: 2^64 holds 10^16 over 1800 times, so the bias
// is below 0.1% (with 19 digits the last one was 9 half as often as the others).
func (r *Rand) AppendNString(b []byte, lo, hi int) []byte {
	n := r.Int(lo, hi)
	for n > 0 {
		x := r.r.Uint64()
		for k := 0; k < 16 && n > 0; k++ {
			b = append(b, byte('0'+x%10))
			x /= 10
			n--
		}
	}
	return b
}

// AppendData appends an i_data or s_data value: an a-string of 26..50 characters
// where 10% of rows hold "ORIGINAL" at a random position (4.3.3.1).
func (r *Rand) AppendData(b []byte) []byte {
	start := len(b)
	b = r.AppendAString(b, 26, 50)
	if r.Percent(10) {
		pos := start + r.Int(0, len(b)-start-len("ORIGINAL"))
		copy(b[pos:], "ORIGINAL")
	}
	return b
}

// AppendZip appends a zip code: 4 random digits then "11111" (4.3.2.7).
func (r *Rand) AppendZip(b []byte) []byte {
	b = r.AppendNString(b, 4, 4)
	return append(b, "11111"...)
}

// Perm returns a random permutation of 1..n (used for o_c_id, 4.3.3.1).
func (r *Rand) Perm(n int) []int {
	p := r.r.Perm(n)
	for i := range p {
		p[i]++
	}
	return p
}

// Random streams. Each table of each warehouse has its own stream, so any warehouse
// can be generated alone, by any worker, and give the same rows. A run's streams have
// the top bit set: a run given the build's seed must not replay the build's draws
// (its C for c_last would be C-Load's stream).
const (
	streamConstants = iota + 1
	streamItem
	streamWarehouseBase // + warehouse*numTables + table

	streamRun = 1 << 63 // + n
)

// RunRand returns stream n of a run: 0 for the run's constants, 1.. for its users.
func RunRand(seed uint64, n int) *Rand { return NewRand(seed, streamRun|uint64(n)) }
