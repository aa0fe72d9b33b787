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
	q, err := fs.ReadFile(db.dialect.SQL, "connection_limit.sql")
	if err != nil {
		return engine.ConnectionLimit{}, err
	}
	conn, err := db.Pool().Conn(ctx)
	if err != nil {
		return engine.ConnectionLimit{}, err
	}
	defer conn.Close()
	var max int
	var connected string
	if err := conn.QueryRowContext(ctx, string(q)).Scan(&max, &connected); err != nil {
		return engine.ConnectionLimit{}, err
	}
	n, err := strconv.Atoi(connected)
	if err != nil {
		return engine.ConnectionLimit{}, err
	}
	own := db.Pool().Stats().OpenConnections
	return engine.ConnectionLimit{Available: max - n + own, Max: max}, nil
}
