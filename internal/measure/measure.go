// Package measure measures one point: a TPC-C run on one database, with its storage
// watched, the sampler over its window, the result stamped with what ran it, and the
// consistency conditions checked after it. `storbench run`, a study's TPC-C steps and
// its consolidations all measure through Run, so a point means the same everywhere.
package measure

import (
	"context"
	"runtime"
	"time"

	"github.com/storbench/storbench/internal/bottleneck"
	"github.com/storbench/storbench/internal/check"
	"github.com/storbench/storbench/internal/dburl"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/metrics"
)

// Point is one point to measure.
type Point struct {
	// DSN names the database; Run parses it once for all it does with it.
	DSN    string
	Driver driver.Config
	// Version is storbench's, stamped on the result.
	Version string
	// Prepare, when set, is called once the driver has accepted the run (its
	// settings valid, the schema there, the server able to hold its users), before
	// any user connects: the caller takes there what the run needs and makes its
	// sampler, so that a refused run leaves nothing behind (a lease, metrics files).
	// The sampler samples from the window's start to its end; none (nil), the point
	// is not sampled on its own (a consolidation samples around all its points).
	Prepare func(ctx context.Context, db engine.Database, dsn dburl.URL) (*metrics.Monitor, error)
	// Check runs the consistency conditions (but 3.3.2.11, which holds only until
	// the first Delivery) after a run that completed.
	Check bool
	// Watch, when set, sees the point as it is measured (a live endpoint).
	Watch Watcher
}

// Watcher sees a point as it is measured: each second of the driver's, each of the
// sampler's samples, and the result with its verdict. Its methods run on the
// driver's and the sampler's goroutines and must not keep what they are given.
type Watcher interface {
	Tick(driver.Tick)
	Sample(*metrics.Sample)
	// Done is called once, with the result (nil: nothing was measured).
	Done(*driver.Result)
}

// Outcome is what measuring a point gave.
type Outcome struct {
	// Run is the result, nil when nothing was measured; a run interrupted inside its
	// window keeps the part that ran.
	Run *driver.Result
	// Checks are the consistency conditions' outcomes (Point.Check).
	Checks []check.Outcome
	// Sampled says the sampler had started: an interruption during the ramp-up
	// leaves its samples.
	Sampled bool
}

// Run measures a point. The driver's settings are checked before anything connects;
// the error is the driver's (with Outcome.Run set when part of the window ran) or
// what refused the point.
func Run(ctx context.Context, p Point) (Outcome, error) {
	var out Outcome
	cfg := p.Driver
	if err := cfg.Validate(); err != nil {
		return out, err
	}
	// ClientCPUs is the driver's share of this process (a study gives all of it).
	// Setting GOMAXPROCS stops the runtime following the cgroup's CPU limit, so only
	// a share that differs is set.
	if cfg.ClientCPUs != runtime.GOMAXPROCS(0) {
		runtime.GOMAXPROCS(cfg.ClientCPUs)
	}
	u, err := engine.ParseDSN(p.DSN)
	if err != nil {
		return out, err
	}
	db, err := engine.OpenURL(ctx, u)
	if err != nil {
		return out, err
	}
	defer db.Close()
	if err := engine.RequireBuild(ctx, db, p.DSN); err != nil {
		return out, err
	}
	var mon *metrics.Monitor
	defer func() {
		if mon != nil {
			mon.Close()
		}
	}()
	if p.Prepare != nil {
		cfg.Accepted = func(ctx context.Context) (err error) {
			mon, err = p.Prepare(ctx, db, u)
			if mon != nil {
				mon.JudgeEach(func(s *metrics.Sample) string {
					return bottleneck.OfSample(s, cfg.Users).Short()
				})
				if p.Watch != nil {
					mon.WatchEach(p.Watch.Sample)
				}
			}
			return err
		}
		cfg.Started = func(windowStart time.Time) {
			if mon != nil {
				mon.Start(ctx, windowStart)
			}
		}
	}
	if p.Watch != nil {
		progress := cfg.Progress
		cfg.Progress = func(t driver.Tick) {
			p.Watch.Tick(t)
			if progress != nil {
				progress(t)
			}
		}
		defer func() { p.Watch.Done(out.Run) }()
	}
	cfg.Storage = engine.WatchStorageOf(ctx, db, u)
	res, err := driver.Run(ctx, db, cfg)
	out.Sampled = mon != nil && mon.Started()
	if res == nil {
		return out, err
	}
	res.Config.Engine, res.Config.DSN, res.Config.Version = db.Engine(), u.Redacted(), p.Version
	if mon != nil {
		res.System = mon.Stop(context.WithoutCancel(ctx), 0, res.End.Sub(res.Start).Seconds())
		res.System.Users = res.Config.Users
		res.Bottleneck = bottleneck.Judge(&res.System.Summary, res.DriverFigures())
	}
	out.Run = res
	if err == nil && p.Check {
		out.Checks = check.Run(ctx, db, false)
	}
	return out, err
}
