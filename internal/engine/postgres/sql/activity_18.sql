-- Activity counters for PostgreSQL 18 and later: pg_stat_wal keeps the WAL bytes but
-- its fsyncs moved to pg_stat_io (object wal, every process), pg_stat_checkpointer
-- counts the checkpoints actually performed (num_done), and pg_stat_io counts the
-- bytes written (write_bytes). Otherwise as activity_17.sql.
SELECT d.xact_commit, d.xact_rollback, d.blks_read, d.blks_hit, d.temp_bytes,
       w.wal_bytes::bigint,
       (SELECT coalesce(sum(fsyncs), 0)::bigint FROM pg_stat_io WHERE object = 'wal'),
       c.num_done,
       io.checkpointer, io.bgwriter, io.backends
FROM pg_stat_database d, pg_stat_wal w, pg_stat_checkpointer c,
     (SELECT coalesce(sum(write_bytes) FILTER (WHERE backend_type = 'checkpointer'), 0)::bigint AS checkpointer,
             coalesce(sum(write_bytes) FILTER (WHERE backend_type = 'background writer'), 0)::bigint AS bgwriter,
             coalesce(sum(write_bytes) FILTER (WHERE backend_type NOT IN ('checkpointer', 'background writer')), 0)::bigint AS backends
      FROM pg_stat_io WHERE object = 'relation') io
WHERE d.datname = $1
