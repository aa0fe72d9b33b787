package metrics

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/storbench/storbench/internal/engine"
)

// ErrCounterReset is a collector's answer for an interval in which a cumulative
// counter went back: it was reset (a server restart, pg_stat_reset), so the interval
// has no rate; the sample marks it and the window's summary leaves it out.
var ErrCounterReset = errors.New("the counters went back (reset by a server restart or a statistics reset): no rates for this interval")

// databaseCollector reads the database's own activity counters.
type databaseCollector struct {
	db   engine.Observer
	prev engine.Activity
	clock
	prevAt time.Time
	primed bool
	source string // the engine's label of its counters
}

func (c *databaseCollector) Collect(ctx context.Context, s *Sample) error {
	a, err := c.db.Activity(ctx)
	now := c.clock.read()
	if err != nil {
		return err
	}
	// Rates use the collector's own read times, so an interval after a failed read
	// spans the real time since the last good one.
	d, seconds, primed := a.Minus(c.prev), now.Sub(c.prevAt).Seconds(), c.primed
	c.prev, c.prevAt, c.primed, c.source = a, now, true, a.Source
	switch {
	case !primed:
		return nil
	case wentBack(d):
		// The next interval is counted from this reading.
		return ErrCounterReset
	}
	s.Database = databaseFigures(d, seconds)
	return nil
}

// wentBack tells whether any cumulative counter decreased over an interval.
func wentBack(d engine.Activity) bool {
	if min(d.Commits, d.Rollbacks, d.BlocksRead, d.BlocksHit, d.WALBytes, d.Checkpoints, d.TempBytes, d.Fsyncs, d.DataWriteBytes) < 0 {
		return true
	}
	return slices.ContainsFunc(d.Writes, func(w engine.RoleWrite) bool { return w.Bytes < 0 })
}
