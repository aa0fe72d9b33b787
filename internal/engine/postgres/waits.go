package postgres

import (
	"context"
	_ "embed"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/procrole"
)

//go:embed sql/session_waits.sql
var sessionWaitsSQL string

const sessionWaitsSource = "pg_stat_activity"

// SessionWaits implements engine.WaitSampler on the observer's connection.
func (db *DB) SessionWaits(ctx context.Context) (engine.SessionWaits, error) {
	w := engine.SessionWaits{Roles: roles{}.Roles(), Source: sessionWaitsSource}
	err := db.observe(ctx, func(conn *pgx.Conn, note string) error {
		if note != "" {
			// Many queries a second in the benchmark database would count among
			// the commits its TPM is computed from.
			return errors.New(`no wait samples: the maintenance database "postgres" is not reachable, and sampled from the benchmark database they would count among its commits`)
		}
		rows, err := conn.Query(ctx, sessionWaitsSQL, db.cfg.Database)
		if err != nil {
			return err
		}
		var backendType, state, eventType, event string
		var n int
		_, err = pgx.ForEachRow(rows, []any{&backendType, &state, &eventType, &event, &n}, func() error {
			role := roleOfBackend(backendType)
			if class, active := waitClass(role, state, eventType, event); active && role != procrole.Other {
				w.Sessions = append(w.Sessions, engine.SessionCount{Role: role, Class: class, N: n})
			}
			return nil
		})
		return err
	})
	return w, err
}

// roleOfBackend names the role of a pg_stat_activity backend_type as ProcessRoles
// names the process: the background processes' titles are their backend types.
func roleOfBackend(backendType string) string {
	switch backendType {
	case "client backend":
		return procrole.Clients
	case "walsender":
		return procrole.WALSender
	}
	for _, b := range backgroundRoles {
		if strings.HasPrefix(backendType, b.prefix) {
			return b.role
		}
	}
	return procrole.Other
}

// waitClass is where PostgreSQL's wait events (docs/metrics.md lists the mapping)
// put a session's time, and whether the session was active at all.
//
// A client session is active unless idle (those are not read): in a statement, or
// idle in a transaction, which the client holds open (Client:ClientRead). A
// background process is idle while it waits for work (Activity:*, the
// checkpointer's CheckpointerMain) or sleeps on purpose (Timeout:*, the spread
// checkpoint's CheckpointWriteDelay, autovacuum's VacuumDelay).
func waitClass(role, state, eventType, event string) (class string, active bool) {
	if role != procrole.Clients && (eventType == "Activity" || eventType == "Timeout") {
		return "", false
	}
	if state == "idle" {
		return "", false
	}
	switch eventType {
	case "":
		return engine.WaitCPU, true
	case "IO":
		// WALWrite, WALSync, WALRead, WALInitWrite…; the rest are files of data:
		// relations, SLRUs (transaction status), temporary files.
		if strings.HasPrefix(event, "WAL") {
			return engine.WaitWAL, true
		}
		return engine.WaitDataIO, true
	case "LWLock":
		// WALWrite, WALInsert, WALBufMapping: waiting for another's log write.
		if strings.HasPrefix(event, "WAL") {
			return engine.WaitWAL, true
		}
		return engine.WaitLWLock, true
	case "BufferPin":
		return engine.WaitLWLock, true
	case "Lock":
		return engine.WaitLock, true
	case "IPC":
		// A commit waiting for a synchronous standby's flush waits on the log.
		if event == "SyncRep" {
			return engine.WaitWAL, true
		}
	case "Client":
		return engine.WaitClient, true
	}
	return engine.WaitOther, true
}
