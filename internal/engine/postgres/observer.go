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
	"github.com/storbench/storbench/internal/procrole"
)

var (
	//go:embed sql/activity.sql
	activitySQL string
	//go:embed sql/activity_13.sql
	activity13SQL string
	//go:embed sql/activity_17.sql
	activity17SQL string
	//go:embed sql/activity_18.sql
	activity18SQL string
	//go:embed sql/storage.sql
	storageSQL string
)

const (
	activitySource   = "pg_stat_database (the benchmark database: commits, rollbacks, blocks, temp bytes), pg_stat_wal (whole server: WAL bytes, fsyncs = wal_sync; data file writes not counted), pg_stat_bgwriter checkpoints_timed + checkpoints_req (whole server; timed ones include those skipped when idle); writes by role (whole server): pg_stat_bgwriter buffers_checkpoint (" + procrole.Checkpointer + "), buffers_clean (" + procrole.Bgwriter + "), buffers_backend (" + procrole.Clients + ": backends and autovacuum workers) × block_size, the data-file pages each handed to the OS (the kernel writes them to disk later, once however often they were handed over), and " + procrole.AllWAL + ", pg_stat_wal wal_bytes, the WAL every role generated (the disk writes more: a WAL page again at each flush that ends in it)"
	activity13Source = "pg_stat_database (the benchmark database: commits, rollbacks, blocks, temp bytes), pg_current_wal_lsn (whole server: WAL bytes as the advance of the WAL position, page headers included; PostgreSQL 13 has no pg_stat_wal, so WAL fsyncs are not counted), pg_stat_bgwriter checkpoints_timed + checkpoints_req (whole server); writes by role (whole server): pg_stat_bgwriter buffers_checkpoint (" + procrole.Checkpointer + "), buffers_clean (" + procrole.Bgwriter + "), buffers_backend (" + procrole.Clients + ": backends and autovacuum workers) × block_size, the data-file pages each handed to the OS, and " + procrole.AllWAL + ", the advance of the WAL position"
	activity17Source = "pg_stat_database (the benchmark database: commits, rollbacks, blocks, temp bytes), pg_stat_wal (whole server: WAL bytes, fsyncs = wal_sync; data file writes not counted), pg_stat_checkpointer num_timed + num_requested (whole server; timed ones include those skipped when idle); writes by role (whole server): pg_stat_io writes × op_bytes of relations by backend_type (a relation extended is counted apart, as extends, not here), checkpointer, background writer (" + procrole.Bgwriter + ") and every other process (" + procrole.Clients + "), the data-file pages each handed to the OS, and " + procrole.AllWAL + ", pg_stat_wal wal_bytes, the WAL every role generated"
	activity18Source = "pg_stat_database (the benchmark database: commits, rollbacks, blocks, temp bytes), pg_stat_wal (whole server: WAL bytes), pg_stat_io fsyncs of object wal (whole server: WAL fsyncs; data file writes not counted), pg_stat_checkpointer num_done (whole server: checkpoints performed); writes by role (whole server): pg_stat_io write_bytes of relations by backend_type (a relation extended is counted apart, as extend_bytes, not here), checkpointer, background writer (" + procrole.Bgwriter + ") and every other process (" + procrole.Clients + "), the data-file pages each handed to the OS, and " + procrole.AllWAL + ", pg_stat_wal wal_bytes, the WAL every role generated"
)

// Activity implements engine.Observer. It reads on a connection of its own, so a
// sampler never delays the run's reads of the throughput counters at the window edges.
func (db *DB) Activity(ctx context.Context) (engine.Activity, error) {
	var a engine.Activity
	err := db.observe(ctx, func(conn *pgx.Conn, note string) error {
		major, err := serverMajor(conn.PgConn().ParameterStatus("server_version"))
		if err != nil {
			return err
		}
		query, source := activitySQL, activitySource
		switch {
		case major < 13:
			return fmt.Errorf("database counters need PostgreSQL 13 or later; this server is %d", major)
		case major == 13:
			query, source = activity13SQL, activity13Source
		case major == 17:
			query, source = activity17SQL, activity17Source
		case major >= 18:
			query, source = activity18SQL, activity18Source
		}
		a.Source = source + note
		into := []any{&a.Commits, &a.Rollbacks, &a.BlocksRead, &a.BlocksHit, &a.TempBytes, &a.WALBytes, &a.Fsyncs, &a.Checkpoints}
		a.Writes = []engine.RoleWrite{{Role: procrole.Checkpointer}, {Role: procrole.Bgwriter}, {Role: procrole.Clients}}
		for i := range a.Writes {
			into = append(into, &a.Writes[i].Bytes)
		}
		if err := conn.QueryRow(ctx, query, db.cfg.Database).Scan(into...); err != nil {
			return err
		}
		a.Writes = append(a.Writes, engine.RoleWrite{Role: procrole.AllWAL, Bytes: a.WALBytes})
		return nil
	})
	return a, err
}

// observe runs f on the observer's connection (the sampler's counters and wait
// samples share it, one at a time), connecting it first if need be; note is what
// that connection adds to the benchmark database's counters.
func (db *DB) observe(ctx context.Context, f func(conn *pgx.Conn, note string) error) error {
	db.observerMu.Lock()
	defer db.observerMu.Unlock()
	if db.observer == nil || db.observer.IsClosed() {
		conn, note, err := db.connectObserver(ctx)
		if err != nil {
			return err
		}
		db.observer, db.observerNote = conn, note
	}
	return f(db.observer, db.observerNote)
}

// connectObserver connects to the server's maintenance database "postgres": each of
// the sampler's queries is a transaction, and in the benchmark database it would
// count in the xact_commit that the run's database TPM is computed from. Where that
// database is not reachable it falls back to the benchmark's and says so.
func (db *DB) connectObserver(ctx context.Context) (*pgx.Conn, string, error) {
	cfg := db.cfg.Copy()
	cfg.Database = "postgres"
	if conn, err := pgx.ConnectConfig(ctx, cfg); err == nil {
		return conn, "", nil
	}
	conn, err := pgx.ConnectConfig(ctx, db.cfg)
	return conn, "; the sampler's own queries (one per interval) count among this database's commits", err
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
