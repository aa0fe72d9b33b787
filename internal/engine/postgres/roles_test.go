package postgres

import "testing"

// TestRoles classifies PostgreSQL 15's process titles as ps shows them.
func TestRoles(t *testing.T) {
	for _, c := range []struct {
		title, role string
		final       bool
	}{
		{"/usr/lib/postgresql/15/bin/postgres -D /data", "", false}, // the postmaster, or a child not yet titled
		{"postgres: checkpointer ", roleCheckpointer, true},
		{"postgres: background writer ", roleBgwriter, true},
		{"postgres: walwriter ", roleWALWriter, true},
		{"postgres: autovacuum launcher ", roleAutovacuum, true},
		{"postgres: autovacuum worker tpcc", roleAutovacuum, true},
		{"postgres: logical replication launcher ", roleOther, true},
		{"postgres: tpcc tpcc 127.0.0.1(51234) idle", roleClients, true},
		{"postgres: parallel worker for PID 4242 ", roleClients, true},
		{"postgres: walsender postgres 127.0.0.1(40000) streaming 0/3000148", roleWALSender, false},
		{"postgres: walsender postgres 127.0.0.1(40002) BASE_BACKUP", roleBackup, false},
		// PostgreSQL 15's title while pg_basebackup streams (read off ps).
		{`postgres: walsender postgres [local] sending backup "pg_basebackup base backup"`, roleBackup, false},
		{"postgres: main: checkpointer ", roleCheckpointer, true}, // cluster_name = main
	} {
		role, final := roles{}.Role(c.title)
		if role != c.role || final != c.final {
			t.Errorf("%q: %q (final %v), want %q (final %v)", c.title, role, final, c.role, c.final)
		}
	}
}
