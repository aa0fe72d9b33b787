-- Activity counters for PostgreSQL 17, where the checkpoint counters moved to
-- pg_stat_checkpointer (num_timed also counts the scheduled checkpoints skipped on
-- an idle server) and the buffers each role wrote to pg_stat_io: writes × op_bytes of
-- relations (not temporary ones), in the order of writesByRole: the checkpointer's,
-- the background writer's, every other process's (client backends, autovacuum
-- workers… as buffers_backend counted them before). Otherwise as activity.sql.
SELECT d.xact_commit, d.xact_rollback, d.blks_read, d.blks_hit, d.temp_bytes,
       w.wal_bytes::bigint, w.wal_sync,
       c.num_timed + c.num_requested,
       io.checkpointer, io.bgwriter, io.backends
FROM pg_stat_database d, pg_stat_wal w, pg_stat_checkpointer c,
     (SELECT coalesce(sum(writes * op_bytes) FILTER (WHERE backend_type = 'checkpointer'), 0)::bigint AS checkpointer,
             coalesce(sum(writes * op_bytes) FILTER (WHERE backend_type = 'background writer'), 0)::bigint AS bgwriter,
             coalesce(sum(writes * op_bytes) FILTER (WHERE backend_type NOT IN ('checkpointer', 'background writer')), 0)::bigint AS backends
      FROM pg_stat_io WHERE object = 'relation') io
WHERE d.datname = $1
