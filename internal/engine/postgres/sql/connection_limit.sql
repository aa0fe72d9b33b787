-- The connections this role may hold: max_connections, the slots reserved from it
-- (superuser_reserved_connections, and reserved_connections from PostgreSQL 16; none
-- for a superuser) and the client connections of others ($1: storbench's own pids).
-- Background processes, autovacuum workers and WAL senders have slots of their own.
SELECT current_setting('max_connections')::int,
       CASE WHEN current_setting('is_superuser') = 'on' THEN 0
            ELSE current_setting('superuser_reserved_connections')::int
                 + coalesce(current_setting('reserved_connections', true)::int, 0) END,
       (SELECT count(*) FROM pg_stat_activity
         WHERE (backend_type = 'client backend' OR backend_type IS NULL)
           AND pid <> ALL ($1::int[]))::int
