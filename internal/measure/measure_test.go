package measure_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/dburl"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/engine"
	_ "github.com/storbench/storbench/internal/engine/sqlite" // registers sqlite://
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/load"
	"github.com/storbench/storbench/internal/measure"
	"github.com/storbench/storbench/internal/metrics"
)

// built is a one-warehouse SQLite database (a real engine, no server to start).
func built(t *testing.T) string {
	t.Helper()
	dsn := "sqlite://" + filepath.Join(t.TempDir(), "tpcc.db")
	db, err := engine.OpenOrCreate(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := load.Build(context.Background(), db, load.Options{Warehouses: 1, Workers: 1, Seed: 7, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	return dsn
}

func window() driver.Config {
	return driver.Config{Users: 1, Duration: time.Second, Seed: 1, ClientCPUs: 1, Workload: driver.Workload{Mode: engine.SQL, MaxRetries: driver.DefaultRetries}}
}

// TestRunMeasuresAPoint: one call opens the database, samples the window, runs the
// driver, stamps the result and checks the consistency conditions.
func TestRunMeasuresAPoint(t *testing.T) {
	dsn := built(t)
	dir := filepath.Dir(strings.TrimPrefix(dsn, "sqlite://"))
	prepared := 0
	out, err := measure.Run(context.Background(), measure.Point{DSN: dsn, Driver: window(), Version: "v-test", Check: true,
		Prepare: func(ctx context.Context, db engine.Database, u dburl.URL) (*metrics.Monitor, error) {
			prepared++
			if u.String() != dsn {
				t.Errorf("Prepare got DSN %q, want %q", u, dsn)
			}
			return metrics.New(ctx, metrics.Config{Interval: 200 * time.Millisecond, IOLatency: "off", Database: db,
				Targets: []metrics.Target{{Path: dir, Role: "path"}}})
		}})
	if err != nil {
		t.Fatal(err)
	}
	res := out.Run
	if prepared != 1 || !out.Sampled {
		t.Errorf("Prepare called %d times, sampled %v; want once, sampled", prepared, out.Sampled)
	}
	if res.Config.Engine != "sqlite" || res.Config.DSN != dsn || res.Config.Version != "v-test" {
		t.Errorf("result stamped engine %q, DSN %q, version %q", res.Config.Engine, res.Config.DSN, res.Config.Version)
	}
	if res.System == nil || len(res.System.Samples) == 0 {
		t.Errorf("no samples over the window: %+v", res.System)
	}
	if len(out.Checks) == 0 {
		t.Fatal("no consistency conditions checked")
	}
	for _, o := range out.Checks {
		if !o.Passed() {
			t.Errorf("condition %s failed: %d violations, %v", o.Check.ID, o.Violations, o.Err)
		}
	}
}

// TestRunRefusesBeforePreparing: bad settings are refused before the database is
// opened, a missing DSN before anything connects.
func TestRunRefusesBeforePreparing(t *testing.T) {
	prepare := func(ctx context.Context, db engine.Database, _ dburl.URL) (*metrics.Monitor, error) {
		t.Error("Prepare called for a refused point")
		return nil, nil
	}
	missing := "sqlite://" + filepath.Join(t.TempDir(), "none", "tpcc.db")
	cfg := window()
	cfg.Users = 0
	_, err := measure.Run(context.Background(), measure.Point{DSN: missing, Driver: cfg, Prepare: prepare})
	if !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), "users 0 is too few") {
		t.Errorf("0 users: %v, want the users refused first", err)
	}
	if _, err := os.Stat(filepath.Dir(strings.TrimPrefix(missing, "sqlite://"))); !os.IsNotExist(err) {
		t.Errorf("a refused point touched its database's directory: %v", err)
	}

	if _, err := measure.Run(context.Background(), measure.Point{DSN: "", Driver: window(), Prepare: prepare}); err == nil || !strings.Contains(err.Error(), "--dsn is required") {
		t.Errorf("no DSN: %v", err)
	}
}
