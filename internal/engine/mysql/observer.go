package mysql

import (
	"context"
	_ "embed"
	"fmt"
	"path/filepath"

	"github.com/storbench/storbench/internal/engine"
)

var (
	//go:embed sql/activity.sql
	activitySQL string
	//go:embed sql/storage.sql
	storageSQL string
	//go:embed sql/log_bin.sql
	logBinSQL string
)

const activitySource = "SHOW GLOBAL STATUS, whole server (every database and session): " +
	"Com_commit, Com_rollback (COMMIT and ROLLBACK statements; the sampler's SELECTs are neither); " +
	"blocks read Innodb_buffer_pool_reads (pages read from disk), blocks hit Innodb_buffer_pool_read_requests - Innodb_buffer_pool_reads (InnoDB pages, 16 KiB by default); " +
	"WAL bytes Innodb_os_log_written (redo log); fsyncs Innodb_data_fsyncs; data written Innodb_data_written (bytes, data and log files); checkpoints 0 (InnoDB checkpoints continuously and counts none); temp bytes 0 (no byte counter of temporary files)"

// Activity implements engine.Observer: the server's global status counters, read on
// the database's pool.
func (db *DB) Activity(ctx context.Context) (engine.Activity, error) {
	rows, err := db.Pool().QueryContext(ctx, activitySQL)
	if err != nil {
		return engine.Activity{}, err
	}
	defer rows.Close()
	status := map[string]int64{}
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			return engine.Activity{}, err
		}
		status[name] = v
	}
	if err := rows.Err(); err != nil {
		return engine.Activity{}, err
	}
	for _, n := range []string{"Com_commit", "Com_rollback", "Innodb_buffer_pool_reads", "Innodb_buffer_pool_read_requests", "Innodb_os_log_written",
		"Innodb_data_fsyncs", "Innodb_data_written"} {
		if _, ok := status[n]; !ok {
			return engine.Activity{}, fmt.Errorf("SHOW GLOBAL STATUS has no %s", n)
		}
	}
	reads := status["Innodb_buffer_pool_reads"]
	return engine.Activity{
		Commits: status["Com_commit"], Rollbacks: status["Com_rollback"],
		BlocksRead: reads, BlocksHit: status["Innodb_buffer_pool_read_requests"] - reads,
		WALBytes: status["Innodb_os_log_written"],
		Fsyncs:   status["Innodb_data_fsyncs"], DataWriteBytes: status["Innodb_data_written"],
		Source: activitySource,
	}, nil
}

// Storage implements engine.Observer: the data directory and InnoDB's redo log
// directory ("./", the default, is the data directory).
func (db *DB) Storage(ctx context.Context) (engine.Storage, error) {
	var data, log string
	if err := db.Pool().QueryRowContext(ctx, storageSQL).Scan(&data, &log); err != nil {
		return engine.Storage{}, fmt.Errorf("read @@datadir: %w", err)
	}
	data = filepath.Clean(data)
	if !filepath.IsAbs(log) {
		log = filepath.Join(data, log)
	}
	return engine.Storage{Data: data, WAL: filepath.Clean(log)}, nil
}

// Footprint implements engine.FootprintReader: a server without a binary log writes
// no log that grows with the build (its redo log has a fixed size).
func (db *DB) Footprint(ctx context.Context) (engine.Footprint, error) {
	var binlog bool
	if err := db.Pool().QueryRowContext(ctx, logBinSQL).Scan(&binlog); err != nil {
		return engine.Footprint{}, fmt.Errorf("read @@log_bin: %w", err)
	}
	f := footprint
	if !binlog {
		f.LogFixed, f.LogPerWarehouse = 0, 0
	}
	return f, nil
}
