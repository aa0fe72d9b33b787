// Package mariadbtest gives integration tests a throwaway MariaDB server of their own.
package mariadbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"maps"
	"path/filepath"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/instance/mariadb/mariadbserver"
)

// The database and the user that Start creates.
const (
	Database = "tpcc"
	User     = "storbench"
)

// Server is a running server with the database "tpcc" (empty) and the user
// storbench@127.0.0.1, which has all privileges on it.
type Server struct {
	*mariadbserver.Server
	// DSN is go-sql-driver/mysql's form:
	// storbench:PASSWORD@tcp(127.0.0.1:PORT)/tpcc?interpolateParams=true.
	DSN string
	// URL is storbench's --dsn form: mysql://storbench:PASSWORD@127.0.0.1:PORT/tpcc.
	URL      string
	Password string // storbench's, random
}

// Settings are the server options of Start: small, quick to start, and durable (each
// commit flushes the redo log) as in a real run.
var Settings = map[string]string{
	"innodb_buffer_pool_size":        "128M",
	"innodb_log_file_size":           "48M",
	"innodb_flush_log_at_trx_commit": "1",
	"max_connections":                "200",
	// Debian's my.cnf says utf8mb4, but the server reads only its own (latin1 otherwise).
	"character_set_server": "utf8mb4",
	"collation_server":     "utf8mb4_bin",
}

// Start starts a server in a temp dir for the test and stops it when the test ends. It
// skips the test when MariaDB is not installed (or with -short).
func Start(t testing.TB) *Server {
	t.Helper()
	return start(t, filepath.Join(t.TempDir(), "mariadb"), nil)
}

// StartIn is Start with the server's directory dir (which it creates), e.g. on a loop
// device of the test's own.
func StartIn(t testing.TB, dir string) *Server {
	t.Helper()
	return start(t, dir, nil)
}

// StartWith is Start with more server options (e.g. mariadbserver.WaitProfileSettings),
// beside Settings.
func StartWith(t testing.TB, extra map[string]string) *Server {
	t.Helper()
	return start(t, filepath.Join(t.TempDir(), "mariadb"), extra)
}

func start(t testing.TB, dir string, extra map[string]string) *Server {
	t.Helper()
	settings := maps.Clone(Settings)
	maps.Copy(settings, extra)
	if testing.Short() {
		t.Skip("integration test: starts a MariaDB server")
	}
	if _, _, err := mariadbserver.Binaries(); err != nil {
		t.Skipf("%v (apt-get install mariadb-server)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := mariadbserver.Init(ctx, mariadbserver.Options{
		Dir:      dir,
		Settings: settings,
	})
	if err != nil {
		t.Fatalf("create MariaDB data directory: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(context.Background()); err != nil {
			t.Errorf("stop MariaDB: %v", err)
		}
	})
	if err := s.Start(ctx); err != nil {
		t.Fatalf("start MariaDB: %v", err)
	}
	pw := make([]byte, 12)
	_, _ = rand.Read(pw)
	password := hex.EncodeToString(pw)
	if err := errors.Join(s.CreateDatabase(ctx, Database), s.CreateUser(ctx, User, password, Database)); err != nil {
		t.Fatalf("create database and user: %v\n%s", err, s.LogTail(30))
	}
	return &Server{
		Server:   s,
		DSN:      s.DSN(User, password, Database),
		URL:      s.URL(User, password, Database),
		Password: password,
	}
}

// DSN starts a server (Start) and returns its go-sql-driver/mysql DSN.
func DSN(t testing.TB) string { return Start(t).DSN }
