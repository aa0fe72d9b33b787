package engine

import (
	"context"
)

// ProcessRoles tells what each process (or thread) of an engine's server does, so
// that its I/O can be summed per role: the backends reading pages that missed the
// cache, the log writer, the checkpointer's bursts, a backup.
type ProcessRoles interface {
	// Roles are every role, in the order reports show them. The first is the
	// clients' (connections, parallel workers): the I/O of a task that began and
	// ended between two samples, never seen, counts under it, as such short-lived
	// tasks are theirs. The last is the one a task whose role cannot be told counts
	// under.
	Roles() []string
	// ByThread tells that the server is one process whose threads are told apart by
	// their names (/proc/PID/task/TID/comm), not processes by their titles.
	ByThread() bool
	// Role names the role of a process from its title (its command line as ps shows
	// it) or of a thread from its name. "" when it cannot be told yet (a process just
	// forked, not yet titled): it counts under the last role and is asked again. A
	// role that may still change (a WAL sender that starts a base backup) is not
	// final: it is asked again every interval.
	Role(name string) (role string, final bool)
}

// ServerProcess is a Database whose server's main process id can be asked, for a
// server on this host: its processes are then sampled by role.
type ServerProcess interface {
	// ServerPID is the server's main process id (meaningful on its own host only).
	ServerPID(ctx context.Context) (int, error)
}

// RolesOf is the process roles of the engine a DSN scheme or instance engine names;
// nil for an engine whose server is not a process of its own (SQLite).
func RolesOf(engine string) ProcessRoles {
	if r := registration(engine); r != nil {
		return r.Roles
	}
	return nil
}
