-- Activity counters for PostgreSQL 13, which has no pg_stat_wal: the WAL is the
-- advance of the server's WAL position (pg_current_wal_lsn; record bytes with their
-- page headers and segment-switch padding, so a little more than pg_stat_wal's
-- wal_bytes would say; none on a standby, which generates none), and the WAL
-- fsyncs are not counted. Otherwise as activity.sql.
SELECT d.xact_commit, d.xact_rollback, d.blks_read, d.blks_hit, d.temp_bytes,
       CASE WHEN pg_is_in_recovery() THEN 0 ELSE pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint END, 0,
       b.checkpoints_timed + b.checkpoints_req,
       b.buffers_checkpoint * current_setting('block_size')::bigint,
       b.buffers_clean * current_setting('block_size')::bigint,
       b.buffers_backend * current_setting('block_size')::bigint
FROM pg_stat_database d, pg_stat_bgwriter b
WHERE d.datname = $1
