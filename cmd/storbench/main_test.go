package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/testsupport/pgtest"
)

// storbench runs one command line in-process and returns its exit code and output.
func storbench(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := execute(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// diskTempDir is a temp dir beside the checkout, removed after the test: on the
// checkout's disk, because fio refuses a tmpfs, which the system temp dir may be.
func diskTempDir(t *testing.T, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp(".", prefix)
	if err != nil {
		t.Fatal(err)
	}
	dir, _ = filepath.Abs(dir)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestBuildRunCheck is the core's end-to-end path against a real PostgreSQL: build,
// check right after load, run each mode, check again, drop.
func TestBuildRunCheck(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	srv := pgtest.Start(t)
	dsn := srv.DSN("tpcc")

	code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "2", "--workers", "2")
	if code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "built 2 warehouses") {
		t.Errorf("build output lacks its summary:\n%s", out)
	}

	t.Run("build refuses an existing schema", func(t *testing.T) {
		code, _, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1")
		if code != 2 || !strings.Contains(errOut, "storbench drop") {
			t.Fatalf("second build: exit %d, stderr %q; want 2 and a hint to drop", code, errOut)
		}
	})

	t.Run("check after load, all 12", func(t *testing.T) {
		code, out, errOut := storbench(t, "check", "--dsn", dsn, "--all")
		if code != 0 {
			t.Fatalf("check --all: exit %d\n%s%s", code, out, errOut)
		}
		if n := strings.Count(out, " PASS "); n != 12 {
			t.Fatalf("check --all: %d PASS lines, want 12\n%s", n, out)
		}
	})

	for _, mode := range []string{"procedures", "sql"} {
		t.Run("run "+mode, func(t *testing.T) {
			jsonPath := filepath.Join(t.TempDir(), "result.json")
			code, out, errOut := storbench(t, "run", "--dsn", dsn, "--users", "4", "--ramp", "1s",
				"--duration", "8s", "--mode", mode, "--json", jsonPath)
			if code != 0 {
				t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
			}
			res := readResult(t, jsonPath)
			checkResult(t, res, mode)
			checkSystem(t, res, jsonPath, out)
			if !strings.Contains(out, "database view (HammerDB-compatible)") || !strings.Contains(out, "client view") {
				t.Errorf("summary does not label both throughput views:\n%s", out)
			}

			code, out, errOut = storbench(t, "check", "--dsn", dsn)
			if code != 0 {
				t.Fatalf("check after %s run: exit %d\n%s%s", mode, code, out, errOut)
			}
			if n := strings.Count(out, " PASS "); n != 11 {
				t.Fatalf("check: %d PASS lines, want 11 (3.3.2.1-10, 12)\n%s", n, out)
			}
		})
	}

	t.Run("check fails with exit 1 on a broken database", func(t *testing.T) {
		breakAndRepair(t, dsn)
	})

	t.Run("drop removes only storbench's objects", func(t *testing.T) {
		code, out, errOut := storbench(t, "drop", "--dsn", dsn)
		if code != 0 || !strings.Contains(out, "order_line") {
			t.Fatalf("drop: exit %d\n%s%s", code, out, errOut)
		}
		code, out, _ = storbench(t, "drop", "--dsn", dsn)
		if code != 0 || !strings.Contains(out, "nothing to drop") {
			t.Fatalf("second drop: exit %d\n%s", code, out)
		}
		code, _, errOut = storbench(t, "run", "--dsn", dsn, "--duration", "1s", "--ramp", "0s")
		if code == 0 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Fatalf("run on an empty database: exit %d, stderr %q; want a one-line error", code, errOut)
		}
	})
}

func readResult(t *testing.T, path string) *driver.Result {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var res driver.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatalf("result JSON: %v", err)
	}
	// The JSON's names are a contract with scripts and later tools.
	var raw map[string]any
	_ = json.Unmarshal(b, &raw)
	for _, k := range []string{"config", "start", "end", "tpm_db", "nopm_db", "tpm_client", "nopm_client", "transactions", "audit", "timeline"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("result JSON lacks %q", k)
		}
	}
	if strings.Contains(string(b), "password") {
		t.Errorf("result JSON mentions a password")
	}
	return &res
}

