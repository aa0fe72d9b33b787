package mariadbtest

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

func TestStart(t *testing.T) {
	begin := time.Now()
	s := Start(t)
	t.Logf("Start took %v (socket %s, port %d)", time.Since(begin).Round(time.Millisecond), s.Socket, s.Port)
	ctx := t.Context()

	db, err := sql.Open("mysql", s.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var version string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		t.Fatalf("SELECT VERSION(): %v", err)
	}
	if !strings.Contains(version, "MariaDB") {
		t.Errorf("VERSION() = %q, want a MariaDB", version)
	}
	t.Logf("VERSION() = %s", version)

	// A table, and a transaction committed on one connection.
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=InnoDB"); err != nil {
		t.Fatal(err)
	}
	commits := func() int64 {
		t.Helper()
		var name string
		var n int64
		if err := db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Com_commit'").Scan(&name, &n); err != nil {
			t.Fatalf("SHOW GLOBAL STATUS: %v", err)
		}
		return n
	}
	before := commits()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO t VALUES (?, ?)", 1, "one"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if after := commits(); after <= before {
		t.Errorf("Com_commit %d after a commit, %d before", after, before)
	}

	// The server settings Start asks for, and no binary log.
	for name, want := range map[string]string{
		"innodb_buffer_pool_size":        "134217728",
		"innodb_log_file_size":           "50331648",
		"innodb_flush_log_at_trx_commit": "1",
		"max_connections":                "200",
		"local_infile":                   "ON",
		"log_bin":                        "OFF",
		"character_set_server":           "utf8mb4",
	} {
		var n, v string
		if err := db.QueryRowContext(ctx, "SHOW GLOBAL VARIABLES LIKE ?", name).Scan(&n, &v); err != nil {
			t.Errorf("%s: %v", name, err)
		} else if v != want {
			t.Errorf("%s = %s, want %s", name, v, want)
		}
	}

	// LOAD DATA LOCAL INFILE from a reader, as a loader streams generated rows.
	mysql.RegisterReaderHandler("rows", func() io.Reader { return strings.NewReader("2\ttwo\n3\tthree\n") })
	defer mysql.DeregisterReaderHandler("rows")
	if _, err := db.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::rows' INTO TABLE t"); err != nil {
		t.Fatalf("LOAD DATA LOCAL INFILE: %v", err)
	}

	// A stored procedure (CREATE ROUTINE, EXECUTE).
	if _, err := db.ExecContext(ctx, "CREATE PROCEDURE n_rows(OUT n INT) BEGIN SELECT COUNT(*) INTO n FROM t; END"); err != nil {
		t.Fatalf("CREATE PROCEDURE: %v", err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var n int
	if _, err := conn.ExecContext(ctx, "CALL n_rows(@n)"); err != nil {
		t.Fatalf("CALL: %v", err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT @n").Scan(&n); err != nil || n != 3 {
		t.Errorf("rows = %d (%v), want 3", n, err)
	}

	// InnoDB counters need PROCESS.
	var typ, name, status string
	if err := db.QueryRowContext(ctx, "SHOW ENGINE INNODB STATUS").Scan(&typ, &name, &status); err != nil {
		t.Errorf("SHOW ENGINE INNODB STATUS: %v", err)
	}

	// root: through the socket only, which only the server's user and root can reach.
	rootTCP, err := sql.Open("mysql", fmt.Sprintf("root@tcp(127.0.0.1:%d)/", s.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer rootTCP.Close()
	if err := rootTCP.PingContext(ctx); err == nil {
		t.Error("root logs in over TCP without a password")
	}
	if st, err := os.Stat(s.Dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("server directory: %v %v, want 0700", st.Mode(), err)
	}

	// The URL names the same server, user and database.
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u.User.Password()
	if u.Scheme != "mysql" || u.User.Username() != User || pw != s.Password ||
		u.Host != fmt.Sprintf("127.0.0.1:%d", s.Port) || u.Path != "/"+Database {
		t.Errorf("URL = %s", s.URL)
	}
}

// TestStop: Stop shuts the server down cleanly and leaves no process behind; a second
// Stop does nothing.
func TestStop(t *testing.T) {
	s := Start(t)
	pid := s.PID()
	if pid == 0 {
		t.Fatal("no server process after Start")
	}
	begin := time.Now()
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Logf("Stop took %v", time.Since(begin).Round(time.Millisecond))
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("mariadbd %d still runs after Stop", pid)
	}
	if _, err := os.Stat(s.Socket); err == nil {
		t.Errorf("socket %s left behind", s.Socket)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// TestLongDir: a socket path longer than a unix socket allows moves to a short dir,
// which is made again when the server restarts.
func TestLongDir(t *testing.T) {
	t.Run(strings.Repeat("long", 16), func(t *testing.T) {
		s := Start(t)
		t.Logf("directory %s, socket %s", s.Dir, s.Socket)
		if len(s.Socket) > 100 {
			t.Errorf("socket path %s: %d bytes", s.Socket, len(s.Socket))
		}
		db, err := sql.Open("mysql", s.DSN)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.Ping(); err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if err := db.Ping(); err != nil {
			t.Fatalf("after a restart: %v", err)
		}
	})
}
