package metrics_test

import (
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storbench/storbench/internal/engine"
	_ "github.com/storbench/storbench/internal/engine/postgres"
	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/testsupport/pgtest"
)

// TestDatabaseCountersReset samples a real PostgreSQL that is killed and started
// again (crash recovery resets its statistics), then has its statistics reset with
// pg_stat_reset(): the counters go back, and those intervals must be gaps marked as
// resets, not negative rates or hit ratios above 100%, and the summary must leave
// them out.
func TestDatabaseCountersReset(t *testing.T) {
	srv := pgtest.Start(t)
	ctx := t.Context()
	dsn := srv.DSN("tpcc")
	db, err := engine.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Commits and buffer hits, many before the restart and few after: a delta across
	// the reset is then far below zero.
	work := func(n int) {
		t.Helper()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		for range n {
			if _, err := conn.Exec(ctx, "SELECT count(*) FROM pg_class"); err != nil {
				t.Fatal(err)
			}
		}
	}
	mon, err := metrics.New(ctx, metrics.Config{Interval: 250 * time.Millisecond, IOLatency: "off", Database: db})
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	start := time.Now()
	mon.Start(ctx, start)
	work(3000)
	time.Sleep(500 * time.Millisecond)
	if err := syscall.Kill(srv.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Its backends notice and exit before it can start again.
	time.Sleep(3 * time.Second)
	if err := srv.Start(ctx); err != nil {
		t.Fatalf("%v\n%s", err, srv.Log())
	}
	work(50)
	time.Sleep(time.Second)
	work(3000)
	time.Sleep(500 * time.Millisecond)
	pgtest.Exec(t, dsn, "SELECT pg_stat_reset()")
	work(50)
	time.Sleep(time.Second)
	rep := mon.Stop(ctx, 0, time.Since(start).Seconds())

	resets := 0
	for _, s := range rep.Samples {
		if slices.Contains(s.Resets, "database") {
			resets++
			if s.Database != nil {
				t.Errorf("t=%.2f: an interval marked as a reset has database rates: %+v", s.T, *s.Database)
			}
		}
		if d := s.Database; d != nil && (d.CommitsPerSec < 0 || d.WALMBps < 0 || d.BlocksReadPerS < 0 || d.BlocksHitPerS < 0 || d.BufferHitPct > 100) {
			t.Errorf("t=%.2f: impossible database figures: %+v", s.T, *d)
		}
	}
	if resets != 2 {
		t.Errorf("%d intervals marked as resets, want 2 (the restart and pg_stat_reset)", resets)
	}
	sum := rep.Summary.Database
	if sum == nil || sum.CommitsPerSec <= 0 || sum.WALMBps < 0 || sum.BufferHitPct > 100 {
		t.Errorf("the summary should leave the resets out: %+v", sum)
	}
	if notes := strings.Join(rep.Notes, "\n"); strings.Count(notes, "database counters reset at") != 2 {
		t.Errorf("the notes should say where each reset was:\n%s", notes)
	}
}