func checkResult(t *testing.T, res *driver.Result, mode string) {
	t.Helper()
	no := res.Transactions.NewOrder
	if no.Count < 100 {
		t.Fatalf("only %d New-Orders in 8 s", no.Count)
	}
	for _, s := range []driver.TxnStats{res.Transactions.Payment, res.Transactions.OrderStatus,
		res.Transactions.Delivery, res.Transactions.StockLevel} {
		if s.Count == 0 {
			t.Errorf("a transaction type never completed: %+v", res.Transactions)
		}
	}
	for name, s := range map[string]driver.TxnStats{"new_order": no, "payment": res.Transactions.Payment} {
		if s.Errors > 0 {
			t.Errorf("%s: %d errors (%v)", name, s.Errors, res.ErrorsByKind)
		}
		if !(s.P50Ms > 0 && s.P50Ms <= s.P90Ms && s.P90Ms <= s.P99Ms && s.P99Ms <= s.MaxMs) {
			t.Errorf("%s: percentiles out of order: %+v", name, s)
		}
	}
	// The database counts committed New-Orders (d_next_o_id); the client counts the
	// 1% rolled back too. Without those, both views must agree within a few percent,
	// and the New-Orders in flight at either edge of the window, which one view counts
	// and the other not: at most one per user at each edge.
	committed := res.NOPMClient * float64(no.Count-no.Rollbacks) / float64(no.Count)
	inFlight := float64(2*res.Config.Users) / float64(no.Count-no.Rollbacks)
	if diff := math.Abs(res.NOPMDB-committed) / committed; diff > 0.03+inFlight {
		t.Errorf("%s: database NOPM %.0f vs client NOPM %.0f (committed): %.1f%% apart, more than 3%% and %.1f%% for the New-Orders in flight at the edges",
			mode, res.NOPMDB, committed, diff*100, inFlight*100)
	}
	if res.TPMDB <= 0 || res.TPMClient <= 0 {
		t.Errorf("TPM missing: db %.0f client %.0f", res.TPMDB, res.TPMClient)
	}
	if len(res.Audit) != 8 {
		t.Errorf("audit has %d rows, want 8 (5.5.1.5 and 5.5.1.6)", len(res.Audit))
	}
	for _, a := range res.Audit {
		if a.Status == "FAIL" {
			t.Errorf("audit row failed: %+v", a)
		}
	}
	timed := 0
	for _, s := range res.Timeline {
		if s.Phase == driver.PhaseTimed {
			timed++
		}
	}
	if timed < 6 {
		t.Errorf("timeline has %d timed seconds for an 8 s window", timed)
	}
	if res.Config.Mode != mode || res.Config.Users != 4 || res.Config.Warehouses != 2 {
		t.Errorf("config recorded wrongly: %+v", res.Config)
	}
	if res.ClientCPU.PerTransactionMicros <= 0 {
		t.Errorf("client CPU per transaction not measured")
	}
}

// checkSystem checks the metrics sampled during a run against the run's own figures.
func checkSystem(t *testing.T, res *driver.Result, jsonPath, out string) {
	t.Helper()
	sys := res.System
	if sys == nil {
		t.Fatal("result has no system metrics")
	}
	sum := sys.Summary
	if sum.Samples < 7 || len(sys.Samples) < sum.Samples {
		t.Errorf("%d samples in the 8 s window, %d in all", sum.Samples, len(sys.Samples))
	}
	if c := sum.CPU; c == nil || math.Abs(c.User+c.System+c.Idle+c.IOWait+c.Steal-100) > 0.01 || c.Idle >= 100 {
		t.Errorf("cpu summary %+v", c)
	}
	// The sampler's commits + rollbacks per second and the run's database TPM both come
	// from pg_stat_database over nearly the same 8 s window; backends publish their
	// counts up to a second late, so each edge can be off by an eighth of the window.
	if d := sum.Database; d == nil {
		t.Errorf("no database counters: notes %q", sys.Notes)
	} else if tps := (d.CommitsPerSec + d.RollbacksPerSec) * 60; math.Abs(tps-res.TPMDB) > 0.3*res.TPMDB {
		t.Errorf("sampled database rate %.0f/min vs run's database TPM %.0f", tps, res.TPMDB)
	}
	roles := map[string]bool{}
	for _, p := range sys.Placements {
		roles[p.Role] = true
	}
	if !roles["data"] || !roles["wal"] {
		t.Errorf("placements %+v: want the server's data and WAL directories", sys.Placements)
	}
	if len(sys.Placements) > 0 && len(sys.Placements[0].Devices) > 0 {
		if len(sum.Disks) == 0 || sum.Disks[0].WriteIOPS <= 0 {
			t.Errorf("durable commits but no disk writes: %+v", sum.Disks)
		}
		if len(sum.Latency) == 0 && !strings.Contains(strings.Join(sys.Notes, " "), "per-I/O latency not available") {
			t.Errorf("neither per-I/O latency nor a note saying why not: %q", sys.Notes)
		}
	}
	if !strings.Contains(out, "system, means over the timed window") {
		t.Errorf("summary lacks the system figures:\n%s", out)
	}
	// The wait profile at the default 10 Hz: the summary line, the JSON, the CSV.
	if c := sum.Waits.Clients(); c == nil || c.Active() <= 0 || c.MeanActive() > 4.01 {
		t.Errorf("wait profile of the clients %+v (of %+v)", c, sum.Waits)
	}
	if !regexp.MustCompile(`waits \(clients, pg_stat_activity sampled at 10 Hz\): CPU \d+%, data I/O \d+%, WAL \d+%, locks \d+%, LWLocks \d+%, client \d+%, other \d+%; \d\.\d active of 4 users`).MatchString(out) {
		t.Errorf("summary lacks the clients' wait shares:\n%s", out)
	}
	csv, err := os.ReadFile(strings.TrimSuffix(jsonPath, ".json") + ".metrics.csv")
	if err != nil {
		t.Fatal(err)
	}
	if rows := strings.Count(string(csv), "\n"); rows != len(sys.Samples)+1 || !strings.HasPrefix(string(csv), "t,time,") {
		t.Errorf("CSV has %d lines for %d samples", rows, len(sys.Samples))
	}
	if !strings.Contains(string(csv), ",clients_wait_cpu_pct,clients_wait_data_io_pct,clients_wait_wal_pct,clients_wait_lock_pct,clients_wait_lwlock_pct,clients_wait_client_pct,clients_wait_other_pct,clients_active_sessions") {
		t.Errorf("CSV lacks the clients' wait shares: %s", strings.SplitN(string(csv), "\n", 2)[0])
	}
}

