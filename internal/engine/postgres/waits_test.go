package postgres

import (
	"testing"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/procrole"
)

// The mapping of pg_stat_activity's rows to roles and wait classes (docs/metrics.md).
func TestWaitClass(t *testing.T) {
	for _, c := range []struct {
		backendType, state, eventType, event string
		role, class                          string // class "": not active
	}{
		{"client backend", "active", "", "", procrole.Clients, engine.WaitCPU},
		{"client backend", "active", "IO", "DataFileRead", procrole.Clients, engine.WaitDataIO},
		{"client backend", "active", "IO", "DataFileExtend", procrole.Clients, engine.WaitDataIO},
		{"client backend", "active", "IO", "WALSync", procrole.Clients, engine.WaitWAL},
		{"client backend", "active", "IO", "WALWrite", procrole.Clients, engine.WaitWAL},
		{"client backend", "active", "LWLock", "WALWrite", procrole.Clients, engine.WaitWAL},
		{"client backend", "active", "LWLock", "WALInsert", procrole.Clients, engine.WaitWAL},
		{"client backend", "active", "LWLock", "BufferContent", procrole.Clients, engine.WaitLWLock},
		{"client backend", "active", "BufferPin", "BufferPin", procrole.Clients, engine.WaitLWLock},
		{"client backend", "active", "Lock", "transactionid", procrole.Clients, engine.WaitLock},
		{"client backend", "active", "Lock", "tuple", procrole.Clients, engine.WaitLock},
		{"client backend", "idle in transaction", "Client", "ClientRead", procrole.Clients, engine.WaitClient},
		{"client backend", "active", "IPC", "SyncRep", procrole.Clients, engine.WaitWAL},
		{"client backend", "active", "IPC", "ProcArrayGroupUpdate", procrole.Clients, engine.WaitOther},
		{"client backend", "active", "Timeout", "PgSleep", procrole.Clients, engine.WaitOther},
		{"client backend", "idle", "Client", "ClientRead", procrole.Clients, ""},
		{"parallel worker", "active", "", "", procrole.Clients, engine.WaitCPU},
		{"checkpointer", "", "Activity", "CheckpointerMain", procrole.Checkpointer, ""},
		{"checkpointer", "", "Timeout", "CheckpointWriteDelay", procrole.Checkpointer, ""},
		{"checkpointer", "", "IO", "DataFileSync", procrole.Checkpointer, engine.WaitDataIO},
		{"checkpointer", "", "", "", procrole.Checkpointer, engine.WaitCPU},
		{"background writer", "", "Activity", "BgWriterHibernate", procrole.Bgwriter, ""},
		{"walwriter", "", "Activity", "WalWriterMain", procrole.WALWriter, ""},
		{"walwriter", "", "IO", "WALWrite", procrole.WALWriter, engine.WaitWAL},
		{"autovacuum worker", "active", "Timeout", "VacuumDelay", procrole.Autovacuum, ""},
		{"autovacuum worker", "active", "IO", "DataFileRead", procrole.Autovacuum, engine.WaitDataIO},
		{"autovacuum launcher", "", "Activity", "AutoVacuumMain", procrole.Autovacuum, ""},
		{"walsender", "active", "IO", "WALRead", procrole.WALSender, engine.WaitWAL},
		{"logical replication launcher", "", "Activity", "LogicalLauncherMain", procrole.Other, ""},
		{"pg_wait_sampling collector", "", "Extension", "Extension", procrole.Other, engine.WaitOther},
	} {
		role := roleOfBackend(c.backendType)
		class, active := waitClass(role, c.state, c.eventType, c.event)
		if !active {
			class = ""
		}
		if role != c.role || class != c.class {
			t.Errorf("%s %q %s:%s: role %s, class %q; want %s, %q", c.backendType, c.state, c.eventType, c.event, role, class, c.role, c.class)
		}
	}
}
