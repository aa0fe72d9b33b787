package postgres

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/prometheus/procfs"

	"github.com/storbench/storbench/internal/procrole"
)

//go:embed sql/backend_pid.sql
var backendPIDSQL string

// roles tells PostgreSQL's processes apart by the titles they set ("postgres:
// checkpointer", "postgres: tpcc tpcc 127.0.0.1(40000) idle").
type roles struct{}

// Roles implements engine.ProcessRoles: the clients' first and "other" last, as it wants.
func (roles) Roles() []string {
	return []string{procrole.Clients, procrole.Checkpointer, procrole.Bgwriter, procrole.WALWriter, procrole.Autovacuum,
		procrole.WALSender, procrole.Backup, procrole.Other}
}

func (roles) ByThread() bool { return false }

// backgroundRoles are the titles of the server's own processes (PostgreSQL 14-18),
// by prefix; a title none of them starts is a client backend's ("user db host
// state").
var backgroundRoles = []struct{ prefix, role string }{
	{"checkpointer", procrole.Checkpointer},
	{"background writer", procrole.Bgwriter},
	{"walwriter", procrole.WALWriter},
	{"autovacuum", procrole.Autovacuum}, // launcher and workers
	{"parallel worker", procrole.Clients},
	{"logical replication", procrole.Other},
	{"archiver", procrole.Other},
	{"stats collector", procrole.Other},
	{"logger", procrole.Other},
	{"startup", procrole.Other},
	{"walreceiver", procrole.Other},
	{"walsummarizer", procrole.Other},
	{"io worker", procrole.Other},
}

// Role implements engine.ProcessRoles. The postmaster's title is its command line
// (no "postgres: "), as is a child's just forked: not told, asked again.
func (roles) Role(title string) (string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(title), "postgres: ")
	if !ok {
		return "", false
	}
	// With cluster_name set, the title is "postgres: NAME: checkpointer".
	if name, after, ok := strings.Cut(rest, ": "); ok && !strings.Contains(name, " ") {
		rest = after
	}
	// A WAL sender serves a standby, or a base backup for its time: while it sends
	// one its title says so (PostgreSQL 15: `walsender postgres [local] sending
	// backup "pg_basebackup base backup"`, as seen in ps; others show the command).
	if strings.HasPrefix(rest, "walsender") {
		if strings.Contains(rest, "sending backup") || strings.Contains(rest, "BASE_BACKUP") {
			return procrole.Backup, false
		}
		return procrole.WALSender, false
	}
	for _, b := range backgroundRoles {
		if strings.HasPrefix(rest, b.prefix) {
			return b.role, true
		}
	}
	return procrole.Clients, true
}

// ServerPID implements engine.ServerProcess: the postmaster is the parent of this
// connection's backend. Both must be PostgreSQL processes of this host: a server in a
// container (another PID namespace) gives ids of other processes here.
func (db *DB) ServerPID(ctx context.Context) (int, error) {
	db.mu.Lock()
	var backend int
	err := db.conn.QueryRow(ctx, backendPIDSQL).Scan(&backend)
	db.mu.Unlock()
	if err != nil {
		return 0, fmt.Errorf("read pg_backend_pid(): %w", err)
	}
	st, err := postgresProcess(backend)
	if err == nil {
		_, err = postgresProcess(st.PPID)
	}
	return st.PPID, err
}

// postgresProcess reads a process of this host that must be PostgreSQL's.
func postgresProcess(pid int) (procfs.ProcStat, error) {
	p, err := procfs.NewProc(pid)
	var st procfs.ProcStat
	if err == nil {
		st, err = p.Stat()
	}
	if err == nil && st.Comm != "postgres" {
		err = fmt.Errorf("it is %s, not postgres", st.Comm)
	}
	if err != nil {
		return st, fmt.Errorf("the server's process %d is not one of this host's (a server in a container or on another host): %w", pid, err)
	}
	return st, nil
}
