package metrics

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/engine"
)

// profiles is a WaitProfiler that answers the readings given, one per call.
type profiles []engine.WaitProfile

func (p *profiles) WaitProfile(context.Context) (engine.WaitProfile, error) {
	next := (*p)[0]
	*p = (*p)[1:]
	return next, nil
}

// reading is a cumulative profile: statement time, lock and data I/O seconds.
func reading(active, lock, io float64) engine.WaitProfile {
	return engine.WaitProfile{Roles: []string{"connections"}, Rest: engine.WaitOther,
		Active: []engine.RoleClassSeconds{{Role: "connections", Seconds: active}},
		Seconds: []engine.RoleClassSeconds{{Role: "connections", Class: engine.WaitLock, Seconds: lock},
			{Role: "connections", Class: engine.WaitDataIO, Seconds: io}}}
}

// A counter that went back costs its own figure only: part of a sum leaving it (a
// user's performance_schema rows dropped) keeps the lock time of the interval, and
// says what it misses; every counter going back is a reset, with no figures.
func TestWaitCountersGoingBack(t *testing.T) {
	p := &profiles{reading(10, 1, 1), reading(8, 3, 1.5), reading(1, 0, 0)}
	c := &profileCollector{db: p}
	var s Sample
	if err := c.Collect(t.Context(), &s); err != nil {
		t.Fatal(err)
	}
	if err := c.Collect(t.Context(), &s); err != nil {
		t.Fatalf("statement time went back alone: %v", err)
	}
	if s.Waits == nil || len(s.Waits.Roles) != 1 {
		t.Fatalf("no profile: %+v", s.Waits)
	}
	got := s.Waits.Roles[0].Seconds
	if got[engine.WaitLock] != 2 || got[engine.WaitDataIO] != 0.5 || got[engine.WaitOther] != 0 || !strings.Contains(s.Waits.Missing, "1 of the server's 3 cumulative wait counters went back") {
		t.Errorf("seconds %v, missing %q: want lock 2, data I/O 0.5, no rest, and the counter said missing", got, s.Waits.Missing)
	}
	if err := c.Collect(t.Context(), &Sample{}); !errors.Is(err, ErrCounterReset) {
		t.Errorf("every counter went back: %v, want ErrCounterReset", err)
	}
}
