-- The database's own throughput counters (HammerDB's view): commits + rollbacks of
-- this database, and sum(d_next_o_id), which grows by one per committed New-Order.
-- The server's start time tells a restart (after a crash the statistics start again).
SELECT (SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()),
       (SELECT coalesce(sum(d_next_o_id), 0) FROM district),
       pg_postmaster_start_time()
