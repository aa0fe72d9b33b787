-- Activity counters for PostgreSQL 17 and later, where the checkpoint counters moved
-- to pg_stat_checkpointer; num_done counts the checkpoints actually performed.
SELECT d.xact_commit, d.xact_rollback, d.blks_read, d.blks_hit, d.temp_bytes,
       w.wal_bytes::bigint, w.wal_sync,
       c.num_done
FROM pg_stat_database d, pg_stat_wal w, pg_stat_checkpointer c
WHERE d.datname = $1
