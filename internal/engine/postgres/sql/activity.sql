-- Activity counters for PostgreSQL 14-16, read from another database ($1 is the
-- benchmark's). Commits, rollbacks, blocks and temp bytes are of that database; WAL
-- bytes and checkpoints of the whole server. checkpoints_timed also counts the
-- scheduled checkpoints skipped on an idle server. The buffers each role wrote to
-- data files (handed to the OS, which writes them back later), in bytes, in the order
-- of writesByRole: the checkpointer's, the background writer's, the backends' (client
-- backends and autovacuum workers).
SELECT d.xact_commit, d.xact_rollback, d.blks_read, d.blks_hit, d.temp_bytes,
       w.wal_bytes::bigint, w.wal_sync,
       b.checkpoints_timed + b.checkpoints_req,
       b.buffers_checkpoint * current_setting('block_size')::bigint,
       b.buffers_clean * current_setting('block_size')::bigint,
       b.buffers_backend * current_setting('block_size')::bigint
FROM pg_stat_database d, pg_stat_wal w, pg_stat_bgwriter b
WHERE d.datname = $1
