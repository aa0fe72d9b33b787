package metrics

// Wait classes: where a database session's time went, as its engine's wait events
// tell (docs/bottlenecks.md maps each engine's events to them).
const (
	// WaitCPU is time active with no wait event: running, or runnable and waiting for
	// a CPU, which the database cannot tell apart.
	WaitCPU = "cpu"
	// WaitDataIO is reading, writing or extending data files (PostgreSQL
	// IO:DataFileRead, DataFileWrite, DataFileExtend…; InnoDB data file I/O).
	WaitDataIO = "data_io"
	// WaitWAL is writing and flushing the log (PostgreSQL IO:WALWrite, WALSync,
	// LWLock:WALWrite…; InnoDB redo log).
	WaitWAL = "wal"
	// WaitLock is heavyweight (row, table, transaction) locks.
	WaitLock = "lock"
	// WaitLWLock is the server's internal locks and latches, but the log's.
	WaitLWLock = "lwlock"
	// WaitClient is waiting for the client inside a transaction (PostgreSQL
	// Client:ClientRead while "idle in transaction" or active).
	WaitClient = "client"
	// WaitOther is every other wait event.
	WaitOther = "other"
)

// WaitClasses are the classes in the order figures show them.
var WaitClasses = []string{WaitCPU, WaitDataIO, WaitWAL, WaitLock, WaitLWLock, WaitClient, WaitOther}

// Waits is where the database's sessions spent their active time over an interval
// or a window, by role and wait class.
type Waits struct {
	// Source names how the profile was taken ("pg_stat_activity sampled at 10 Hz",
	// "pg_wait_sampling profile", …), for the result's labels.
	Source string `json:"source"`
	// Missing says what the server lacked for a full profile ("" when nothing).
	Missing string `json:"missing,omitempty"`
	// Roles: the clients' sessions first (as ProcessRoles' roles), then the
	// background roles sampled.
	Roles []RoleWaits `json:"roles"`
}

// RoleWaits is one role's active time by wait class.
type RoleWaits struct {
	Server string `json:"server,omitempty"`
	Role   string `json:"role"`
	// Seconds is the time observed in each class (WaitClasses), summed over the
	// role's sessions: 4 sessions active all along a 1 s interval make 4 s.
	Seconds map[string]float64 `json:"seconds"`
	// IntervalSeconds is the time the profile covers (for the mean number of active
	// sessions).
	IntervalSeconds float64 `json:"interval_s"`
}

// Active is the role's active time in all classes.
func (r RoleWaits) Active() float64 {
	var sum float64
	for _, s := range r.Seconds {
		sum += s
	}
	return sum
}

// Pct is class's share of the role's active time, in percent; 0 with no active time.
func (r RoleWaits) Pct(class string) float64 {
	if a := r.Active(); a > 0 {
		return 100 * r.Seconds[class] / a
	}
	return 0
}

// Clients is the clients' sessions' profile (the first role), nil when none.
func (w *Waits) Clients() *RoleWaits {
	if w == nil || len(w.Roles) == 0 {
		return nil
	}
	return &w.Roles[0]
}