// run --metrics-only samples a directory's disk without a workload or a database.
func TestMetricsOnly(t *testing.T) {
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "idle.json")
	code, out, errOut := storbench(t, "run", "--metrics-only", "--duration", "2s", "--metrics-interval", "250ms",
		"--path", dir, "--io-latency", "off", "--json", jsonPath)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var res metricsOnly
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	sys := res.System
	if sys == nil || sys.Summary.Samples < 7 || sys.Summary.CPU == nil || len(sys.Placements) != 1 {
		t.Fatalf("metrics-only result: %s", b)
	}
	if p := sys.Placements[0]; len(p.Devices) == 0 && p.Note == "" {
		t.Errorf("placement without disks or a note: %+v", p)
	}
	if !strings.Contains(out, "system, means over the run") {
		t.Errorf("no summary:\n%s", out)
	}
}

func TestBadInput(t *testing.T) {
	cases := [][]string{
		{"run", "--dsn", "postgres://[::1", "--duration", "1s"},
		{"run", "--dsn", "mongodb://127.0.0.1/x"},
		{"run", "--dsn", "postgres://postgres@127.0.0.1:1/tpcc", "--duration", "1s"},
		{"run"},
		{"build", "--dsn", "postgres://postgres@127.0.0.1:1/tpcc"},
		{"run", "--dsn", "postgres://x@127.0.0.1/y", "--users", "0"},
		{"run", "--dsn", "postgres://x@127.0.0.1/y", "--mode", "fast"},
		{"run", "--dsn", "postgres://x@127.0.0.1/y", "--duration", "soon"},
		{"frobnicate"},
		{"run", "--metrics-only", "--duration", "1s", "--path", "/nonexistent/storbench"},
		{"run", "--metrics-only", "--duration", "1s", "--metrics-interval", "1ms"},
		{"run", "--metrics-only", "--duration", "1s", "--io-latency", "sometimes"},
		{"run", "--metrics-only", "--duration", "1s", "--wait-rate", "1000"},
		{"run", "--metrics-only", "--duration", "1s", "--metrics-host", "ftp://db1/metrics"},
		{"run", "--metrics-only", "--duration", "1s", "--metrics-device", "sda"},
		{"run", "--metrics-only", "--duration", "0s"},
	}
	for _, args := range cases {
		code, _, errOut := storbench(t, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, errOut)
		}
		if lines := strings.Count(strings.TrimRight(errOut, "\n"), "\n") + 1; lines != 1 || !strings.HasPrefix(errOut, "storbench: ") {
			t.Errorf("%v: want one error line, got %q", args, errOut)
		}
	}
}

// breakAndRepair corrupts one warehouse's w_ytd, expects check to fail with exit 1
// naming it, and restores the value.
func breakAndRepair(t *testing.T, dsn string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 2"); err != nil {
		t.Fatal(err)
	}
	code, out, _ := storbench(t, "check", "--dsn", dsn)
	if _, err := conn.Exec(ctx, "UPDATE warehouse SET w_ytd = w_ytd - 1 WHERE w_id = 2"); err != nil {
		t.Fatal(err)
	}
	if code != 1 {
		t.Fatalf("check on a broken database: exit %d, want 1\n%s", code, out)
	}
	for _, want := range []string{"3.3.2.1   FAIL", "w_id=2", "3.3.2.8   FAIL"} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
}
