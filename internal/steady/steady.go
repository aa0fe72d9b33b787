// Package steady judges whether a timed window's throughput was steady: its drift
// (the least-squares slope, in % of the mean per minute) and its variation (the
// coefficient of variation of fixed buckets of seconds, less what counting alone
// explains), against thresholds measured on real runs (docs/steadiness.md). A
// window too short to judge says so, and is not called unsteady.
package steady

import (
	"fmt"
	"math"
	"strings"
)

// Thresholds of the rule. docs/steadiness.md gives the runs they were measured on.
const (
	// BucketSeconds: the CV is of the throughput of buckets of this many seconds,
	// not of single seconds, and the slope is fitted to the same buckets: a second
	// holds a tick's jitter and, at low rates, few transactions.
	BucketSeconds = 2
	// MinBuckets: fewer buckets than this are too few to tell a drift or a swing
	// from noise.
	MinBuckets = 10
	// MaxDriftPct bounds the drift: how far the fitted line moves across the
	// judged seconds (the slope times their minutes), in % of the mean. A bound on
	// the slope per minute alone would let a 5-minute window drift five times as
	// far as a 1-minute one. The drift counts only by what it exceeds twice its
	// standard error: a short window on a shared machine fits a slope to noise.
	MaxDriftPct = 10.0
	// MaxCVPct bounds the variation of the buckets: above it the rate swung by a
	// quarter or more, stalls of seconds or a machine busy with other work.
	MaxCVPct = 25.0
)

// MinSeconds is the shortest window judged.
const MinSeconds = BucketSeconds * MinBuckets

// Verdict is the judgement of one window's per-second throughput.
type Verdict struct {
	// SlopePctPerMin is the least-squares slope of the buckets' throughput, in % of
	// the mean per minute; SlopeErrPct its standard error, in the same unit. Times
	// the judged minutes they are the drift and its error (MaxDriftPct).
	SlopePctPerMin float64 `json:"slope_pct_per_min"`
	SlopeErrPct    float64 `json:"slope_err_pct_per_min"`
	// CVPct is the coefficient of variation of the buckets' throughput, in %, less
	// the part counting alone explains (Poisson: 1/√count per bucket).
	CVPct float64 `json:"cv_pct"`
	// Seconds is how many seconds were judged (the last ones of the window).
	Seconds int `json:"seconds"`
	// Steady tells whether the window was steady; TooShort that it was too short to
	// judge (then neither steady nor unsteady).
	Steady   bool `json:"steady"`
	TooShort bool `json:"too_short,omitempty"`
	// NotJudged: the throughput was not counted second by second (another tool's
	// timeline, sampled every 10 s), so the rule cannot be applied: neither steady
	// nor unsteady.
	NotJudged bool `json:"not_judged,omitempty"`
	// Why gives the figures and their limits, or why the window was not judged.
	Why string `json:"why"`
}

// Unsteady tells whether v judged the window unsteady (a window too short to judge,
// or no verdict, is not).
func (v *Verdict) Unsteady() bool { return v != nil && !v.Steady && !v.TooShort && !v.NotJudged }

// Label is the verdict in a few words, for a table cell or a step's line: "steady",
// "UNSTEADY (slope -18%/min)", "UNSTEADY (CV 41%)", "too short to judge", "not judged".
// String adds Why.
func (v *Verdict) Label() string {
	switch {
	case v == nil:
		return ""
	case v.TooShort:
		return "too short to judge"
	case v.NotJudged:
		return "not judged"
	case v.Steady:
		return "steady"
	}
	var parts []string
	if v.drifted() {
		parts = append(parts, fmt.Sprintf("slope %+.0f%%/min", v.SlopePctPerMin))
	}
	if v.CVPct > MaxCVPct {
		parts = append(parts, fmt.Sprintf("CV %.0f%%", v.CVPct))
	}
	if len(parts) == 0 { // nothing completed
		parts = append(parts, v.Why)
	}
	return "UNSTEADY (" + strings.Join(parts, ", ") + ")"
}

// String is the verdict in one line: its label and its figures.
func (v *Verdict) String() string {
	if v == nil {
		return ""
	}
	return v.Label() + " — " + v.Why
}

// drift is how far the fitted line moves across the judged seconds, and its
// standard error, in % of the mean.
func (v *Verdict) drift() (drift, err float64) {
	minutes := float64(v.Seconds) / 60
	return v.SlopePctPerMin * minutes, v.SlopeErrPct * minutes
}

// drifted: the drift exceeds MaxDriftPct by more than twice its standard error.
func (v *Verdict) drifted() bool {
	d, e := v.drift()
	return math.Abs(d)-2*e > MaxDriftPct
}

// Judge judges a window from its per-second throughput (transactions per minute,
// one value a second, in order). Seconds that completed nothing count: an outage is
// unsteadiness. With more seconds than whole buckets, the first ones are left out:
// the window's end is what is judged.
func Judge(tpm []float64) Verdict {
	n := len(tpm) / BucketSeconds
	if n < MinBuckets {
		return Verdict{Seconds: len(tpm), TooShort: true,
			Why: fmt.Sprintf("%d s, at least %d s needed (%d buckets of %d s)", len(tpm), MinSeconds, MinBuckets, BucketSeconds)}
	}
	tpm = tpm[len(tpm)-n*BucketSeconds:]
	v := Verdict{Seconds: len(tpm)}
	buckets := make([]float64, n)
	var mean float64
	for i := range buckets {
		for _, x := range tpm[i*BucketSeconds : (i+1)*BucketSeconds] {
			buckets[i] += x / BucketSeconds
		}
		mean += buckets[i] / float64(n)
	}
	if mean <= 0 {
		v.Why = fmt.Sprintf("no transaction completed in the last %d s", v.Seconds)
		return v
	}
	// Bucket i covers seconds (i×B, (i+1)×B]: its time is its middle.
	var tMean, sxx, sxy, ss float64
	for i := range buckets {
		tMean += (float64(i) + 0.5) * BucketSeconds / float64(n)
	}
	for i, y := range buckets {
		dt := (float64(i)+0.5)*BucketSeconds - tMean
		sxx += dt * dt
		sxy += dt * (y - mean)
		ss += (y - mean) * (y - mean)
	}
	slope := sxy / sxx // TPM per second
	var resid float64
	for i, y := range buckets {
		r := y - mean - slope*((float64(i)+0.5)*BucketSeconds-tMean)
		resid += r * r
	}
	pct := 100 * 60 / mean // TPM per second → % of the mean per minute
	v.SlopePctPerMin = slope * pct
	v.SlopeErrPct = math.Sqrt(resid/float64(n-2)/sxx) * pct
	// A bucket of c transactions varies by √c from counting alone (a Poisson
	// count): at 100 transactions a second, 1/√200 = 7% over 2 s. That part is
	// no unsteadiness of the system, and is taken out.
	perBucket := mean / 60 * BucketSeconds
	cv2 := ss/float64(n-1)/(mean*mean) - 1/perBucket
	v.CVPct = 100 * math.Sqrt(max(cv2, 0))
	v.Steady = !v.drifted() && v.CVPct <= MaxCVPct
	d, e := v.drift()
	v.Why = fmt.Sprintf("slope %+.1f %%/min, a drift of %+.1f ± %.1f%% over the last %d s; CV %.1f%% of %d s buckets (limits: drift %.0f%% beyond twice its error, CV %.0f%%)",
		v.SlopePctPerMin, d, e, v.Seconds, v.CVPct, BucketSeconds, MaxDriftPct, MaxCVPct)
	return v
}
