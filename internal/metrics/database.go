package metrics

import (
	"context"
	"time"

	"github.com/storbench/storbench/internal/engine"
)

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
	if c.primed {
		s.Database = databaseFigures(a.Minus(c.prev), now.Sub(c.prevAt).Seconds())
	}
	c.prev, c.prevAt, c.primed, c.source = a, now, true, a.Source
	return nil
}
