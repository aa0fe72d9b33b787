package mysql

import (
	"context"
	_ "embed"
	"errors"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/procrole"
)

//go:embed sql/wait_profile.sql
var waitProfileSQL string

// errTableAccessDenied is ER_TABLEACCESS_DENIED_ERROR: SELECT denied on a table.
const errTableAccessDenied = 1142

const (
	waitProfileSource = "performance_schema (statements and waits of the clients' threads, by user) and Innodb_row_lock_time"
	// waitProfileMissing is what this profile cannot tell, whatever the server.
	waitProfileMissing = "CPU is not told from the waits performance_schema does not time (InnoDB's redo log writes and flushes in MariaDB, its latches, its row locks' mutexes): statement time outside the timed waits is under other; " +
		"time waiting for the client inside a transaction is not told"
	performanceSchemaOff = "performance_schema is off on this server (performance_schema = ON in its my.cnf, then a restart; managed instances have it): no wait profile"
)

// WaitProfile implements engine.WaitProfiler on the database's pool: the clients'
// cumulative statement time split by the waits performance_schema times in them.
func (db *DB) WaitProfile(ctx context.Context) (engine.WaitProfile, error) {
	rows, err := db.Pool().QueryContext(ctx, waitProfileSQL)
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == errTableAccessDenied {
		return engine.WaitProfile{Source: "performance_schema", Missing: "this user may not read performance_schema (GRANT SELECT ON performance_schema.* TO it; managed instances' user may): no wait profile"}, nil
	}
	if err != nil {
		return engine.WaitProfile{}, err
	}
	defer rows.Close()
	picoseconds := map[string]float64{}
	for rows.Next() {
		var name string
		var v float64
		if err := rows.Scan(&name, &v); err != nil {
			return engine.WaitProfile{}, err
		}
		picoseconds[name] += v
	}
	if err := rows.Err(); err != nil {
		return engine.WaitProfile{}, err
	}
	if len(picoseconds) == 0 {
		return engine.WaitProfile{Source: "performance_schema", Missing: performanceSchemaOff}, nil
	}
	waited := map[string]float64{}
	for name, ps := range picoseconds {
		if name != "statements" {
			waited[eventClass(name)] += ps / 1e12
		}
	}
	// Statement time left after the timed waits is not all CPU (waitProfileMissing):
	// other.
	p := engine.WaitProfile{Roles: []string{procrole.Connections}, Source: waitProfileSource, Missing: waitProfileMissing,
		Active: []engine.RoleClassSeconds{{Role: procrole.Connections, Seconds: picoseconds["statements"] / 1e12}}, Rest: engine.WaitOther}
	for class, s := range waited {
		p.Seconds = append(p.Seconds, engine.RoleClassSeconds{Role: procrole.Connections, Class: class, Seconds: s})
	}
	return p, nil
}

// eventClass maps performance_schema's wait events (and InnoDB's row lock time) to
// classes (docs/metrics.md lists them).
func eventClass(event string) string {
	switch {
	case event == "innodb_row_lock_time", strings.HasPrefix(event, "wait/lock/metadata/"):
		return engine.WaitLock
	case strings.HasPrefix(event, "wait/io/file/sql/binlog"), strings.HasPrefix(event, "wait/io/file/sql/relaylog"),
		event == "wait/io/file/innodb/innodb_log_file":
		// The binary log is synced at commit (sync_binlog = 1); MySQL 8 times its
		// redo log files.
		return engine.WaitWAL
	case strings.HasPrefix(event, "wait/io/file/"):
		return engine.WaitDataIO
	case strings.HasPrefix(event, "wait/synch/"):
		return engine.WaitLWLock
	}
	return engine.WaitOther
}
