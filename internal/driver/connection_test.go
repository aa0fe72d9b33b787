package driver_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/engine/postgres"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance/postgres/pgserver"
	"github.com/storbench/storbench/internal/load"
)

// countingDB counts the sessions the driver opens; it keeps postgres' ConnectionLimit.
type countingDB struct {
	*postgres.DB
	connects atomic.Int64
}

func (db *countingDB) Connect(ctx context.Context, mode engine.Mode) (engine.Session, error) {
	db.connects.Add(1)
	return db.DB.Connect(ctx, mode)
}

// TestConnectionLimit runs against a real PostgreSQL with max_connections = 10 (a
// superuser: no reserved slots apply): the run's own connection is open, so 8 users
// (+ 2) fit and 9 do not; the refusal is bad input, comes before any user connects,
// and leaves no partial result and no transaction behind.
func TestConnectionLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts a PostgreSQL server")
	}
	ctx := context.Background()
	srv, err := pgserver.Start(ctx, pgserver.Options{
		Dir:      filepath.Join(t.TempDir(), "pgdata"),
		Settings: map[string]string{"shared_buffers": "32MB", "max_connections": "10"},
	})
	if err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	if err := srv.CreateDatabase(ctx, "tpcc"); err != nil {
		t.Fatal(err)
	}
	d, err := engine.Open(ctx, srv.DSN("tpcc"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := load.Build(ctx, d, load.Options{Warehouses: 1, Workers: 2, Seed: 1, Version: "test"}); err != nil {
		t.Fatalf("build: %v", err)
	}
	db := &countingDB{DB: d.(*postgres.DB)}
	// The build's load connections end asynchronously: wait until they are gone.
	var limit engine.ConnectionLimit
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if limit, err = db.ConnectionLimit(ctx); err != nil {
			t.Fatal(err)
		}
		if limit.Available == 10 || time.Now().After(deadline) {
			break
		}
	}
	if limit.Max != 10 || limit.Available != 10 {
		t.Fatalf("ConnectionLimit = %+v, want max 10, available 10 (no other clients)", limit)
	}
	// Other clients take two slots: one of them watches the data.
	var other *pgx.Conn
	for _, name := range []string{"tpcc", "postgres"} {
		c, err := pgx.Connect(ctx, srv.DSN(name))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		if other == nil {
			other = c
		}
	}
	before := workDone(t, other)
	cfg := driver.Config{Users: 7, Duration: time.Second, Seed: 1, ClientCPUs: 1, Workload: driver.Workload{Mode: engine.Procedures}}
	start := time.Now()
	res, err := driver.Run(ctx, db, cfg)
	if !errors.Is(err, input.ErrInvalid) || res != nil {
		t.Fatalf("7 users with 8 slots left: result %v, error %v; want no result and bad input", res != nil, err)
	}
	want := "7 users need 9 connections but the server allows 8 more (max_connections=10): lower --users or raise max_connections"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("message %q lacks %q", err, want)
	}
	if n := db.connects.Load(); n != 0 {
		t.Errorf("%d users connected before the refusal", n)
	}
	if after := workDone(t, other); after != before {
		t.Errorf("transactions ran before the refusal: sum(d_next_o_id) + history rows %d → %d", before, after)
	}
	t.Logf("refused in %v", time.Since(start).Round(time.Millisecond))

	cfg.Users = 6
	res, err = driver.Run(ctx, db, cfg)
	if err != nil {
		t.Fatalf("6 users with 8 slots left: %v", err)
	}
	if db.connects.Load() != 6 || res.Transactions.NewOrder.Count == 0 {
		t.Errorf("6-user run: %d connects, %d New-Orders", db.connects.Load(), res.Transactions.NewOrder.Count)
	}
}

// workDone is sum(d_next_o_id) + the rows of history: New-Order and Payment raise it.
func workDone(t *testing.T, c *pgx.Conn) int64 {
	t.Helper()
	var n int64
	if err := c.QueryRow(context.Background(), "SELECT (SELECT sum(d_next_o_id) FROM district) + (SELECT count(*) FROM history)").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
