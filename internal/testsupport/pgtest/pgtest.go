// Package pgtest gives integration tests a throwaway PostgreSQL server of their own.
package pgtest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/storbench/storbench/internal/instance/postgres/pgserver"
)

// Start starts a server in a temp dir for the test and stops it when the test ends.
// The database "tpcc" exists and is empty.
func Start(t testing.TB) *pgserver.Server {
	t.Helper()
	return StartIn(t, filepath.Join(t.TempDir(), "pgdata"))
}

// StartIn is Start with the data directory dir (a new directory, on a disk the test
// chose).
func StartIn(t testing.TB, dir string) *pgserver.Server {
	t.Helper()
	return StartBuild(t, dir, "")
}

// StartBuild is StartIn with the build in bin ("": the machine's; Builds).
func StartBuild(t testing.TB, dir, bin string) *pgserver.Server {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts a PostgreSQL server")
	}
	ctx := context.Background()
	s, err := pgserver.Start(ctx, pgserver.Options{
		BinDir: bin,
		Dir:    dir,
		// Small and quick to start; durability stays on (fsync) as in a real run.
		Settings: map[string]string{"shared_buffers": "128MB", "max_connections": "100"},
	})
	if err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(context.Background()); err != nil {
			t.Errorf("stop PostgreSQL: %v", err)
		}
	})
	if err := s.CreateDatabase(ctx, "tpcc"); err != nil {
		t.Fatalf("create database: %v\n%s", err, s.Log())
	}
	return s
}
