package mariadb_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/storbench/storbench/internal/dburl"
	enginemysql "github.com/storbench/storbench/internal/engine/mysql"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/instance/mariadb"
	"github.com/storbench/storbench/internal/instance/mariadb/mariadbserver"
)

// needMariaDB skips the test unless the server and its backup and client tools are
// installed.
func needMariaDB(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a MariaDB server")
	}
	if _, _, err := mariadbserver.Binaries(); err != nil {
		t.Skipf("%v (apt-get install mariadb-server)", err)
	}
	for _, tool := range []string{"mariadb-backup", "mariadb-dump", "mariadb"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (apt-get install mariadb-backup mariadb-client)", tool)
		}
	}
}

func registry(t *testing.T) instance.Registry {
	t.Setenv("STORBENCH_HOME", t.TempDir())
	reg, err := instance.DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// open connects with the instance's DSN, as build and run would.
func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	cfg, err := enginemysql.DriverConfig(dsn)
	if err != nil {
		t.Fatalf("DSN %q: %v", dburl.Redact(dsn), err)
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	return db
}

func exec1(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// rows is the table's content as one comparable string.
func rows(t *testing.T, db *sql.DB) string {
	t.Helper()
	var n, sum int64
	if err := db.QueryRow("SELECT count(*), coalesce(sum(v), 0) FROM t").Scan(&n, &sum); err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(n, 10) + " rows, sum " + strconv.FormatInt(sum, 10)
}

// processesOf lists the processes whose command line mentions dir.
func processesOf(dir string) []string {
	var found []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), dir) {
			found = append(found, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}

// TestLifecycle creates an instance with 256MB and its logs on a second target,
// checks its settings, takes a physical and a logical backup and restores each over
// changed data, and destroys it: only what storbench created goes.
func TestLifecycle(t *testing.T) {
	needMariaDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	reg := registry(t)
	base := t.TempDir()
	keep := filepath.Join(base, "unrelated.txt")
	if err := os.WriteFile(keep, []byte("the user's"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A directory storbench did not create and that is not empty is refused.
	foreign := filepath.Join(base, "foreign")
	if err := os.MkdirAll(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(foreign, "x"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := reg.Create(ctx, instance.Spec{Name: "bad", Engine: "mariadb", Path: foreign, MaxConnections: 10})
	if !errors.Is(err, input.ErrInvalid) {
		t.Errorf("create in a non-empty directory: %v, want an input error", err)
	}
	if _, err := os.Stat(filepath.Join(foreign, "x")); err != nil {
		t.Errorf("a refused create touched the user's file: %v", err)
	}

	// The data in a new directory, the logs in a directory the user made (kept).
	walUser := filepath.Join(base, "wal")
	if err := os.Mkdir(walUser, 0o755); err != nil {
		t.Fatal(err)
	}
	spec := instance.Spec{Name: "m1", Engine: "mariadb", Path: filepath.Join(base, "inst"), WALPath: walUser,
		MemoryBytes: 256 << 20, CPUs: "0", MaxConnections: 50}
	start := time.Now()
	st, _, err := reg.Create(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Destroy(context.Background(), "m1") })
	if st, err = reg.Start(ctx, "m1"); err != nil {
		t.Fatal(err)
	}
	t.Logf("create + start: %.2f s; %s; limits: %v", time.Since(start).Seconds(), st.Version, st.Limits)
	if !strings.Contains(st.Version, "MariaDB") {
		t.Errorf("version %q does not name MariaDB", st.Version)
	}
	dsn := st.DSN()
	if !strings.HasPrefix(dsn, "mysql://storbench:") || !strings.HasSuffix(dsn, "@127.0.0.1:"+strconv.Itoa(st.Port)+"/tpcc") {
		t.Errorf("DSN %s, want mysql://storbench:PASSWORD@127.0.0.1:%d/tpcc", dburl.Redact(dsn), st.Port)
	}
	if st.Password == "" || strings.Contains(dburl.Redact(dsn), st.Password) {
		t.Errorf("the DSN's password is empty or survives dburl.Redact: %s", dburl.Redact(dsn))
	}
	if fi, err := os.Stat(filepath.Join(os.Getenv("STORBENCH_HOME"), "instances", "m1.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the state file, which holds the password, is not 0600: %v %v", fi.Mode(), err)
	}

	db := open(t, dsn)
	want := map[string]string{
		"innodb_buffer_pool_size":        strconv.FormatInt(mariadb.BufferPool(256<<20), 10),
		"innodb_flush_log_at_trx_commit": "1",
		"sync_binlog":                    "1",
		"log_bin":                        "ON",
		"innodb_doublewrite":             "ON",
		"max_connections":                "50",
		"max_prepared_stmt_count":        strconv.Itoa(mariadb.PreparedStatements(50)),
		"local_infile":                   "ON",
		"character_set_server":           "utf8mb4",
		"bind_address":                   "127.0.0.1",
		"port":                           strconv.Itoa(st.Port),
		"innodb_log_group_home_dir":      filepath.Join(walUser, "wal") + "/",
	}
	for name, w := range want {
		var n, v string
		if err := db.QueryRow("SHOW GLOBAL VARIABLES LIKE '"+name+"'").Scan(&n, &v); err != nil {
			t.Fatalf("SHOW VARIABLES %s: %v", name, err)
		}
		if v != w && !(name == "innodb_log_group_home_dir" && v+"/" == w) {
			t.Errorf("%s = %s, want %s", name, v, w)
		}
	}
	// The redo log and the binary log are on the second target.
	for _, pattern := range []string{"ib_logfile0", "mariadb-bin.0*"} {
		if m, _ := filepath.Glob(filepath.Join(walUser, "wal", pattern)); len(m) == 0 {
			t.Errorf("no %s in %s", pattern, filepath.Join(walUser, "wal"))
		}
	}
	s, err := reg.Status("m1")
	if err != nil || s.PID == 0 {
		t.Fatalf("status: pid %d, %v", s.PID, err)
	}
	if os.Geteuid() == 0 {
		if st.Cgroup == "" {
			t.Errorf("running as root but no cgroup holds the instance: %v", st.Limits)
		} else if cg, _ := os.ReadFile("/proc/" + strconv.Itoa(s.PID) + "/cgroup"); !strings.Contains(string(cg), "m1") {
			t.Errorf("mariadbd is not in the instance's cgroup:\n%s", cg)
		}
	}
	// Replicas are postgres-only.
	_, _, err = reg.Create(ctx, instance.Spec{Name: "r1", Engine: "mariadb", Path: filepath.Join(base, "replica"),
		MaxConnections: 10, ReplicaOf: "m1"})
	if !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), "postgres-only") {
		t.Errorf("create --replica-of a mariadb instance: %v, want an input error", err)
	}
	if _, err := os.Stat(filepath.Join(base, "replica")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused replica left its directory behind")
	}

	exec1(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL)")
	exec1(t, db, "INSERT INTO t SELECT seq, seq * 3 FROM seq_1_to_1000")
	backedUp := rows(t, db)

	for _, method := range []string{"physical", "logical"} {
		how, err := instance.ParseBackupMethod(method, 1)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(base, "backup-"+method)
		tb, err := reg.Backup(ctx, "m1", dir, how)
		if err != nil {
			t.Fatalf("%s backup: %v", method, err)
		}
		exec1(t, db, "DELETE FROM t WHERE id % 2 = 0")
		exec1(t, db, "INSERT INTO t VALUES (5000, 1)")
		if got := rows(t, db); got == backedUp {
			t.Fatal("the change did not change the table")
		}
		// A backup of another engine's instance is refused before anything stops.
		record := filepath.Join(dir, "backup.json")
		b, err := os.ReadFile(record)
		if err != nil || !strings.Contains(string(b), `"engine":"mariadb"`) {
			t.Fatalf("backup record %s lacks the engine (%v)", b, err)
		}
		if err := os.WriteFile(record, []byte(strings.Replace(string(b), "mariadb", "postgres", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := reg.Restore(ctx, "m1", dir, 0); !errors.Is(err, input.ErrInvalid) {
			t.Errorf("restore of a postgres backup into a mariadb instance: %v, want an input error", err)
		}
		if s, _ := reg.Status("m1"); s.PID == 0 {
			t.Fatal("a refused restore stopped the instance")
		}
		if err := os.WriteFile(record, b, 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := reg.Restore(ctx, "m1", dir, 0)
		if err != nil {
			t.Fatalf("%s restore: %v", method, err)
		}
		t.Logf("%s: backup %.1f MB in %.2f s, restore %.1f MB in %.2f s", method,
			float64(tb.Bytes)/1e6, tb.Seconds, float64(tr.Bytes)/1e6, tr.Seconds)
		db.Close()
		db = open(t, dsn) // a physical restore restarted the server
		if got := rows(t, db); got != backedUp {
			t.Errorf("after the %s restore: %s, want %s as backed up", method, got, backedUp)
		}
		if method == "physical" {
			// The study's way: another instance (another password) from the base image.
			if _, _, err := reg.Create(ctx, instance.Spec{Name: "m2", Engine: "mariadb", Path: filepath.Join(base, "inst2"), MaxConnections: 10}); err != nil {
				t.Fatal(err)
			}
			if _, err := reg.Restore(ctx, "m2", dir, 0); !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), "is a backup of instance m1") {
				t.Errorf("restore of m1's backup into m2 without leave: %v, want an input error saying whose backup it is", err)
			}
			if _, err := reg.RestoreWith(ctx, "m2", dir, instance.RestoreOptions{OtherInstance: true}); err != nil {
				t.Fatalf("restore m1's backup into m2: %v", err)
			}
			st2, _ := reg.Load("m2")
			if got := rows(t, open(t, st2.DSN())); got != backedUp {
				t.Errorf("m2 restored from m1's backup: %s, want %s", got, backedUp)
			}
			if err := reg.Destroy(ctx, "m2"); err != nil {
				t.Fatal(err)
			}
		}
		if err := instance.RemoveBackup(dir, "m1"); err != nil {
			t.Error(err)
		}
	}
	db.Close()

	// Stop and start again, then destroy.
	if _, err := reg.Stop(ctx, "m1"); err != nil {
		t.Fatal(err)
	}
	if s, _ := reg.Status("m1"); s.PID != 0 {
		t.Fatalf("still running after stop (pid %d)", s.PID)
	}
	if st, err = reg.Start(ctx, "m1"); err != nil {
		t.Fatal(err)
	}
	if got := rows(t, open(t, st.DSN())); got != backedUp {
		t.Errorf("after a restart: %s, want %s", got, backedUp)
	}
	if err := reg.Destroy(ctx, "m1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(spec.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s, which storbench created, is still there", spec.Path)
	}
	if entries, err := os.ReadDir(walUser); err != nil || len(entries) != 0 {
		t.Errorf("the user's WAL directory: %v, %d entries left; want it kept and emptied", err, len(entries))
	}
	for _, p := range []string{base, keep, filepath.Join(foreign, "x")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("destroy removed %s, which storbench did not create", p)
		}
	}
	if procs := processesOf(base); len(procs) > 0 {
		t.Errorf("processes of the instance still run after destroy: %q", procs)
	}
	t.Logf("whole lifecycle: %.1f s", time.Since(start).Seconds())
}

func TestBufferPool(t *testing.T) {
	for m, want := range map[int64]int64{
		64 << 20: 32 << 20, 256 << 20: 128 << 20, 1 << 30: 1 << 30 * 7 / 10, 2 << 30: 2 << 30 * 7 / 10,
	} {
		if got := mariadb.BufferPool(m); got != want {
			t.Errorf("BufferPool(%d MB) = %d MB, want %d MB", m>>20, got>>20, want>>20)
		}
	}
	if s := mariadb.Settings(0, 10); s["innodb_buffer_pool_size"] != "" {
		t.Errorf("without memory the buffer pool is set: %s", s["innodb_buffer_pool_size"])
	}
}

// TestLongPath: a socket path longer than a unix socket's goes to a short directory
// of its own, which stop removes.
func TestLongPath(t *testing.T) {
	needMariaDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reg := registry(t)
	path := filepath.Join(t.TempDir(), strings.Repeat("long-directory-name-", 5), "inst")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := reg.Create(ctx, instance.Spec{Name: "long", Engine: "mariadb", Path: path, MaxConnections: 10}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Destroy(context.Background(), "long") })
	st, err := reg.Start(ctx, "long")
	if err != nil {
		t.Fatal(err)
	}
	socket := st.Settings["socket"]
	if len(socket) > 100 || strings.HasPrefix(socket, path) {
		t.Errorf("socket %s: want a short path outside %s", socket, path)
	}
	if fi, err := os.Stat(filepath.Dir(socket)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the socket's directory is not 0700: %v", err)
	}
	var one int
	if err := open(t, st.DSN()).QueryRow("SELECT 1").Scan(&one); err != nil {
		t.Fatal(err)
	}
	if err := reg.Destroy(ctx, "long"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(socket)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket's directory %s is left after destroy (%v)", filepath.Dir(socket), err)
	}
}
