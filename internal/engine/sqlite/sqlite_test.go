package sqlite

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/check"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/load"
	"github.com/storbench/storbench/internal/tpcc"
)

func open(t *testing.T, path string) engine.Database {
	t.Helper()
	db, err := engine.OpenOrCreate(context.Background(), "sqlite://"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

func checkPasses(t *testing.T, db engine.Database, when string) {
	t.Helper()
	for _, o := range check.Run(context.Background(), db, false) {
		if !o.Passed() {
			t.Errorf("%s: %s %s: %d violations %v %v", when, o.Check.ID, o.Check.Name, o.Violations, o.FirstKeys, o.Err)
		}
	}
}

// TestBuildRunCheck is the whole cycle on a file in a temp dir: build 2 warehouses,
// the consistency conditions hold, a run in sql mode, they still hold, and the
// database's NOPM (sum(d_next_o_id)) agrees with the client's count.
func TestBuildRunCheck(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "tpcc.db")
	db := open(t, path)
	if _, err := load.Build(ctx, db, load.Options{Warehouses: 2, Workers: 2, Seed: 7, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	for _, o := range check.Run(ctx, db, true) {
		if !o.Passed() {
			t.Errorf("after build: %s %s: %d violations %v %v", o.Check.ID, o.Check.Name, o.Violations, o.FirstKeys, o.Err)
		}
	}
	if _, err := load.Build(ctx, db, load.Options{Warehouses: 1, Workers: 1, Seed: 7}); !errors.Is(err, input.ErrInvalid) {
		t.Errorf("a second build over the tables: %v, want invalid input", err)
	}
	if _, err := db.Connect(ctx, engine.Procedures); !errors.Is(err, input.ErrInvalid) {
		t.Errorf("procedures mode: %v, want invalid input", err)
	}

	res, err := driver.Run(ctx, db, driver.Config{Users: 2, Ramp: time.Second, Duration: 4 * time.Second, Seed: 3, ClientCPUs: 2, Workload: driver.Workload{Mode: engine.SQL, MaxRetries: 5}})
	if err != nil {
		t.Fatal(err)
	}
	if res.NOPMClient == 0 {
		t.Fatalf("no New-Order completed: %+v", res.Transactions)
	}
	// The client counts rolled-back New-Orders (1%) too; the database only committed ones.
	if d := math.Abs(res.NOPMDB-res.NOPMClient) / res.NOPMClient; d > 0.05 {
		t.Errorf("NOPM database %.0f vs client %.0f: %.1f%% apart", res.NOPMDB, res.NOPMClient, 100*d)
	}
	if res.TPMDB != res.TPMClient || res.Sources["tpm_db"] == "" {
		t.Errorf("TPM database %.0f should be the client's %.0f, labelled so: %q", res.TPMDB, res.TPMClient, res.Sources["tpm_db"])
	}
	for x, n := range res.ErrorsByKind {
		t.Errorf("%d errors of kind %s", n, x)
	}
	// The audit's Delivery and line-distribution rows count this run's transactions.
	samples := map[string]int64{}
	for _, a := range res.Audit {
		samples[a.Name] = a.Samples
		if a.Status == tpcc.Fail {
			t.Errorf("audit row %q failed: %+v", a.Name, a)
		}
	}
	if got, want := samples["deliveries with a skipped district"], res.Transactions.Delivery.Count; got != want || want == 0 {
		t.Errorf("skipped-delivery audit row has %d samples, want the %d Deliveries", got, want)
	}
	if got, want := samples["order lines uniform over 5..15 (chi-square)"], res.Transactions.NewOrder.Count; got != want {
		t.Errorf("line-distribution audit row has %d samples, want the %d New-Orders", got, want)
	}
	checkPasses(t, db, "after the run")

	st, err := db.(engine.Observer).Storage(ctx)
	if err != nil || st.Data != filepath.Dir(path) {
		t.Errorf("storage %+v %v, want the file's directory", st, err)
	}
}

// TestManyUsersShareTheWriter: 8 users on one file take turns at SQLite's single
// writer; waiting for it is latency, never a failed transaction.
func TestManyUsersShareTheWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs")
	}
	ctx := t.Context()
	db := open(t, filepath.Join(t.TempDir(), "tpcc.db"))
	if _, err := load.Build(ctx, db, load.Options{Warehouses: 1, Workers: 2, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	res, err := driver.Run(ctx, db, driver.Config{Users: 8, Ramp: time.Second, Duration: 4 * time.Second, Seed: 5, ClientCPUs: 2, Workload: driver.Workload{Mode: engine.SQL, MaxRetries: 5}})
	if err != nil {
		t.Fatal(err)
	}
	var failed int64
	for _, s := range []driver.TxnStats{res.Transactions.NewOrder, res.Transactions.Payment, res.Transactions.OrderStatus, res.Transactions.Delivery, res.Transactions.StockLevel} {
		failed += s.Errors
	}
	if failed > 0 || len(res.ErrorsByKind) > 0 {
		t.Errorf("%d transactions failed: %v", failed, res.ErrorsByKind)
	}
	if res.Transactions.NewOrder.Count == 0 {
		t.Error("no New-Order completed")
	}
	t.Logf("8 users: NOPM %.0f, %d retries of New-Order, p95 %.1f ms", res.NOPMDB, res.Transactions.NewOrder.Retries, res.Transactions.NewOrder.P95Ms)
	checkPasses(t, db, "after 8 users")
}

func TestBadDSN(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "tpcc.db")
	for _, dsn := range []string{"sqlite://", "sqlite://db.example.com/x.db", "sqlite:///nonexistent/dir/tpcc.db", "sqlite://" + missing} {
		if _, err := engine.Open(context.Background(), dsn); !errors.Is(err, input.ErrInvalid) {
			t.Errorf("%s: %v, want invalid input", dsn, err)
		}
	}
	// Opening to run is no way to create the file.
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s: %v, want it still missing", missing, err)
	}
}
