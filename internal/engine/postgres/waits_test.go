package postgres

import (
	"testing"

	"github.com/storbench/storbench/internal/engine"
)

// The mapping of pg_stat_activity's rows to roles and wait classes (docs/metrics.md).
func TestWaitClass(t *testing.T) {
	for _, c := range []struct {
		backendType, state, eventType, event string
		role, class                          string // class "": not active
	}{
		{"client backend", "active", "", "", roleClients, engine.WaitCPU},
		{"client backend", "active", "IO", "DataFileRead", roleClients, engine.WaitDataIO},
		{"client backend", "active", "IO", "DataFileExtend", roleClients, engine.WaitDataIO},
		{"client backend", "active", "IO", "WALSync", roleClients, engine.WaitWAL},
		{"client backend", "active", "IO", "WALWrite", roleClients, engine.WaitWAL},
		{"client backend", "active", "LWLock", "WALWrite", roleClients, engine.WaitWAL},
		{"client backend", "active", "LWLock", "WALInsert", roleClients, engine.WaitWAL},
		{"client backend", "active", "LWLock", "BufferContent", roleClients, engine.WaitLWLock},
		{"client backend", "active", "BufferPin", "BufferPin", roleClients, engine.WaitLWLock},
		{"client backend", "active", "Lock", "transactionid", roleClients, engine.WaitLock},
		{"client backend", "active", "Lock", "tuple", roleClients, engine.WaitLock},
		{"client backend", "idle in transaction", "Client", "ClientRead", roleClients, engine.WaitClient},
		{"client backend", "active", "IPC", "SyncRep", roleClients, engine.WaitWAL},
		{"client backend", "active", "IPC", "ProcArrayGroupUpdate", roleClients, engine.WaitOther},
		{"client backend", "active", "Timeout", "PgSleep", roleClients, engine.WaitOther},
		{"client backend", "idle", "Client", "ClientRead", roleClients, ""},
		{"parallel worker", "active", "", "", roleClients, engine.WaitCPU},
		{"checkpointer", "", "Activity", "CheckpointerMain", roleCheckpointer, ""},
		{"checkpointer", "", "Timeout", "CheckpointWriteDelay", roleCheckpointer, ""},
		{"checkpointer", "", "IO", "DataFileSync", roleCheckpointer, engine.WaitDataIO},
		{"checkpointer", "", "", "", roleCheckpointer, engine.WaitCPU},
		{"background writer", "", "Activity", "BgWriterHibernate", roleBgwriter, ""},
		{"walwriter", "", "Activity", "WalWriterMain", roleWALWriter, ""},
		{"walwriter", "", "IO", "WALWrite", roleWALWriter, engine.WaitWAL},
		{"autovacuum worker", "active", "Timeout", "VacuumDelay", roleAutovacuum, ""},
		{"autovacuum worker", "active", "IO", "DataFileRead", roleAutovacuum, engine.WaitDataIO},
		{"autovacuum launcher", "", "Activity", "AutoVacuumMain", roleAutovacuum, ""},
		{"walsender", "active", "IO", "WALRead", roleWALSender, engine.WaitWAL},
		{"logical replication launcher", "", "Activity", "LogicalLauncherMain", roleOther, ""},
		{"pg_wait_sampling collector", "", "Extension", "Extension", roleOther, engine.WaitOther},
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
