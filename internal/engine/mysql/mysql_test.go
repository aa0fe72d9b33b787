package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/storbench/storbench/internal/check"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/engine/rawconn"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/load"
	"github.com/storbench/storbench/internal/testsupport/mariadbtest"
	"github.com/storbench/storbench/internal/tpcc"
)

func open(t *testing.T, dsn string) engine.Database {
	t.Helper()
	db, err := engine.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

func checkPasses(t *testing.T, db engine.Database, all bool, when string) {
	t.Helper()
	for _, o := range check.Run(context.Background(), db, all) {
		if !o.Passed() {
			t.Errorf("%s: %s %s: %d violations %v %v", when, o.Check.ID, o.Check.Name, o.Violations, o.FirstKeys, o.Err)
		}
	}
}

// TestBuildRunCheck is the whole cycle on a throwaway MariaDB: build 2 warehouses, the
// consistency conditions hold, a run in each mode, they still hold, the database's
// counters agree with the client's, and the observer reads the server.
func TestBuildRunCheck(t *testing.T) {
	ctx := t.Context()
	s := mariadbtest.Start(t)
	db := open(t, s.URL)
	if db.Engine() != "mysql" {
		t.Errorf("Engine() = %q", db.Engine())
	}
	if v, err := db.ServerVersion(ctx); err != nil || !strings.HasPrefix(v, "MariaDB 10.") {
		t.Errorf("ServerVersion() = %q, %v", v, err)
	}
	// The test server writes no binary log: a build writes no log that grows with it.
	if f, err := engine.BuildFootprint(ctx, db); err != nil || f.Log(100) != 0 || f.Data(1) != footprint.Data(1) || footprint.Log(1) == 0 {
		t.Errorf("BuildFootprint() = %+v, %v; want the registered %+v without its binary log", f, err, footprint)
	}

	begin := time.Now()
	sum, err := load.Build(ctx, db, load.Options{Warehouses: 2, Workers: 2, Seed: 7, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("build: %d rows, load %v, keys and indexes %v", sum.Rows, sum.LoadTime.Round(time.Millisecond), sum.IndexTime.Round(time.Millisecond))
	checkPasses(t, db, true, "after build")
	t.Logf("build and checks: %v", time.Since(begin).Round(time.Millisecond))
	if _, err := load.Build(ctx, db, load.Options{Warehouses: 1, Workers: 1, Seed: 7}); !errors.Is(err, input.ErrInvalid) {
		t.Errorf("a second build over the tables: %v, want invalid input", err)
	}
	info, err := db.BuildInfo(ctx)
	if err != nil || info.Warehouses != 2 || info.Seed != 7 || info.Version != "test" {
		t.Errorf("BuildInfo() = %+v, %v", info, err)
	}

	obs := db.(engine.Observer)
	before, err := obs.Activity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Both modes, each checked after: stored procedures (one CALL per transaction)
	// and client-side statements.
	for _, mode := range []engine.Mode{engine.Procedures, engine.SQL} {
		begin = time.Now()
		res, err := driver.Run(ctx, db, driver.Config{Users: 4, Ramp: time.Second, Duration: 5 * time.Second, Seed: 3, ClientCPUs: 2, Workload: driver.Workload{Mode: mode, MaxRetries: 5}})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s run: %v; NOPM database %.0f, client %.0f; TPM database %.0f, client %.0f; %.0f µs client CPU per transaction",
			mode, time.Since(begin).Round(time.Millisecond), res.NOPMDB, res.NOPMClient, res.TPMDB, res.TPMClient, res.ClientCPU.PerTransactionMicros)
		if res.NOPMClient == 0 {
			t.Fatalf("no New-Order completed: %+v", res.Transactions)
		}
		// The client counts rolled-back New-Orders (1%) too; the database only committed ones.
		if d := math.Abs(res.NOPMDB-res.NOPMClient) / res.NOPMClient; d > 0.05 {
			t.Errorf("NOPM database %.0f vs client %.0f: %.1f%% apart", res.NOPMDB, res.NOPMClient, 100*d)
		}
		// Com_commit + Com_rollback: every transaction, Stock-Level's read-only one too.
		if r := res.TPMDB / res.TPMClient; r < 0.98 || r > 1.02 || !strings.Contains(res.Sources["tpm_db"], "Com_commit") {
			t.Errorf("TPM database %.0f vs client %.0f, from %q", res.TPMDB, res.TPMClient, res.Sources["tpm_db"])
		}
		for x, n := range res.ErrorsByKind {
			t.Errorf("%d errors of kind %s", n, x)
		}
		checkPasses(t, db, false, "after the "+string(mode)+" run")
	}

	after, err := obs.Activity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := after.Minus(before)
	if d.Commits <= 0 || d.Rollbacks <= 0 || d.BlocksHit <= 0 || d.BlocksRead < 0 || d.WALBytes <= 0 || d.Fsyncs <= 0 || d.DataWriteBytes <= 0 || !strings.Contains(d.Source, "whole server") {
		t.Errorf("activity over the run: %+v", d)
	}
	st, err := obs.Storage(ctx)
	if err != nil || filepath.Clean(st.Data) != filepath.Clean(s.DataDir) || st.WAL != st.Data {
		t.Errorf("storage %+v %v, want data and redo log in %s", st, err, s.DataDir)
	}

	dropped, err := engine.Drop(ctx, db, s.URL, "")
	if err != nil || len(dropped) != len(engine.OwnTables())+5 { // and the 5 procedures

		t.Errorf("Drop() = %v, %v", dropped, err)
	}
}

// TestStockLevelCommits: each Stock-Level raises Com_commit by one in both modes, so
// the database's TPM (Com_commit + Com_rollback) counts it as it counts the others.
func TestStockLevelCommits(t *testing.T) {
	ctx := context.Background()
	db := open(t, mariadbtest.Start(t).URL)
	if _, err := load.Build(ctx, db, load.Options{Warehouses: 1, Workers: 2, Seed: 7, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	const calls = 5
	for _, mode := range []engine.Mode{engine.Procedures, engine.SQL} {
		s, err := db.Connect(ctx, mode)
		if err != nil {
			t.Fatal(err)
		}
		before, err := db.Counters(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for d := 1; d <= calls; d++ {
			if _, err := s.StockLevel(ctx, &tpcc.StockLevelInput{WID: 1, DID: d, Threshold: 15}); err != nil {
				t.Fatalf("%s: StockLevel: %v", mode, err)
			}
		}
		after, err := db.Counters(ctx)
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := after.Transactions - before.Transactions; got != calls {
			t.Errorf("%s: %d Stock-Levels raised Com_commit + Com_rollback by %d, want %d", mode, calls, got, calls)
		}
	}
}

// TestBadDSN: malformed DSNs, an unreachable server and a wrong password are the
// user's input errors, reported on one line without the password.
func TestBadDSN(t *testing.T) {
	ctx := context.Background()
	for _, dsn := range []string{
		"mysql://", "mysql://u:pw@127.0.0.1:3306", "mysql://u:pw@127.0.0.1:3306/a/b", "mysql://127.0.0.1:3306/tpcc",
		"mysql://u:pw@/tpcc", "mysql://u:pw@127.0.0.1/tpcc?tls=true", "mysql://u:pw@h/tpcc?socket=/tmp/x.sock",
	} {
		if _, err := engine.Open(ctx, dsn); !errors.Is(err, input.ErrInvalid) {
			t.Errorf("%s: %v, want invalid input", dsn, err)
		}
	}
	// Nothing listens on a port just freed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	if _, err := engine.Open(ctx, "mysql://u:secret@"+addr+"/tpcc"); !errors.Is(err, input.ErrInvalid) || strings.Contains(err.Error(), "secret") {
		t.Errorf("unreachable server: %v, want invalid input without the password", err)
	}

	s := mariadbtest.Start(t)
	u, _ := url.Parse(s.URL)
	u.User = url.UserPassword(mariadbtest.User, "wrong-"+s.Password)
	_, err = engine.Open(ctx, u.String())
	if !errors.Is(err, input.ErrInvalid) || strings.Contains(err.Error(), s.Password) || strings.Contains(err.Error(), "\n") {
		t.Errorf("wrong password: %v, want a one-line invalid input without the password", err)
	}
	// mariadb:// is the same engine.
	u.User, u.Scheme = url.UserPassword(mariadbtest.User, s.Password), "mariadb"
	db := open(t, u.String())
	if _, err := db.ExistingTables(ctx); err != nil {
		t.Errorf("mariadb://: %v", err)
	}
}

// TestDriverConfig: the URL's parts land in go-sql-driver's configuration.
func TestDriverConfig(t *testing.T) {
	cfg, err := DriverConfig("mysql://u:p%40ss@/tpcc?socket=/run/mysqld/mysqld.sock")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Net != "unix" || cfg.Addr != "/run/mysqld/mysqld.sock" || cfg.User != "u" || cfg.Passwd != "p@ss" || cfg.DBName != "tpcc" {
		t.Errorf("socket: %+v", cfg)
	}
	cfg, err = DriverConfig("mariadb://u@db.example.com/tpcc")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Net != "tcp" || cfg.Addr != "db.example.com:3306" || cfg.Passwd != "" || cfg.ParseTime || cfg.MultiStatements || cfg.AllowAllFiles {
		t.Errorf("tcp: %+v", cfg)
	}

	// The connections it dials do raw I/O (package rawconn).
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if cfg, err = DriverConfig("mysql://u@" + l.Addr().String() + "/tpcc"); err != nil {
		t.Fatal(err)
	}
	if cfg.DialFunc == nil {
		t.Fatal("DriverConfig sets no DialFunc: connections do their I/O through the runtime's syscall path")
	}
	nc, err := cfg.DialFunc(context.Background(), cfg.Net, cfg.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, ok := nc.(*rawconn.Conn); !ok {
		t.Errorf("DriverConfig's DialFunc returns a %T, not a *rawconn.Conn", nc)
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want engine.Failure
	}{
		{&mysql.MySQLError{Number: 1213, Message: "Deadlock found"}, engine.Failure{Retry: true, Kind: "mysql-1213"}},
		{fmt.Errorf("no_stock: %w", &mysql.MySQLError{Number: 1205}), engine.Failure{Retry: true, Kind: "mysql-1205"}},
		{&mysql.MySQLError{Number: 1062}, engine.Failure{Kind: "mysql-1062"}},
		{&mysql.MySQLError{Number: 1927}, engine.Failure{Kind: "mysql-1927", Lost: true}},
		{fmt.Errorf("commit: %w", mysql.ErrInvalidConn), engine.Failure{Kind: "connection", Lost: true}},
		{io.ErrUnexpectedEOF, engine.Failure{Kind: "connection", Lost: true}},
		{context.Canceled, engine.Failure{Kind: "canceled", Lost: true}},
		{errors.New("no customer named BARBARBAR"), engine.Failure{Kind: "client"}},
	} {
		if got := classify(tc.err); got != tc.want {
			t.Errorf("classify(%v) = %+v, want %+v", tc.err, got, tc.want)
		}
	}
}

// TestHammerDBSchema: a build of HammerDB's schema clusters stock on (s_i_id, s_w_id),
// records its schema, and passes every consistency check.
func TestHammerDBSchema(t *testing.T) {
	ctx := context.Background()
	s := mariadbtest.Start(t)
	db := open(t, s.URL)
	if _, err := load.Build(ctx, db, load.Options{Warehouses: 1, Workers: 2, Seed: 7, Version: "test", Schema: "hammerdb"}); err != nil {
		t.Fatal(err)
	}
	if info, err := db.BuildInfo(ctx); err != nil || info.Schema != "hammerdb" {
		t.Errorf("BuildInfo() = %+v, %v; want schema hammerdb", info, err)
	}
	cfg, err := mysql.ParseDSN(s.DSN)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var key string
	if err := raw.QueryRowContext(ctx, `SELECT GROUP_CONCAT(column_name ORDER BY seq_in_index SEPARATOR ', ')
		FROM information_schema.statistics
		WHERE table_schema = DATABASE() AND table_name = 'stock' AND index_name = 'PRIMARY'`).Scan(&key); err != nil {
		t.Fatal(err)
	}
	if key != "s_i_id, s_w_id" {
		t.Errorf("stock's primary key (%s), want (s_i_id, s_w_id)", key)
	}
	checkPasses(t, db, true, "after the hammerdb build")
}
