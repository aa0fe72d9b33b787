package postgres

import (
	"testing"

	"github.com/storbench/storbench/internal/procrole"
)

// TestRoles classifies PostgreSQL 15's process titles as ps shows them.
func TestRoles(t *testing.T) {
	for _, c := range []struct {
		title, role string
		final       bool
	}{
		{"/usr/lib/postgresql/15/bin/postgres -D /data", "", false}, // the postmaster, or a child not yet titled
		{"postgres: checkpointer ", procrole.Checkpointer, true},
		{"postgres: background writer ", procrole.Bgwriter, true},
		{"postgres: walwriter ", procrole.WALWriter, true},
		{"postgres: autovacuum launcher ", procrole.Autovacuum, true},
		{"postgres: autovacuum worker tpcc", procrole.Autovacuum, true},
		{"postgres: logical replication launcher ", procrole.Other, true},
		{"postgres: tpcc tpcc 127.0.0.1(51234) idle", procrole.Clients, true},
		{"postgres: parallel worker for PID 4242 ", procrole.Clients, true},
		{"postgres: walsender postgres 127.0.0.1(40000) streaming 0/3000148", procrole.WALSender, false},
		{"postgres: walsender postgres 127.0.0.1(40002) BASE_BACKUP", procrole.Backup, false},
		// PostgreSQL 15's title while pg_basebackup streams (read off ps).
		{`postgres: walsender postgres [local] sending backup "pg_basebackup base backup"`, procrole.Backup, false},
		{"postgres: main: checkpointer ", procrole.Checkpointer, true}, // cluster_name = main
	} {
		role, final := roles{}.Role(c.title)
		if role != c.role || final != c.final {
			t.Errorf("%q: %q (final %v), want %q (final %v)", c.title, role, final, c.role, c.final)
		}
	}
}
