-- Activity counters for PostgreSQL 17 and later, where the checkpoint counters moved
-- from pg_stat_bgwriter to pg_stat_checkpointer.
SELECT d.xact_commit, d.xact_rollback, d.blks_read, d.blks_hit, d.temp_bytes,
       w.wal_bytes::bigint,
       c.num_timed + c.num_requested
FROM pg_stat_database d, pg_stat_wal w, pg_stat_checkpointer c
WHERE d.datname = current_database()
