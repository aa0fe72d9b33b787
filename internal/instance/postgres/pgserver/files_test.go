package pgserver_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/instance/postgres/pgserver"
	"github.com/storbench/storbench/internal/testsupport/pgtest"
)

// TestRequirePasswordNotThroughLinks: the data directory is the postgres user's,
// who can put a symbolic or hard link to a file of the host where pg_hba.conf was;
// requiring a password (as root) refuses it, naming it, and leaves that file as it
// was instead of replacing it.
func TestRequirePasswordNotThroughLinks(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("initialises a PostgreSQL cluster")
	}
	ctx := t.Context()
	dir := t.TempDir()
	s, err := pgserver.Init(ctx, pgserver.Options{Dir: filepath.Join(dir, "data")})
	if err != nil {
		t.Fatal(err)
	}
	host := filepath.Join(dir, "host-file") // a file of the host's, e.g. /etc/shadow
	if err := os.WriteFile(host, []byte("the host's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hba := filepath.Join(s.Dir, "pg_hba.conf")
	for kind, plant := range map[string]func(string, string) error{"symbolic link": os.Symlink, "hard link": os.Link} {
		if err := os.Remove(hba); err != nil {
			t.Fatal(err)
		}
		if err := plant(host, hba); err != nil {
			t.Fatal(err)
		}
		s.Password = "secret"
		if err := s.RequirePassword(ctx); err == nil || !strings.Contains(err.Error(), hba) {
			t.Errorf("pg_hba.conf a %s to a file of the host: %v, want a refusal naming it", kind, err)
		}
		if b, _ := os.ReadFile(host); string(b) != "the host's\n" {
			t.Fatalf("requiring a password through a %s replaced the host's file with %q", kind, b)
		}
	}
}

// TestRequirePasswordFailsInOneLine: postgres --single's output on a failure (here a
// server running in the directory) is a FATAL line and a HINT; the error keeps the
// FATAL line alone.
func TestRequirePasswordFailsInOneLine(t *testing.T) {
	t.Parallel()
	s := pgtest.Start(t)
	s.Password = "secret"
	err := s.RequirePassword(context.Background())
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), `FATAL:  lock file "postmaster.pid" already exists`) {
		t.Errorf("RequirePassword with the server running: %q; want one line with the FATAL line", err)
	}
}
