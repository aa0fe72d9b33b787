package mysql

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"

	"github.com/storbench/storbench/internal/procrole"
)

//go:embed sql/pid_file.sql
var pidFileSQL string

// roles tells the server's threads apart by the names they give themselves
// (MySQL 8's InnoDB threads, "connection"). A server that names none of its
// threads (MariaDB 10.11: every thread is "mariadbd") has all its I/O under "other".
type roles struct{}

// Roles implements engine.ProcessRoles: the connections first and "other" last, as it wants.
func (roles) Roles() []string {
	return []string{procrole.Connections, procrole.PageCleaners, procrole.LogWriter, procrole.IOThreads, procrole.Other}
}

func (roles) ByThread() bool { return true }

// threadRoles are thread names by prefix (a comm is at most 15 characters).
var threadRoles = []struct{ prefix, role string }{
	{"connection", procrole.Connections},
	{"one_connection", procrole.Connections},
	{"ib_pg_flush", procrole.PageCleaners},
	{"page_cleaner", procrole.PageCleaners},
	{"ib_log_", procrole.LogWriter},
	{"log_writer", procrole.LogWriter},
	{"ib_io_", procrole.IOThreads},
}

// Role implements engine.ProcessRoles. A thread may be renamed (a pooled thread
// taking a connection), so no name is final.
func (roles) Role(name string) (string, bool) {
	for _, t := range threadRoles {
		if strings.HasPrefix(name, t.prefix) {
			return t.role, false
		}
	}
	return procrole.Other, false
}

// ServerPID implements engine.ServerProcess: the process id in the server's pid
// file, which must be a MariaDB or MySQL server of this host.
func (db *DB) ServerPID(ctx context.Context) (int, error) {
	var file, datadir string
	if err := db.Pool().QueryRowContext(ctx, pidFileSQL).Scan(&file, &datadir); err != nil {
		return 0, fmt.Errorf("read @@pid_file: %w", err)
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(datadir, file)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, fmt.Errorf("the server's pid file (a server in a container or on another host?): %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("the server's pid file %s holds no process id", file)
	}
	p, err := procfs.NewProc(pid)
	var comm string
	if err == nil {
		comm, err = p.Comm()
	}
	if err == nil && !slices.Contains([]string{"mariadbd", "mysqld"}, comm) {
		err = fmt.Errorf("it is %s", comm)
	}
	if err != nil {
		return 0, fmt.Errorf("process %d of %s is not the server: %w", pid, file, err)
	}
	return pid, nil
}
