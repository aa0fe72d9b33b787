package engine

import "context"

// Wait classes: where a database session's time went, as its engine's wait events
// tell. Each engine maps its own events to them in one place (its waits.go);
// package metrics sums them (and names them the same: metrics.WaitCPU…).
const (
	WaitCPU    = "cpu"     // active with no wait event: running, or waiting for a CPU
	WaitDataIO = "data_io" // reading, writing, extending, syncing data files
	WaitWAL    = "wal"     // writing and flushing the log, and waiting for its lock
	WaitLock   = "lock"    // heavyweight locks: rows, tables, transactions
	WaitLWLock = "lwlock"  // the server's internal locks and latches, but the log's
	WaitClient = "client"  // waiting for the client inside a transaction
	WaitOther  = "other"   // every other wait event
)

// WaitSampler is a Database whose server shows what each of its sessions is doing at
// this moment (PostgreSQL's pg_stat_activity): package metrics reads it many times a
// second and counts each active session's samples by class.
type WaitSampler interface {
	// SessionWaits reads once what the server's sessions are doing, leaving out
	// the reader's own and the idle ones. It reads on the observer's connection,
	// never on a measured user's.
	SessionWaits(ctx context.Context) (SessionWaits, error)
}

// SessionWaits is one reading of what the server's active sessions were doing.
type SessionWaits struct {
	// Roles are every role a session may have, the clients' first, named as the
	// engine's ProcessRoles name them.
	Roles []string
	// Sessions counts the active sessions by role and class.
	Sessions []SessionCount
	// Source names the view read, for the result's labels.
	Source string
}

// SessionCount is how many sessions of a role were active in a wait class.
type SessionCount struct {
	Role, Class string
	N           int
}

// WaitProfiler is a Database whose server keeps its sessions' wait times itself,
// cumulative (MariaDB's performance_schema): package metrics takes the difference
// of two readings.
type WaitProfiler interface {
	WaitProfile(ctx context.Context) (WaitProfile, error)
}

// WaitProfile is a server's cumulative time by role and class.
type WaitProfile struct {
	// Roles are every role profiled, the clients' first (none: Missing says why).
	Roles []string
	// Seconds is the time counted so far by role and class.
	Seconds []RoleClassSeconds
	// Active is, where the server times its sessions' whole active time apart from
	// their waits (statements), each role's so far: over an interval, what of it the
	// classes do not account for counts under Rest.
	Active []RoleClassSeconds
	Rest   string
	// Source names the profile, Missing what it lacks (or why there is none).
	Source, Missing string
}

// RoleClassSeconds is a role's cumulative time in a wait class.
type RoleClassSeconds struct {
	Role, Class string
	Seconds     float64
}
