package postgres_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance"
	_ "github.com/storbench/storbench/internal/instance/postgres"
	"github.com/storbench/storbench/internal/testsupport/pgtest"
)

func registry(t *testing.T) instance.Registry {
	t.Setenv("STORBENCH_HOME", t.TempDir())
	reg, err := instance.DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func show(t *testing.T, dsn, setting string) string {
	t.Helper()
	return pgtest.Scalar[string](t, dsn, "SHOW "+setting)
}

// TestLifecycle creates an instance with its WAL on a second target, memory and CPUs,
// checks that the settings and limits took effect, stops, restarts and destroys it.
func TestLifecycle(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	ctx := context.Background()
	reg := registry(t)
	base := t.TempDir()
	spec := instance.Spec{Name: "t1", Engine: "postgres", Path: filepath.Join(base, "data"),
		WALPath: filepath.Join(base, "wal"), MemoryBytes: 256 << 20, CPUs: "0", MaxConnections: 50,
		IOLimit: instance.IOLimit{WriteIOPS: 5000, ReadBPS: 200 << 20}}
	st, _, err := reg.Create(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Destroy(context.Background(), "t1") })
	if st, err = reg.Start(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	dsn := st.DSN()
	for setting, want := range map[string]string{"shared_buffers": "64MB", "effective_cache_size": "192MB",
		"max_connections": "50", "fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"} {
		if got := show(t, dsn, setting); got != want {
			t.Errorf("SHOW %s = %s, want %s", setting, got, want)
		}
	}
	// The WAL lives on the second target.
	if link, err := os.Readlink(filepath.Join(spec.Path, "data", "pg_wal")); err != nil || !strings.HasPrefix(link, spec.WALPath) {
		t.Errorf("pg_wal -> %q (%v), want a link into %s", link, err, spec.WALPath)
	}
	s, err := reg.Status("t1")
	if err != nil || s.PID == 0 {
		t.Fatalf("status: pid %d, %v", s.PID, err)
	}
	// The server and its children run on CPU 0 only, whichever way it was applied.
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(s.PID, &set); err != nil {
		t.Fatal(err)
	}
	if set.Count() != 1 || !set.IsSet(0) {
		t.Errorf("postmaster affinity has %d CPUs, want CPU 0 only", set.Count())
	}
	t.Logf("limits: %v", st.Limits)
	if os.Geteuid() == 0 && st.Cgroup == "" {
		t.Errorf("running as root but no cgroup holds the instance: %v", st.Limits)
	}
	if st.Cgroup != "" {
		found := false
		for _, l := range st.Limits {
			found = found || strings.Contains(l, "268435456")
		}
		if !found {
			t.Errorf("the memory limit (268435456) is not among the applied limits: %v", st.Limits)
		}
		io := strings.Join(st.Limits, " ")
		if !strings.Contains(io, "5000") && !strings.Contains(io, "I/O LIMIT NOT APPLIED") {
			t.Errorf("the I/O limit is neither applied nor reported as not applied: %v", st.Limits)
		}
		cg, _ := os.ReadFile("/proc/" + strconv.Itoa(s.PID) + "/cgroup")
		if !strings.Contains(string(cg), "t1") {
			t.Errorf("postmaster is not in the instance's cgroup:\n%s", cg)
		}
	}

	if _, err := reg.Stop(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if s, _ := reg.Status("t1"); s.PID != 0 {
		t.Fatalf("still running after stop (pid %d)", s.PID)
	}
	if _, err := reg.Start(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	// A physical backup and restore keeps the WAL on its own target.
	backup := filepath.Join(t.TempDir(), "bk")
	bt, err := reg.Backup(ctx, "t1", backup, instance.BackupMethod{Jobs: 1})
	if err != nil || bt.Bytes == 0 || bt.MBps <= 0 {
		t.Fatalf("backup: %+v, %v", bt, err)
	}
	if _, err := reg.Restore(ctx, "t1", backup, 0); err != nil {
		t.Fatal(err)
	}
	if link, err := os.Readlink(filepath.Join(spec.Path, "data", "pg_wal")); err != nil || !strings.HasPrefix(link, spec.WALPath) {
		t.Errorf("after restore pg_wal -> %q (%v), want a link into %s", link, err, spec.WALPath)
	}
	if got := show(t, dsn, "shared_buffers"); got != "64MB" {
		t.Errorf("after restore shared_buffers = %s", got)
	}
	pid := mustPID(t, reg)
	list, err := reg.List()
	if err != nil || len(list) != 1 || list[0].Name != "t1" {
		t.Fatalf("list = %v, %v", list, err)
	}

	if err := reg.Destroy(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{spec.Path, spec.WALPath} {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still exists after destroy", d)
		}
	}
	// pg_ctl stop returns once the pid file is gone; the process exits right after.
	deadline := time.Now().Add(5 * time.Second)
	for unix.Kill(pid, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if unix.Kill(pid, 0) == nil {
		t.Errorf("postmaster %d still runs after destroy", pid)
	}
	if list, _ := reg.List(); len(list) != 0 {
		t.Errorf("destroyed instance still listed: %v", list)
	}
}

func mustPID(t *testing.T, reg instance.Registry) int {
	s, err := reg.Status("t1")
	if err != nil || s.PID == 0 {
		t.Fatalf("status: pid %d, %v", s.PID, err)
	}
	return s.PID
}

// TestBadInput: one clear error (input.ErrInvalid) per mistake, and nothing of the
// user's deleted.
func TestBadInput(t *testing.T) {
	ctx := t.Context()
	reg := registry(t)
	base := t.TempDir()
	full := filepath.Join(base, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	precious := filepath.Join(full, "precious.txt")
	if err := os.WriteFile(precious, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port
	ok := instance.Spec{Name: "ok", Engine: "postgres", Path: filepath.Join(base, "new"), MaxConnections: 10}
	cases := map[string]func(*instance.Spec){
		"non-empty dir":  func(s *instance.Spec) { s.Path = full },
		"missing parent": func(s *instance.Spec) { s.Path = filepath.Join(base, "no", "such", "dir") },
		"relative path":  func(s *instance.Spec) { s.Path = "relative/dir" },
		"port in use":    func(s *instance.Spec) { s.Port = busy },
		"bad name":       func(s *instance.Spec) { s.Name = "../etc" },
		"unknown engine": func(s *instance.Spec) { s.Engine = "oracle" },
		"no connections": func(s *instance.Spec) { s.MaxConnections = 0 },
		"non-empty wal":  func(s *instance.Spec) { s.WALPath = full },
	}
	for name, mutate := range cases {
		spec := ok
		mutate(&spec)
		_, _, err := reg.Create(ctx, spec)
		if !errors.Is(err, input.ErrInvalid) {
			t.Errorf("%s: err = %v, want an input error", name, err)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error spans lines: %q", name, err)
		}
		if _, err := os.Stat(spec.Path); name != "non-empty dir" && name != "relative path" && name != "missing parent" && err == nil {
			t.Errorf("%s: %s was left behind", name, spec.Path)
		}
	}
	if b, err := os.ReadFile(precious); err != nil || string(b) != "keep" {
		t.Fatalf("the user's file was touched: %q, %v", b, err)
	}
	if list, _ := reg.List(); len(list) != 0 {
		t.Errorf("failed creates were recorded: %v", list)
	}
	if _, err := reg.Status("nobody"); !errors.Is(err, input.ErrInvalid) {
		t.Errorf("status of an unknown instance: %v", err)
	}
}

// TestSyncReplica: a synchronous standby receives the primary's changes, and while it
// is down the primary's commits wait for it.
func TestSyncReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL servers")
	}
	ctx := context.Background()
	reg := registry(t)
	base := t.TempDir()
	p, _, err := reg.Create(ctx, instance.Spec{Name: "p1", Engine: "postgres", Path: filepath.Join(base, "p"), MaxConnections: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Destroy(context.Background(), "p1") })
	if p, err = reg.Start(ctx, "p1"); err != nil {
		t.Fatal(err)
	}
	r, _, err := reg.Create(ctx, instance.Spec{Name: "r1", Engine: "postgres", Path: filepath.Join(base, "r"),
		MaxConnections: 20, ReplicaOf: "p1", Sync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Destroy(context.Background(), "r1") })
	if r, err = reg.Start(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	exec := func(dsn, sql string, timeout time.Duration) (time.Duration, error) {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		conn, err := pgx.Connect(cctx, dsn)
		if err != nil {
			return 0, err
		}
		defer conn.Close(ctx)
		start := time.Now()
		_, err = conn.Exec(cctx, sql)
		return time.Since(start), err
	}
	if _, err := exec(p.DSN(), "CREATE TABLE t (x int); INSERT INTO t VALUES (1)", 10*time.Second); err != nil {
		t.Fatalf("commit with the standby up: %v", err)
	}
	if got := show(t, r.DSN(), "transaction_read_only"); got != "on" {
		t.Errorf("standby transaction_read_only = %s", got)
	}
	var n int
	conn, err := pgx.Connect(ctx, r.DSN())
	if err != nil {
		t.Fatal(err)
	}
	err = conn.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n)
	conn.Close(ctx)
	if err != nil || n != 1 {
		t.Fatalf("standby sees %d rows (%v), want 1", n, err)
	}
	// Standby down: a commit waits (until the client gives up).
	if _, err := reg.Stop(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	took, err := exec(p.DSN(), "INSERT INTO t VALUES (2)", 2*time.Second)
	if err == nil || took < 1500*time.Millisecond {
		t.Errorf("commit with the synchronous standby down returned after %v (%v); want it to wait", took, err)
	}
	// Destroying the standby releases the primary.
	if err := reg.Destroy(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	if took, err := exec(p.DSN(), "INSERT INTO t VALUES (3)", 10*time.Second); err != nil || took > 5*time.Second {
		t.Errorf("commit after destroying the standby: %v after %v", err, took)
	}
}

// TestIOLimitSlowsCommits: with the data disk throttled to 100 write IOPS, durable
// commits (each needs a WAL write) slow down to about that rate.
func TestIOLimitSlowsCommits(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	ctx := context.Background()
	reg := registry(t)
	st, _, err := reg.Create(ctx, instance.Spec{Name: "io1", Engine: "postgres", Path: filepath.Join(t.TempDir(), "d"),
		MaxConnections: 10, IOLimit: instance.IOLimit{WriteIOPS: 100}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Destroy(context.Background(), "io1") })
	if st, err = reg.Start(ctx, "io1"); err != nil {
		t.Fatal(err)
	}
	if st.Cgroup == "" || !strings.Contains(strings.Join(st.Limits, " "), "write_iops") && !strings.Contains(strings.Join(st.Limits, " "), "wiops") {
		t.Skipf("no I/O throttle in force here: %v", st.Limits)
	}
	conn, err := pgx.Connect(ctx, st.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE c (x int)"); err != nil {
		t.Fatal(err)
	}
	const commits = 60
	start := time.Now()
	for i := range commits {
		if _, err := conn.Exec(ctx, "INSERT INTO c VALUES ($1)", i); err != nil {
			t.Fatal(err)
		}
	}
	rate := commits / time.Since(start).Seconds()
	t.Logf("%d commits at %.1f/s with wiops=100", commits, rate)
	// Unthrottled, this disk commits thousands per second; throttled, a commit costs at
	// least one write, so the rate cannot exceed ~100/s by much (the first writes may
	// ride on the throttle's initial allowance).
	if rate > 150 {
		t.Errorf("%.0f commits/s with the data disk throttled to 100 write IOPS", rate)
	}
}
