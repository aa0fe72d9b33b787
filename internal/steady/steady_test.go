package steady

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// series is seconds of throughput around mean TPM, each second's value rate(t)
// (a share of mean, t from 1) with Gaussian noise of noise (a share of the value).
func series(seconds int, mean, noise float64, rate func(t int) float64) []float64 {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]float64, seconds)
	for i := range out {
		v := mean * rate(i+1)
		out[i] = max(v*(1+noise*r.NormFloat64()), 0)
	}
	return out
}

func flat(int) float64 { return 1 }

// poisson is seconds of throughput of a Poisson process of perSecond transactions a
// second: what a few users with keying and think times complete.
func poisson(seconds int, perSecond float64) []float64 {
	r := rand.New(rand.NewPCG(3, 4))
	out := make([]float64, seconds)
	for i := range out {
		// Knuth's method: fine for a small mean.
		n, p := 0, r.Float64()
		for limit := math.Exp(-perSecond); p > limit; p *= r.Float64() {
			n++
		}
		out[i] = float64(n) * 60
	}
	return out
}

func TestJudge(t *testing.T) {
	for _, c := range []struct {
		name   string
		tpm    []float64
		steady bool
		label  string // a part of Label
	}{
		// 1000 transactions a second, ±5% a second: the noise of a quiet machine.
		{"flat with noise", series(300, 60000, 0.05, flat), true, "steady"},
		{"flat, one minute", series(60, 60000, 0.05, flat), true, "steady"},
		// 2 transactions a second (a few users with keying): a 2 s bucket counts 4,
		// ±50% from counting alone, which is no unsteadiness.
		{"flat, few transactions", poisson(300, 2), true, "steady"},
		// A cache warming up: +20% of the mean a minute.
		{"ramp 20%/min", series(60, 60000, 0.05, func(t int) float64 { return 0.9 + 0.2*float64(t)/60 }), false, "UNSTEADY (slope +"},
		{"ramp 20%/min over 5 minutes", series(300, 60000, 0.05, func(t int) float64 { return 0.5 + 0.2*float64(t)/60 }), false, "slope"},
		// A slow decline a long window must catch: 3%/min is 15% in 5 minutes.
		{"decline 3%/min over 5 minutes", series(300, 60000, 0.05, func(t int) float64 { return 1.075 - 0.03*float64(t)/60 }), false, "slope -3%/min"},
		// Throughput that drops by 40% halfway (a burst credit spent).
		{"step change", series(60, 60000, 0.05, func(t int) float64 { return map[bool]float64{true: 1, false: 0.6}[t <= 30] }), false, "UNSTEADY"},
		// A 6-second outage in the middle of a minute.
		{"outage", series(60, 60000, 0.05, func(t int) float64 { return map[bool]float64{true: 0, false: 1}[t > 27 && t <= 33] }), false, "CV"},
		{"nothing completed", make([]float64, 60), false, "UNSTEADY (no transaction completed in the last 60 s)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := Judge(c.tpm)
			t.Log(v.String())
			if v.Steady != c.steady || v.Unsteady() == c.steady || v.TooShort {
				t.Errorf("steady %v unsteady %v too short %v, want steady %v", v.Steady, v.Unsteady(), v.TooShort, c.steady)
			}
			if !strings.Contains(v.Label(), c.label) {
				t.Errorf("label %q, want it to say %q", v.Label(), c.label)
			}
		})
	}
}

func TestJudgeTooShort(t *testing.T) {
	v := Judge(series(MinSeconds-1, 60000, 0.05, flat))
	if !v.TooShort || v.Steady || v.Unsteady() || v.Label() != "too short to judge" || v.Seconds != MinSeconds-1 {
		t.Errorf("%d s: %+v, label %q; want too short to judge, neither steady nor unsteady", MinSeconds-1, v, v.Label())
	}
	if v := Judge(series(MinSeconds, 60000, 0.05, flat)); v.TooShort {
		t.Errorf("%d s judged too short: %s", MinSeconds, v.String())
	}
	var none *Verdict
	if none.Unsteady() || none.Label() != "" {
		t.Error("no verdict reads as unsteady")
	}
}

// The end of the window is judged: with an odd second, the first is left out.
func TestJudgeLastSeconds(t *testing.T) {
	tpm := append([]float64{0}, series(60, 60000, 0.05, flat)...)
	if v := Judge(tpm); v.Seconds != 60 || !v.Steady {
		t.Errorf("61 s with an idle first second: %s over %d s, want steady over the last 60", v.String(), v.Seconds)
	}
}
