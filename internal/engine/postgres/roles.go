package postgres

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/prometheus/procfs"
)

//go:embed sql/backend_pid.sql
var backendPIDSQL string

// roles tells PostgreSQL's processes apart by the titles they set ("postgres:
// checkpointer", "postgres: tpcc tpcc 127.0.0.1(40000) idle").
type roles struct{}

// The roles, as the figures name them; "other" last, as engine.ProcessRoles wants.
const (
	roleClients      = "client_backends"
	roleCheckpointer = "checkpointer"
	roleBgwriter     = "bgwriter"
	roleWALWriter    = "walwriter"
	roleAutovacuum   = "autovacuum"
	roleWALSender    = "walsender"
	roleBackup       = "backup"
	roleOther        = "other"
)

func (roles) Roles() []string {
	return []string{roleClients, roleCheckpointer, roleBgwriter, roleWALWriter, roleAutovacuum, roleWALSender, roleBackup, roleOther}
}

func (roles) ByThread() bool { return false }

// backgroundRoles are the titles of the server's own processes (PostgreSQL 14-18),
// by prefix; a title none of them starts is a client backend's ("user db host
// state").
var backgroundRoles = []struct{ prefix, role string }{
	{"checkpointer", roleCheckpointer},
	{"background writer", roleBgwriter},
	{"walwriter", roleWALWriter},
	{"autovacuum", roleAutovacuum}, // launcher and workers
	{"parallel worker", roleClients},
	{"logical replication", roleOther},
	{"archiver", roleOther},
	{"stats collector", roleOther},
	{"logger", roleOther},
	{"startup", roleOther},
	{"walreceiver", roleOther},
	{"walsummarizer", roleOther},
	{"io worker", roleOther},
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
			return roleBackup, false
		}
		return roleWALSender, false
	}
	for _, b := range backgroundRoles {
		if strings.HasPrefix(rest, b.prefix) {
			return b.role, true
		}
	}
	return roleClients, true
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
