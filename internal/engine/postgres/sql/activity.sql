-- Activity counters for PostgreSQL 14-16. Commits, rollbacks, blocks and temp bytes
-- are of this database; WAL bytes and checkpoints are of the whole server.
SELECT d.xact_commit, d.xact_rollback, d.blks_read, d.blks_hit, d.temp_bytes,
       w.wal_bytes::bigint,
       b.checkpoints_timed + b.checkpoints_req
FROM pg_stat_database d, pg_stat_wal w, pg_stat_bgwriter b
WHERE d.datname = current_database()
