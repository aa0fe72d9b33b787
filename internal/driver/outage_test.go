package driver_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/check"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/engine"
	_ "github.com/storbench/storbench/internal/engine/mysql"
	_ "github.com/storbench/storbench/internal/engine/postgres"
	"github.com/storbench/storbench/internal/load"
	"github.com/storbench/storbench/internal/testsupport/mariadbtest"
	"github.com/storbench/storbench/internal/testsupport/pgtest"
)

// restartable is a throwaway server the test can kill and start again.
type restartable interface {
	PID() int
	Start(ctx context.Context) error
}

// TestServerDiesMidRun kills the server (kill -9 of the PostgreSQL postmaster, of
// mariadbd) inside the timed window and starts it again a few seconds later: the users
// reconnect with backoff, the run completes, the result records the outage, the
// database TPM is not thrown off by the counters the restart reset, and the data is
// consistent afterwards.
func TestServerDiesMidRun(t *testing.T) {
	for _, c := range []struct {
		name  string
		start func(t *testing.T) (restartable, string)
		mode  engine.Mode
	}{
		{"postgres", func(t *testing.T) (restartable, string) { s := pgtest.Start(t); return s, s.DSN("tpcc") }, engine.Procedures},
		{"mariadb", func(t *testing.T) (restartable, string) { s := mariadbtest.Start(t); return s, s.URL }, engine.SQL},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, dsn := c.start(t)
			serverDiesMidRun(t, srv, dsn, c.mode)
		})
	}
}

func serverDiesMidRun(t *testing.T, srv restartable, dsn string, mode engine.Mode) {
	ctx := context.Background()
	db, err := engine.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := load.Build(ctx, db, load.Options{Warehouses: 1, Workers: 2, Seed: 3}); err != nil {
		t.Fatal(err)
	}

	killed := make(chan error, 1)
	cfg := driver.Config{Users: 4, Ramp: time.Second, Duration: 18 * time.Second, Seed: 1, ClientCPUs: 2, Started: func(time.Time) {
		go func() {
			time.Sleep(4 * time.Second)
			if err := syscall.Kill(srv.PID(), syscall.SIGKILL); err != nil {
				killed <- err
				return
			}
			time.Sleep(3 * time.Second)
			killed <- srv.Start(context.Background())
		}()
	}, Workload: driver.Workload{Mode: mode, MaxRetries: 5}}
	res, err := driver.Run(ctx, db, cfg)
	if err != nil {
		t.Fatalf("the run did not survive the server's restart: %v", err)
	}
	if err := <-killed; err != nil {
		t.Fatalf("kill and restart: %v", err)
	}
	t.Logf("NOPM database %.0f client %.0f, TPM database %.0f client %.0f, outage %d s, errors %v",
		res.NOPMDB, res.NOPMClient, res.TPMDB, res.TPMClient, res.OutageSeconds, res.ErrorsByKind)
	if res.OutageSeconds < 2 {
		t.Errorf("outage of %d s recorded, want the seconds the server was down", res.OutageSeconds)
	}
	if len(res.ErrorsByKind) == 0 {
		t.Error("no errors recorded while the server was down")
	}
	// After the restart the users were back: transactions completed after the last
	// second with errors. (On a busy machine crash recovery and the reconnect backoff
	// took 10 s of the window: a fixed "last seconds" was a guess at how long.)
	lastErr, after := -1<<31, 0.0
	for _, s := range res.Timeline {
		if s.Errors > 0 {
			lastErr, after = s.T, 0
		} else if s.T > lastErr {
			after += s.TPM
		}
	}
	if after == 0 {
		t.Errorf("no transaction after the last second with errors (T=%d s): the users did not reconnect", lastErr)
	}
	if !strings.Contains(res.Sources["tpm_db"], "went back") {
		t.Errorf("the database TPM does not say the restart reset its counter: %q", res.Sources["tpm_db"])
	}
	if res.TPMDB < 0 || res.TPMDB > 3*res.TPMClient || res.NOPMDB < 0 || res.NOPMDB > 2*res.NOPMClient {
		t.Errorf("database figures thrown off by the restart: TPM %.0f (client %.0f), NOPM %.0f (client %.0f)", res.TPMDB, res.TPMClient, res.NOPMDB, res.NOPMClient)
	}
	for _, o := range check.Run(ctx, db, false) {
		if !o.Passed() {
			t.Errorf("after the restart: %s %s: %d violations %v", o.Check.ID, o.Check.Name, o.Violations, o.Err)
		}
	}
}
