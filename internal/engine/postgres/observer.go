package postgres

import (
	"context"
	_ "embed"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/storbench/storbench/internal/engine"
)

var (
	//go:embed sql/activity.sql
	activitySQL string
	//go:embed sql/activity_17.sql
	activity17SQL string
	//go:embed sql/storage.sql
	storageSQL string
)

const (
	activitySource   = "pg_stat_database (this database: commits, rollbacks, blocks, temp bytes), pg_stat_wal and pg_stat_bgwriter (whole server: WAL bytes, checkpoints)"
	activity17Source = "pg_stat_database (this database: commits, rollbacks, blocks, temp bytes), pg_stat_wal and pg_stat_checkpointer (whole server: WAL bytes, checkpoints)"
)

// Activity implements engine.Observer. It reads on a connection of its own, so a
// sampler never delays the run's reads of the throughput counters at the window edges.
func (db *DB) Activity(ctx context.Context) (engine.Activity, error) {
	db.observerMu.Lock()
	defer db.observerMu.Unlock()
	if db.observer == nil || db.observer.IsClosed() {
		conn, err := pgx.ConnectConfig(ctx, db.cfg)
		if err != nil {
			return engine.Activity{}, err
		}
		db.observer = conn
	}
	major, err := serverMajor(db.observer.PgConn().ParameterStatus("server_version"))
	if err != nil {
		return engine.Activity{}, err
	}
	query, source := activitySQL, activitySource
	switch {
	case major < 14:
		return engine.Activity{}, fmt.Errorf("database counters need PostgreSQL 14 or later (pg_stat_wal); this server is %d", major)
	case major >= 17:
		query, source = activity17SQL, activity17Source
	}
	a := engine.Activity{Source: source}
	err = db.observer.QueryRow(ctx, query).Scan(&a.Commits, &a.Rollbacks, &a.BlocksRead, &a.BlocksHit,
		&a.TempBytes, &a.WALBytes, &a.Checkpoints)
	return a, err
}

// serverMajor reads the major version from server_version ("15.18 (Debian …)", "17beta1").
func serverMajor(version string) (int, error) {
	end := strings.IndexFunc(version, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(version)
	}
	major, err := strconv.Atoi(version[:end])
	if err != nil {
		return 0, fmt.Errorf("unrecognised server_version %q", version)
	}
	return major, nil
}

// Storage implements engine.Observer: the data directory, and its pg_wal, which a
// separate WAL location (initdb -X) makes a symlink that the caller resolves on the
// server's host.
func (db *DB) Storage(ctx context.Context) (engine.Storage, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	var data string
	if err := db.conn.QueryRow(ctx, storageSQL).Scan(&data); err != nil {
		return engine.Storage{}, fmt.Errorf("read data_directory (needs superuser or pg_read_all_settings): %w", err)
	}
	return engine.Storage{Data: data, WAL: filepath.Join(data, "pg_wal")}, nil
}
