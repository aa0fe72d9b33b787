package postgres

import (
	"context"
	_ "embed"

	"github.com/storbench/storbench/internal/engine"
)

//go:embed sql/connection_limit.sql
var connectionLimitSQL string

// ConnectionLimit implements engine.ConnectionLimiter: max_connections minus the
// reserved slots and the other clients' connections (this DB's own, its schema
// connection and the observer's, are counted as available).
func (db *DB) ConnectionLimit(ctx context.Context) (engine.ConnectionLimit, error) {
	own := []int32{int32(db.conn.PgConn().PID())}
	db.observerMu.Lock()
	if db.observer != nil && !db.observer.IsClosed() {
		own = append(own, int32(db.observer.PgConn().PID()))
	}
	db.observerMu.Unlock()
	var max, reserved, others int
	db.mu.Lock()
	err := db.conn.QueryRow(ctx, connectionLimitSQL, own).Scan(&max, &reserved, &others)
	db.mu.Unlock()
	if err != nil {
		return engine.ConnectionLimit{}, err
	}
	return engine.ConnectionLimit{Available: max - reserved - others, Max: max}, nil
}
