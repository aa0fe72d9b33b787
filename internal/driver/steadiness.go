package driver

// Whether a timed window was steady, and a window run until it is.

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/storbench/storbench/internal/steady"
)

// Ways a window run until steady (Config.UntilSteady) ended: its last planned-duration
// seconds judged steady, or at its maximum.
const (
	EndedSteady = "steady"
	EndedAtMax  = "max"
)

// longestWindow is how long the timed window may run.
func (c *Config) longestWindow() time.Duration { return max(c.Duration, c.UntilSteady) }

// plannedSeconds is the planned window in whole seconds: the length of the
// judged part of a window, and of the sliding one a window run until steady is
// judged over.
func plannedSeconds(duration time.Duration) int { return int(math.Round(duration.Seconds())) }

// Judge judges the last planned-duration seconds of a timeline's window (the whole
// window, unless it ran until steady; all of it when the duration is not known).
func Judge(timeline []Second, durationSeconds float64) steady.Verdict {
	var tpm []float64
	for _, s := range timeline {
		if s.T > 0 {
			tpm = append(tpm, s.TPM)
		}
	}
	if n := plannedSeconds(time.Duration(durationSeconds * float64(time.Second))); n > 0 && len(tpm) > n {
		tpm = tpm[len(tpm)-n:]
	}
	return steady.Judge(tpm)
}

// steadyEnd tells whether a window run until steady ends at the second just
// sampled: past its planned duration, it is judged every bucket of seconds
// (steady.BucketSeconds) over its last planned-duration seconds, and ends once
// those are steady.
func (r *run) steadyEnd(timeline []Second) bool {
	if r.cfg.UntilSteady == 0 {
		return false
	}
	t := timeline[len(timeline)-1].T
	if r.nextJudged == 0 {
		r.nextJudged = plannedSeconds(r.cfg.Duration)
	}
	if t < r.nextJudged {
		return false
	}
	r.nextJudged = t + steady.BucketSeconds
	return Judge(timeline, r.cfg.Duration.Seconds()).Steady
}

// endSteady ends a window run until steady at now, its last planned-duration
// seconds judged steady: transactions completing later do not count. (A tick read
// past the window's longest end ends it there, at its max.)
func (r *run) endSteady(ctx context.Context, w *window, now time.Time) *window {
	if now.After(r.windowEnd) {
		now = r.windowEnd
	}
	r.cut.Store(now.UnixNano())
	w.cpuAfter = readCPU()
	w.end = now
	r.arrivalsAt(w)
	r.readAfter(ctx, w, endPatience)
	return w
}

// steadiness judges the window, and says so in the notes when it was unsteady or
// ran until steady.
func (res *Result) steadiness(w *window, cfg Config, r *run) {
	v := Judge(w.timeline, cfg.Duration.Seconds())
	res.Steadiness = &v
	ran := res.End.Sub(res.Start)
	if cfg.UntilSteady > 0 && w.interrupted == nil {
		res.UntilSteadyEnded = EndedAtMax
		if w.end.Before(r.windowEnd) {
			res.UntilSteadyEnded = EndedSteady
			res.Notes = append(res.Notes, fmt.Sprintf("the timed window ran %.0f s until steady (planned %.0f s, at most %.0f s): every figure is over all of it, the steadiness verdict over its last %d s",
				ran.Seconds(), cfg.Duration.Seconds(), cfg.UntilSteady.Seconds(), v.Seconds))
		} else {
			res.Notes = append(res.Notes, fmt.Sprintf("the timed window ran %.0f s, its longest, without becoming steady (planned %.0f s)", ran.Seconds(), cfg.Duration.Seconds()))
		}
	}
	if v.Unsteady() {
		res.Notes = append(res.Notes, "the timed window was not steady ("+v.Why+"): its figures are a mean over a changing rate, and the report names no winner from it (docs/steadiness.md)")
	}
}
