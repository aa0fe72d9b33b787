package mysql

import (
	"context"
	"io/fs"
	"strconv"

	"github.com/storbench/storbench/internal/engine"
)

// ConnectionLimit implements engine.ConnectionLimiter: @@max_connections minus
// Threads_connected, with this DB's own pooled connections counted as available.
func (db *DB) ConnectionLimit(ctx context.Context) (engine.ConnectionLimit, error) {
	max, used, err := db.serverLimit(ctx, "connection_limit.sql")
	if err != nil {
		return engine.ConnectionLimit{}, err
	}
	own := db.Pool().Stats().OpenConnections
	return engine.ConnectionLimit{Available: max - used + own, Max: max}, nil
}

// StatementLimit implements engine.StatementLimiter: @@max_prepared_stmt_count minus
// Prepared_stmt_count, and what a session of mode prepares.
func (db *DB) StatementLimit(ctx context.Context, mode engine.Mode) (engine.StatementLimit, error) {
	max, used, err := db.serverLimit(ctx, "statement_limit.sql")
	if err != nil {
		return engine.StatementLimit{}, err
	}
	return engine.StatementLimit{PerSession: db.StatementsPerSession(mode), Available: max - used, Max: max}, nil
}

// serverLimit runs the query of file, which returns a server limit and what is used
// of it now (a status variable: text).
func (db *DB) serverLimit(ctx context.Context, file string) (max, used int, err error) {
	q, err := fs.ReadFile(db.dialect.SQL, file)
	if err != nil {
		return 0, 0, err
	}
	conn, err := db.Pool().Conn(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	var status string
	if err := conn.QueryRowContext(ctx, string(q)).Scan(&max, &status); err != nil {
		return 0, 0, err
	}
	used, err = strconv.Atoi(status)
	return max, used, err
}
